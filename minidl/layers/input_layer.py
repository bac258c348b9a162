"""InputLayer and Input: a model's entry points (keras.Input), one InputLayer per model input,
its output the symbolic tensor the model's layers are called on."""

import numpy as np

from ..naming import auto_name
from ..string_tensors import STRING, is_string_dtype
from .base import Layer, _is_float32, _is_integer
from .input_arguments import sample_shape
from .nodes import Node


class InputLayer(Layer):
    """The graph's entry point; Input(shape) returns its output tensor."""

    _shape_argument = "shape"   # input_shape= / batch_input_shape= land here (LayerMeta)
    _dtype_argument = True      # dtype= is the input's dtype, not a policy (LayerMeta)

    def __init__(self, shape=None, name=None, dtype="float32", batch_size=None, batch_shape=None):
        if shape is None and batch_shape is not None:
            shape = tuple(batch_shape)[1:]  # minidl's batch axis is free: batch_size too
        if shape is None:
            raise ValueError("Input: shape (without the batch axis) is required, e.g. "
                             "Input(shape=(32, 32, 3))")
        if dtype is not None and not (_is_float32(dtype) or _is_integer(dtype)
                                      or is_string_dtype(dtype)):
            raise TypeError(f"Input: dtype must be 'float32', an integer dtype such as 'int32' "
                            f"(indices for an Embedding), 'string' (for StringLookup, Hashing "
                            f"or TextVectorization) or None; got {dtype!r}")
        # integer inputs are fed as float32 too (exact up to 2**24); the dtype is kept for Keras.
        # string inputs stay on the host (string_tensors.py)
        self.dtype = ("float32" if dtype is None else STRING if is_string_dtype(dtype)
                      else np.dtype(dtype).name)
        super().__init__(name=name or auto_name("input_layer"))
        # None: a dimension known only from the data (each batch resolves it)
        # shape=(): one scalar per sample (a column of strings or of ids), as Keras allows
        scalar = not isinstance(shape, (str, bytes)) and hasattr(shape, "__len__") and len(shape) == 0
        self.shape = () if scalar else sample_shape(shape, "shape (without the batch axis)", "Input")
        self.build_once(self.shape)
        Node(self, [], False).outputs[0].dtype = self.dtype

    def get_config(self):
        config = {"shape": list(self.shape), "name": self.name}
        if self.dtype != "float32":
            config["dtype"] = self.dtype
        return config

    def forward(self, call, inputs, training):
        return inputs

    def backward(self, call, dout):
        return None



def Input(shape=None, batch_size=None, dtype="float32", batch_shape=None, name=None):
    """A symbolic model input of `shape` (without the batch axis), as keras.Input."""
    return InputLayer(shape, name=name, dtype=dtype, batch_size=batch_size,
                      batch_shape=batch_shape).output
