"""minidl.ops called on a functional model's symbolic tensors: each call becomes a node of the
graph, as Keras 3 wraps the op in an Operation.

`ops.reshape(x, (-1, 4, 2, 4))`, `1e-9 + x`, `x[:, 0]` with x a KerasTensor record an OpNode:
a layer without weights whose call runs the same op on the real tensors, with the call's other
arguments (numbers, shapes, axes, arrays) kept as they were given. It runs like any layer
written with minidl.ops (custom_call.py): its output shape is found by tracing the op on
symbolic tensors, and in training the op's own gradient rule, recorded on the call's tape,
takes the gradient back to the op's inputs. The summary shows it as Keras does, named after
the op ("reshape", "add_1") with the op's class name as its type ("Reshape", "GetItem").

The op's arguments are saved in the layer's config (JSON: tensors by position, tuples, slices
and Ellipsis tagged, arrays as nested lists); an argument of another kind (a function given to
ops.cond) cannot be saved, and get_config says which op node holds it.
"""

import numpy as np

from .. import ops
from ..autodiff import Tensor, Variable
from ..ops import symbolic_dispatch
from .base import Layer
from .nodes import KerasTensor, format_shape


class _Slot:
    """Where the i-th symbolic input goes among an op's arguments."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _template(value, found):
    """value with each KerasTensor replaced by a _Slot (found: the distinct tensors, in order)."""
    if isinstance(value, KerasTensor):
        for i, t in enumerate(found):
            if t is value:
                return _Slot(i)
        found.append(value)
        return _Slot(len(found) - 1)
    if isinstance(value, (list, tuple)):
        items = [_template(v, found) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _template(v, found) for k, v in value.items()}
    return value


def _fill(value, tensors):
    """The template with each _Slot replaced by its tensor."""
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, (list, tuple)):
        items = [_fill(v, tensors) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _fill(v, tensors) for k, v in value.items()}
    return value


def _resolve(op):
    """The function of minidl.ops named `op` ("reshape", "image.resize", "linalg.norm"), or
    a keras.activations function ("activations.sigmoid")."""
    from .. import activations
    if op.startswith("activations.") and op[len("activations."):] in activations.FUNCTIONS:
        return symbolic_dispatch.raw(activations.FUNCTIONS[op[len("activations."):]])
    target = ops
    for part in op.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ValueError(f"OpNode: minidl.ops has no function {op!r}")
    if not callable(target):
        raise ValueError(f"OpNode: minidl.ops.{op} is not a function")
    return symbolic_dispatch.raw(target)


def _qualified_name(fn):
    """How a file names fn: its name in minidl.ops, or its namespace's ("image.resize")."""
    name = fn.__name__
    if symbolic_dispatch.raw(getattr(ops, name, None)) is fn:
        return name
    for space in ("image", "nn", "linalg", "math", "numpy", "core"):
        if symbolic_dispatch.raw(getattr(getattr(ops, space), name, None)) is fn:
            return f"{space}.{name}"
    from .. import activations
    if symbolic_dispatch.raw(activations.FUNCTIONS.get(name)) is fn:
        return f"activations.{name}"
    return None


class OpNode(Layer):
    """One call of a minidl.ops function `op` inside a functional model (see the module doc).
    args / kwargs: the call's arguments, symbolic tensors replaced by their input position."""

    def __init__(self, op, args=(), kwargs=None, name=None, **base):
        super().__init__(name=name or op.split(".")[-1], **base)
        self.op = op
        self.function = _resolve(op) if isinstance(op, str) else op
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})

    @property
    def summary_type(self):
        """Keras's Operation class of the op: 'get_item' -> 'GetItem'."""
        base = symbolic_dispatch.KERAS_NAMES.get(self.function.__name__, self.function.__name__)
        return "".join(part.capitalize() for part in base.split("_"))

    def takes_strings(self):
        return False   # the ops compute on numbers

    def accept_node_inputs(self, count):
        """A model file feeds the op its distinct symbolic tensors (a list when several)."""
        self.multiple_inputs = count > 1

    def call(self, inputs):
        tensors = inputs if self.multiple_inputs else [inputs]
        return self.function(*_fill(self.args, tensors), **_fill(self.kwargs, tensors))

    def get_config(self):
        op = _qualified_name(self.function)
        if op is None:
            raise ValueError(f"{self.describe()}: the op {self.function.__name__!r} is not a "
                             "function of minidl.ops, so the node cannot be saved")
        where = f"{self.describe()} (ops.{op})"
        return dict(super().get_config(), op=op, args=_encode(list(self.args), where),
                    kwargs=_encode(self.kwargs, where))

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        config["args"] = _decode(config.get("args", []))
        config["kwargs"] = _decode(config.get("kwargs", {}))
        return cls(**config)


