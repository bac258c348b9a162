"""The base of the structured-data and text preprocessing layers, which run on the host.

Keras runs CategoryEncoding, Discretization, Hashing, HashedCrossing, IntegerLookup,
StringLookup and TextVectorization as data preprocessing: on numpy input, in a tf.data
pipeline, before the model. Their inputs are strings and integers and their state is a
vocabulary or a list of bin boundaries, none of which is a float32 tensor, the one kind of
value minidl's backends hold. So in minidl they are host layers:

    layer(np.array(["the cat sat"]))  -> a numpy array (int64 indices, or float32 encodings)
    layer.adapt(data)                 -> learns the vocabulary / boundaries from numpy data
    dataset.map(layer)-style use: call the layer on each batch before model.fit

They have no weights and never compute on a backend; get_config holds everything they
learned (vocabulary, idf_weights, bin_boundaries), as Keras's configs do, so from_config
rebuilds them whole.

StringLookup, IntegerLookup, Hashing and TextVectorization (`in_models`) may also sit inside
a functional model, as with Keras's TensorFlow backend: called on a model's tensor they make a
call node whose forward brings the batch to the host (a string input's batch is there
already: string_tensors.py), computes as above and uploads the numeric result, which goes
on through the graph as usual (no gradient flows back through them). Inside a layer's call
they take a StringTensor or a Tensor and give a Tensor (int32 indices, float32 encodings).
Their per-sample output shapes in a model are sample_output_shape's (compute_output_shape
keeps Keras's batch-axis form for user code). The other host layers are refused with a
TypeError that says to apply them to the data instead.
"""

import numpy as np

from .. import autodiff, ops
from ..autodiff import Tensor
from ..string_tensors import STRING, StringTensor, is_string_array
from .base import Layer
from .nodes import KerasTensor, format_shape


class HostPreprocessingLayer(Layer):
    """A preprocessing layer computed with numpy on the host (see the module docstring)."""

    # dtype= is the output's dtype (int64 indices, ...), not a float policy (LayerMeta)
    _dtype_argument = True
    in_models = False      # whether a model's tensors may go through it (module docstring)
    string_inputs = False  # whether it takes strings
    needs_strings = False  # whether it takes strings only

    def __init__(self, name=None, **kwargs):
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)   # outputs have the dtype Keras gives them (int64, float32)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                            f"{', '.join(sorted(kwargs))}")
        super().__init__(name=name, trainable=False)

    def __call__(self, inputs, *args, **kwargs):
        items = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        symbolic = any(isinstance(item, KerasTensor) for item in items)
        tensors = any(isinstance(item, (Tensor, StringTensor)) for item in items)
        if (symbolic or tensors) and not self.in_models:
            raise TypeError(
                f"{self.describe()} is a preprocessing layer that runs on the host (strings, "
                "vocabularies): it cannot sit inside a minidl model. Apply it to the data "
                "before fit (x = layer(x), or in your batch pipeline) and feed the model its "
                "output (int64 indices or float32 encodings)")
        if symbolic:
            for item in items:
                if self.needs_strings and getattr(item, "dtype", None) != STRING:
                    raise TypeError(f"{self.describe()} takes strings; its input {item.name!r} "
                                    f"{format_shape(item.sample_shape)} has dtype {item.dtype!r} "
                                    "(give the Input dtype='string')")
            return Layer.__call__(self, inputs, training=kwargs.get("training"))
        if tensors:
            return self.call_on_tensor(inputs)
        kwargs.pop("training", None)
        return self.compute(inputs, *args, **kwargs)

    def takes_strings(self):
        return self.string_inputs

    def compute(self, inputs):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}

    def check_choice(self, argument, value, allowed):
        if value not in allowed:
            raise ValueError(f"{type(self).__name__}: {argument} must be one of "
                             f"{', '.join(repr(a) for a in allowed)}; received {argument}={value!r}")


