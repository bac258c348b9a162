"""The base of the structured-data and text preprocessing layers, which run on the host.

Keras runs CategoryEncoding, Discretization, Hashing, HashedCrossing, IntegerLookup,
StringLookup and TextVectorization as data preprocessing: on numpy input, in a tf.data
pipeline, before the model. Their inputs are strings and integers and their state is a
vocabulary or a list of bin boundaries, none of which is a float32 tensor, the one kind of
value minidl's backends hold. So in minidl they are host layers:

    layer(np.array(["the cat sat"]))  -> a numpy array (int64 indices, or float32 encodings)
    layer.adapt(data)                 -> learns the vocabulary / boundaries from numpy data
    dataset.map(layer)-style use: call the layer on each batch before model.fit

and calling one on a model's symbolic tensor (inside a functional model) is refused with a
TypeError that says to apply it to the data instead. They have no weights, no forward or
backward and never touch a backend; get_config holds everything they learned (vocabulary,
idf_weights, bin_boundaries), as Keras's configs do, so from_config rebuilds them whole.
"""

import numpy as np

from .base import Layer
from .nodes import KerasTensor


class HostPreprocessingLayer(Layer):
    """A preprocessing layer computed with numpy on the host (see the module docstring)."""

    # dtype= is the output's dtype (int64 indices, ...), not a float policy (LayerMeta)
    _dtype_argument = True

    def __init__(self, name=None, **kwargs):
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)   # outputs have the dtype Keras gives them (int64, float32)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                            f"{', '.join(sorted(kwargs))}")
        super().__init__(name=name, trainable=False)

    def __call__(self, inputs, *args, **kwargs):
        for item in inputs if isinstance(inputs, (list, tuple)) else [inputs]:
            if isinstance(item, KerasTensor) or type(item).__name__ == "Tensor":
                raise TypeError(
                    f"{self.describe()} is a preprocessing layer that runs on the host (strings, "
                    "vocabularies): it cannot sit inside a minidl model. Apply it to the data "
                    "before fit (x = layer(x), or in your batch pipeline) and feed the model its "
                    "output (int64 indices or float32 encodings)")
        kwargs.pop("training", None)
        return self.compute(inputs, *args, **kwargs)

    def compute(self, inputs):
        raise NotImplementedError

    def forward(self, call, inputs, training):
        raise TypeError(f"{self.describe()} runs on the host only; it has no backend forward")

    def backward(self, call, dout):
        raise TypeError(f"{self.describe()} runs on the host only; it has no backward")

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}

    def check_choice(self, argument, value, allowed):
        if value not in allowed:
            raise ValueError(f"{type(self).__name__}: {argument} must be one of "
                             f"{', '.join(repr(a) for a in allowed)}; received {argument}={value!r}")


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