def _encode(value, where):
    """An op argument as JSON: tensors by position, tuples / slices / Ellipsis / arrays tagged."""
    if isinstance(value, _Slot):
        return {"__tensor__": value.index}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, where) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _encode(v, where) for k, v in value.items()}}
    if isinstance(value, slice):
        return {"__slice__": [_encode(v, where) for v in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if isinstance(value, (np.ndarray, Tensor, Variable)):
        array = ops.convert_to_numpy(value) if not isinstance(value, np.ndarray) else value
        return {"__array__": array.tolist(), "dtype": str(array.dtype)}
    raise ValueError(f"{where} cannot be saved: an argument of type {type(value).__name__} "
                     f"({value!r:.60}) has no file form; wrap the computation in a registered "
                     "custom layer")


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tensor__" in value:
        return _Slot(int(value["__tensor__"]))
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {k: _decode(v) for k, v in value["__dict__"].items()}
    if "__slice__" in value:
        return slice(*[_decode(v) for v in value["__slice__"]])
    if "__ellipsis__" in value:
        return Ellipsis
    if "__array__" in value:
        return np.asarray(value["__array__"], dtype=value["dtype"])
    raise ValueError(f"OpNode: unknown argument form {value!r:.100}")


def record_op(name, function, args, kwargs):
    """function(*args, **kwargs) with symbolic tensors among its arguments: a new OpNode called
    on them; returns its output tensor(s) (a list for an op of several outputs, as Keras)."""
    from ..naming import auto_name
    shapes = ", ".join(_shape_of(a) for a in _tensor_arguments(list(args) + list(kwargs.values())))
    found = []
    args, kwargs = _template(tuple(args), found), _template(dict(kwargs), found)
    layer = OpNode(function, args, kwargs, name=auto_name(name))
    try:
        out = layer(found if len(found) > 1 else found[0])
    except (ValueError, TypeError, IndexError, ArithmeticError) as error:
        raise ValueError(f"ops.{name} on tensors of shapes [{shapes}]: {error} (traced on a "
                         "batch of one sample, unknown dimensions as 32 and 45)") from error
    _set_dtypes(layer, found, out)
    return out


def _tensor_arguments(values):
    """The tensors among a call's arguments, in order (those inside lists and tuples too)."""
    out = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(_tensor_arguments(value))
        elif isinstance(value, (KerasTensor, np.ndarray, Tensor, Variable)):
            out.append(value)
    return out


def _shape_of(value):
    """A symbolic tensor's shape with its batch axis (None), an array's as it is."""
    if isinstance(value, KerasTensor):
        return format_shape(value.sample_shape)
    return str(tuple(value.shape))


def _set_dtypes(layer, found, out):
    """The output tensors' dtypes as the op gives them (float32 or int32: minidl's tensors have
    no other dtype, and comparisons give float32 0/1 where Keras says bool)."""
    from .custom_call import traced_dtypes
    outs = out if isinstance(out, list) else [out]
    dtypes = traced_dtypes(layer, [t.sample_shape for t in found],
                           [getattr(t, "dtype", "float32") for t in found])
    for t, dtype in zip(outs, dtypes or []):
        t.dtype = dtype