class InModels:
    """Mixed into the host layers that may sit inside a model (see the module docstring)."""

    in_models = True

    def sample_output_shape(self, input_shape):
        """The output shape of one sample of `input_shape` (no batch axis), in a model."""
        raise NotImplementedError

    def output_kind(self):
        """What compute gives: "int" (indices), "float" (encodings) or STRING (tokens)."""
        return "float"

    def node_output_dtypes(self, tensors):
        return [{"int": "int64", "float": "float32", STRING: STRING}[self.output_kind()]]

    def build_once(self, input_shape):
        # no weights: any call's shape is fine (each node has its own output shape)
        self.input_shape = input_shape
        self.output_shape = tuple(self.sample_output_shape(input_shape))
        self.built = True

    def concrete_output_shape(self, input_shape):
        return tuple(self.sample_output_shape(input_shape))

    def from_host(self, array):
        """The batch as compute takes it: numbers come from the backend as float32."""
        return array

    def forward(self, call, x, training):
        """A model's batch: strings stay as they are, numbers come to the host; the numeric
        result is uploaded (the graph's tensors are float32)."""
        host = x if is_string_array(x) else self.from_host(self.backend.to_numpy(x))
        out = self.compute(host)
        if self.output_kind() == STRING:
            return out
        buf = call.output_buffer("host_output", out.shape)
        self.backend.copy_from_host(buf, np.ascontiguousarray(out, dtype=np.float32))
        return buf

    def backward(self, call, dout):
        return None   # indices and encodings of tokens have no gradient

    def backward_reads_input(self):
        return False

    def backward_reads_output(self):
        return False

    def call_on_tensor(self, x):
        """Inside a layer's call: a StringTensor or Tensor in, a Tensor out (int32 indices,
        float32 encodings; a StringTensor of tokens). While a call's shape is traced the
        values are stand-ins: zeros of the output's shape."""
        shape = tuple(x.shape)
        kind = self.output_kind()
        if isinstance(x, StringTensor) and not self.string_inputs:
            raise TypeError(f"{self.describe()} expects numbers, got a string tensor of shape "
                            f"{shape}")
        if autodiff.probing() or getattr(x, "probe", False):
            out_shape = shape[:1] + tuple(self.sample_output_shape(shape[1:]))
            if kind == STRING:
                return StringTensor(np.full(out_shape, "", dtype=object), probe=True)
            return ops.zeros(out_shape, "int32" if kind == "int" else "float32")
        host = x.value if isinstance(x, StringTensor) else self.from_host(x.numpy())
        out = self.compute(host)
        if kind == STRING:
            return StringTensor(out)
        return ops.convert_to_tensor(out, "int32" if kind == "int" else "float32")



def encoded_sample_shape(input_shape, depth, mode, owner):
    """The per-sample output shape of encoding per-sample indices of `input_shape` in a model:
    one_hot maps (k,) to (k, depth) and (1,) or () to (depth,); multi_hot and count map (k,)
    to (depth,) (the batch is their rank-2 input, as encode_categorical reduces it)."""
    input_shape = tuple(input_shape)
    if mode == "int":
        return input_shape
    if mode == "one_hot":
        if input_shape and input_shape[-1] == 1:
            return input_shape[:-1] + (depth,)
        return input_shape + (depth,)
    if len(input_shape) != 1:
        raise ValueError(f"{owner} with output_mode={mode!r} encodes samples of shape (k,) in a "
                         f"model, got samples of shape {format_shape(input_shape)}")
    return (depth,)


def as_array(inputs, owner):
    """numpy view of list / tuple / array / scalar input."""
    try:
        return np.asarray(inputs)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{owner}: cannot make an array of the input ({exc}); pass a numpy "
                         "array or a (nested) list of equal-length rows") from None


def encode_categorical(indices, output_mode, depth, dtype="float32", count_weights=None):
    """Keras's encode_categorical_inputs on host arrays of int indices (-1: nothing).

    one_hot: a trailing axis of size 1 is replaced by `depth`, otherwise `depth` is added;
    multi_hot and count: the last axis of a rank 1 or 2 input is reduced, as TensorFlow's
    bincount path does. Indices outside [0, depth) (a masked token) count nowhere.
    """
    indices = np.asarray(indices, dtype=np.int64)
    if output_mode == "int":
        return indices
    if indices.ndim == 0:
        indices = indices[None]
    if output_mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = indices[..., 0]
        return _one_hot(indices, depth, dtype)
    if indices.ndim > 2:
        raise ValueError(f"output_mode={output_mode!r} encodes inputs of rank 1 or 2 (a sample, "
                         f"or a batch of samples); got indices of shape {indices.shape}")
    rows = indices.reshape(-1, indices.shape[-1]) if indices.ndim == 2 else indices[None]
    weights = None if count_weights is None else np.asarray(count_weights).reshape(rows.shape)
    out_dtype = weights.dtype if (weights is not None and output_mode == "count") else dtype
    out = np.zeros((rows.shape[0], depth), dtype=out_dtype)
    valid = (rows >= 0) & (rows < depth)
    row_ids = np.nonzero(valid)[0]
    if output_mode == "multi_hot":
        out[row_ids, rows[valid]] = 1
    else:
        np.add.at(out, (row_ids, rows[valid]), 1 if weights is None else weights[valid])
    return out if indices.ndim == 2 else out[0]


def _one_hot(indices, depth, dtype):
    out = np.zeros(indices.shape + (depth,), dtype=dtype)
    valid = (indices >= 0) & (indices < depth)
    out[valid, indices[valid]] = 1
    return out
