"""minidl.ops on a functional model's symbolic tensors (KerasTensors), as Keras 3.

Every public function of minidl.ops and of its Keras namespaces (ops.numpy, .nn, .linalg,
.math, .image, .core) is wrapped once, at import, by `symbolic_aware`: called on arrays or
Tensors it is the function itself; called with a symbolic tensor among its arguments (nested
in lists, tuples or dicts too: ops.concatenate([a, b])) it hands the call to the handler that
minidl.layers registers, which records the op as a node of the model graph (layers/op_nodes.py)
and returns its symbolic output(s). The ops package never imports the layers: the handler is
registered the way Tensor's operators are (autodiff.register_operators).
"""

import functools

_SYMBOLIC = {"types": (), "handler": None}
_WRAPPED = {}   # id(raw function) -> its wrapper: ops.reshape is ops.numpy.reshape

# Functions that answer a question about a tensor rather than compute one: never graph nodes.
# (ops.shape and ops.dtype on a symbolic tensor read its shape and dtype, as Keras's do.)
NOT_OPS = frozenset({"is_tensor", "convert_to_numpy", "custom_gradient", "shape", "dtype"})

# Keras's Operation class (and so node name) where it differs from the function's name.
KERAS_NAMES = {"getitem": "get_item", "abs": "absolute"}


def register_symbolic(types, handler):
    """Called once by minidl.layers: `types` are the symbolic tensor classes, handler(name, fn,
    args, kwargs) records fn(*args, **kwargs) as a graph node and returns its outputs."""
    _SYMBOLIC["types"] = tuple(types)
    _SYMBOLIC["handler"] = handler


def holds_symbolic(value):
    """Whether value is a symbolic tensor or a list / tuple / dict holding one."""
    types = _SYMBOLIC["types"]
    if isinstance(value, types):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_symbolic(v) for v in value)
    if isinstance(value, dict):
        return any(holds_symbolic(v) for v in value.values())
    return False


def symbolic_aware(fn, name=None):
    """fn, recorded as a graph node when a symbolic tensor is among its arguments."""
    if getattr(fn, "_raw_op", None) is not None:
        return fn
    if id(fn) in _WRAPPED:
        return _WRAPPED[id(fn)]
    op_name = KERAS_NAMES.get(name or fn.__name__, name or fn.__name__)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if _SYMBOLIC["types"] and (holds_symbolic(args) or holds_symbolic(kwargs)):
            return _SYMBOLIC["handler"](op_name, fn, args, kwargs)
        return fn(*args, **kwargs)
    op._raw_op = fn
    _WRAPPED[id(fn)] = op
    return op


def symbolic_question(fn):
    """ops.shape / ops.dtype: on a symbolic tensor, its shape (batch axis None) or dtype."""
    if getattr(fn, "_raw_op", None) is not None:
        return fn
    if id(fn) in _WRAPPED:
        return _WRAPPED[id(fn)]

    @functools.wraps(fn)
    def ask(x, *args, **kwargs):
        if _SYMBOLIC["types"] and isinstance(x, _SYMBOLIC["types"]):
            return x.shape if fn.__name__ == "shape" else x.dtype
        return fn(x, *args, **kwargs)
    ask._raw_op = fn
    _WRAPPED[id(fn)] = ask
    return ask


def install(module, names):
    """Wrap module's functions `names` in place (those it has; idempotent)."""
    import types
    for name in names:
        fn = vars(module).get(name)
        if not isinstance(fn, types.FunctionType) or name.startswith("_"):
            continue
        if name in ("shape", "dtype"):
            setattr(module, name, symbolic_question(fn))
        elif name not in NOT_OPS:
            setattr(module, name, symbolic_aware(fn, name))


def raw(fn):
    """The function a wrapper calls (fn itself when it is not wrapped)."""
    return getattr(fn, "_raw_op", None) or fn
