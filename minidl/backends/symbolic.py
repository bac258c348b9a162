"""The symbolic backend: tensors with a shape and a dtype but no values.

A custom layer's output shape (a Layer subclass written with `call`, a Lambda) is found by
running its call once on symbolic inputs, as Keras traces a call on KerasTensors: minidl.ops
computes every result's shape in Python before it asks the backend to fill the result, so a
backend whose ops do nothing gives the shapes without computing anything (no weights drawn,
no memory the size of a batch). The built-in layers called inside run their forward on it
the same way.

A call whose shape depends on values (ops.nonzero, a Python `if` on a tensor, converting a
tensor to numpy) needs the values: reading a symbolic tensor raises SymbolicValueNeeded and
the caller (layers/custom_call.py) runs the call on the layer's backend instead.
"""

import math

import numpy as np

from .base import Backend


class SymbolicValueNeeded(RuntimeError):
    """A symbolic tensor's values were asked for; the shape needs a real run."""


class SymbolicTensor:
    """A tensor of `shape` and `dtype` without values."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype="float32"):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(np.int32 if np.dtype(dtype).kind in "iub" else np.float32)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __array__(self, dtype=None, copy=None):
        raise SymbolicValueNeeded("the values of a symbolic tensor were read")

    def __repr__(self):
        return f"<SymbolicTensor shape={self.shape} dtype={self.dtype}>"


class SymbolicBackend(Backend):
    """Every op of the contract, doing nothing but keep shapes (see the module doc)."""

    name = "symbolic"

    def empty(self, shape, dtype="float32"):
        return SymbolicTensor(shape, dtype)

    zeros = empty

    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        return SymbolicTensor(array.shape, array.dtype if dtype is None else dtype)

    def to_numpy(self, x):
        raise SymbolicValueNeeded("a symbolic tensor was converted to numpy")

    def shape(self, x):
        return tuple(x.shape)

    def reshape(self, x, shape):
        shape = tuple(shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(x.size // max(known, 1) if d == -1 else d for d in shape)
        if math.prod(shape) != x.size:
            raise ValueError(f"reshape: cannot view x of shape {x.shape} as {shape}")
        return SymbolicTensor(shape, x.dtype)

    def view(self, x, shape):
        if math.prod(shape) > x.size:
            raise ValueError(f"view: x of shape {x.shape} holds fewer than {math.prod(shape)} "
                             "elements")
        return SymbolicTensor(shape, x.dtype)


def _does_nothing(self, *args, **kwargs):
    """An op on symbolic tensors: its outputs were allocated with their shapes already."""
    return None


def _shape_only(method):
    """A base method that computes in Python (a window plan): kept when it works on shapes,
    nothing when the base leaves it to the backends."""
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except NotImplementedError:
            return None
    run.__name__ = method.__name__
    return run


for _name, _method in list(vars(Backend).items()):
    if _name.startswith("__") or not callable(_method) or _name in vars(SymbolicBackend):
        continue
    setattr(SymbolicBackend, _name, _shape_only(_method))

# The executable sections of the contract (contract/, Backend's base classes): their public ops
# run as they are, checking the symbolic shapes, and call the implementation `_op`, which has
# nothing to compute here. A new plan is kept as the contract made it.
for _section in Backend.__mro__[1:]:
    if _section.__module__.startswith(f"{__package__}.contract."):
        for _name, _method in list(vars(_section).items()):
            if not _name.startswith("_") and callable(_method) and not hasattr(SymbolicBackend, "_" + _name):
                setattr(SymbolicBackend, "_" + _name, _does_nothing)
SymbolicBackend._conv2d_plan = lambda self, plan: plan
del _name, _method, _section
