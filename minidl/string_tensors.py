"""String data in a model: what an Input(dtype="string") holds, on the host only.

minidl's backends hold numbers. A model's string input is therefore never uploaded: its
batch stays a numpy array of str (or bytes / object) on the host, the host preprocessing
layers that take strings (StringLookup, Hashing, TextVectorization) turn it into numbers
there, and only their numeric output goes on to the backend (models/graph.py runs them in
the graph's order). Inside a layer's `call` (a custom layer, or a model called in one) the
same batch is a StringTensor: those layers take it and give an ordinary Tensor; any other
op refuses it with a message saying so.
"""

import numpy as np

STRING = "string"

_STRING_DTYPES = ("string", "str", "tf.string")


def is_string_dtype(dtype):
    """Whether a dtype argument names Keras's string dtype ("string", str)."""
    if dtype is str or dtype is bytes:
        return True
    return isinstance(dtype, str) and dtype in _STRING_DTYPES


def is_string_array(value):
    """Whether `value` is a host array of strings (str, bytes or Python objects)."""
    return isinstance(value, np.ndarray) and value.dtype.kind in "USO"


def string_batch(value, argument):
    """A batch given for a string input as a numpy array of strings, or a clear error."""
    array = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if array.dtype.kind in "US":
        return array
    if array.dtype.kind == "O":
        bad = next((v for v in array.ravel().tolist() if not isinstance(v, (str, bytes))), None)
        if bad is not None:
            raise TypeError(f"{argument}: a string input takes str or bytes values, got a "
                            f"{type(bad).__name__} ({bad!r:.40})")
        return array
    raise TypeError(f"{argument}: the input has dtype 'string'; expected an array of str, got "
                    f"dtype {array.dtype}")


class StringTensor:
    """A batch of strings inside a layer's call (see the module docstring). `probe`: a
    stand-in while the call's output shape is traced (its values mean nothing)."""

    dtype = STRING

    def __init__(self, value, probe=False):
        self.value = value
        self.probe = probe

    @property
    def shape(self):
        return tuple(self.value.shape)

    def numpy(self):
        return self.value

    def __repr__(self):
        return f"<minidl StringTensor shape={self.shape}>"


def refuse(what, where):
    """The error for string data reaching a computation on numbers."""
    return TypeError(f"{where}: {what} is a string tensor; strings stay on the host, and only "
                     "the string preprocessing layers (StringLookup, Hashing, TextVectorization) "
                     "take them. Turn the strings into numbers with one of those first")
