"""Conversion, the elementwise ops (unary, broadcasting binary, where, cast) and their gradients.

Every op runs at once on the backend of its tensor arguments (the backend's unary / binary /
where / reduce / strided ops) and, while a tape records (minidl.autodiff), records its
gradient rule when one of its inputs needs a gradient.
"""

import math

import numpy as np

from .. import autodiff
from ..autodiff import Tensor, Variable
from ..backends import get_backend
from ..string_tensors import StringTensor, refuse


# --------------------------------------------------------------- conversion
def default_backend():
    return autodiff.current_backend() or get_backend()


def is_tensor(x):
    return isinstance(x, (Tensor, Variable))


def as_tensor(x, backend=None):
    """x as a Tensor: Tensors pass, weights become tape leaves, arrays and numbers are uploaded."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        return x.as_tensor()
    return convert_to_tensor(x, backend=backend)


def convert_to_tensor(x, dtype=None, backend=None):
    """A Tensor holding x (a host->device copy for arrays and numbers), as keras.ops."""
    if is_tensor(x):
        t = as_tensor(x)
        return t if dtype is None else cast(t, dtype)
    if isinstance(x, StringTensor):
        raise refuse(f"the argument of shape {x.shape}", "convert_to_tensor")
    backend = backend or default_backend()
    array = np.asarray(x)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"convert_to_tensor: expected numbers, got dtype {array.dtype}")
    if dtype is None:
        dtype = "int32" if array.dtype.kind in "iub" else "float32"
    if array.ndim == 0:
        array = array.reshape(())
    return Tensor(backend.from_numpy(array, dtype=_dtype_name(dtype)), backend)


def convert_to_numpy(x):
    """A numpy copy of x (device->host for a Tensor)."""
    if is_tensor(x):
        t = as_tensor(x)
        return t.backend.to_numpy(t.value)
    return np.asarray(x)


def _dtype_name(dtype):
    kind = np.dtype(dtype).kind
    if kind == "f":
        return "float32"
    if kind in "iub":
        return "int32"
    raise TypeError(f"unsupported dtype {dtype!r}: minidl tensors are float32 or int32")


def empty_like_shape(backend, shape, dtype="float32"):
    return Tensor(backend.empty(tuple(shape), dtype), backend)


def shape_tuple(shape):
    """(2, 3), [2, 3], 2 or () as a tuple of ints."""
    if isinstance(shape, (tuple, list)):
        return tuple(int(s) for s in shape)
    return (int(shape),)


def needs(v):
    """True when a gradient must flow to v (a Tensor recorded as needing one)."""
    return isinstance(v, Tensor) and v.requires_grad


def record(out, inputs, rule):
    """Record `out = f(inputs)` with gradient rule(dout) -> one gradient per input."""
    tape = autodiff.current_tape()
    if tape is not None and any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        out.requires_grad = True
        tape.record(out, inputs, rule)
    return out


def shape(x):
    """The shape of x as a tuple of ints."""
    if isinstance(x, StringTensor):
        return x.shape
    return as_tensor(x).shape if is_tensor(x) else tuple(np.shape(x))


def stop_gradient(variable):
    """variable with no gradient flowing back through it."""
    t = as_tensor(variable)
    return Tensor(t.value, t.backend)


def cast(x, dtype):
    """x converted to float32 or int32 (float to int truncates toward zero)."""
    t = as_tensor(x)
    want = _dtype_name(dtype)
    if t.dtype == want:
        return t
    out = empty_like_shape(t.backend, t.shape, want)
    t.backend.cast(out.value, t.value)
    return record(out, (t,), lambda g: (cast(g, "float32"),)) if want == "float32" else out


def _float(t):
    return t if t.dtype == "float32" else cast(t, "float32")


# --------------------------------------------------------------- unary ops
def _unary(name, x, rule=None):
    t = _float(as_tensor(x))
    out = empty_like_shape(t.backend, t.shape)
    t.backend.unary(out.value, t.value, name)
    if rule is None:
        return out
    return record(out, (t,), lambda g: (rule(g, t, out),))


def negative(x):
    return _unary("negative", x, lambda g, x, y: negative(g))


def abs(x):  # noqa: A001 - keras.ops.abs
    return _unary("abs", x, lambda g, x, y: g * sign(x))


def absolute(x):
    return abs(x)


def sign(x):
    return _unary("sign", x)


def sqrt(x):
    return _unary("sqrt", x, lambda g, x, y: g * 0.5 / y)


def square(x):
    return _unary("square", x, lambda g, x, y: g * x * 2.0)


def exp(x):
    return _unary("exp", x, lambda g, x, y: g * y)


def log(x):
    return _unary("log", x, lambda g, x, y: g / x)


def log1p(x):
    return _unary("log1p", x, lambda g, x, y: g / (x + 1.0))


def relu(x):
    return _unary("relu", x, lambda g, x, y: g * greater(x, 0.0))


def sigmoid(x):
    return _unary("sigmoid", x, lambda g, x, y: g * y * (1.0 - y))


def tanh(x):
    return _unary("tanh", x, lambda g, x, y: g * (1.0 - square(y)))


def reciprocal(x):
    return _unary("reciprocal", x, lambda g, x, y: negative(g * square(y)))


def floor(x):
    return _unary("floor", x)


def round(x, decimals=0):  # noqa: A001 - keras.ops.round
    if decimals:
        scale = 10.0 ** decimals
        return _unary("round", x * scale) / scale
    return _unary("round", x)


def erf(x):
    return _unary("erf", x, lambda g, x, y: g * exp(negative(square(x))) * (2.0 / math.sqrt(math.pi)))


def sin(x):
    return _unary("sin", x, lambda g, x, y: g * cos(x))


def cos(x):
    return _unary("cos", x, lambda g, x, y: negative(g * sin(x)))


def tan(x):
    return _unary("tan", x, lambda g, x, y: g * (1.0 + square(y)))


def arcsin(x):
    return _unary("arcsin", x, lambda g, x, y: g / sqrt(1.0 - square(x)))


def arccos(x):
    return _unary("arccos", x, lambda g, x, y: negative(g / sqrt(1.0 - square(x))))


def arctan(x):
    return _unary("arctan", x, lambda g, x, y: g / (1.0 + square(x)))


def sinh(x):
    return _unary("sinh", x, lambda g, x, y: g * cosh(x))


def cosh(x):
    return _unary("cosh", x, lambda g, x, y: g * sinh(x))


def arcsinh(x):
    return _unary("arcsinh", x, lambda g, x, y: g / sqrt(square(x) + 1.0))


def arccosh(x):
    return _unary("arccosh", x, lambda g, x, y: g / sqrt(square(x) - 1.0))


def arctanh(x):
    return _unary("arctanh", x, lambda g, x, y: g / (1.0 - square(x)))


def logical_not(x):
    return _unary("logical_not", x)


# --------------------------------------------------------------- binary ops
def _operand(x, backend):
    """A Tensor, or a Python float for a number (kernels take it as an argument: no upload)."""
    if isinstance(x, (bool, int, float, np.floating, np.integer)) and not is_tensor(x):
        return float(x)
    return _float(as_tensor(x, backend))


def _binary(name, a, b, rule=None):
    backend = next((as_tensor(v).backend for v in (a, b) if is_tensor(v)), None) or default_backend()
    a, b = _operand(a, backend), _operand(b, backend)
    if isinstance(a, float) and isinstance(b, float):
        a = full((), a, backend=backend)
    shapes = [v.shape for v in (a, b) if isinstance(v, Tensor)]
    try:
        out_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"ops.{name}: shapes {' and '.join(map(str, shapes))} do not broadcast "
                         "(numpy rules)") from None
    out = empty_like_shape(backend, out_shape)
    backend.binary(out.value, *(v.value if isinstance(v, Tensor) else v for v in (a, b)), name)
    if rule is None:
        return out

    def gradients(g):
        ga, gb = rule(g, a, b, out)
        return (reduce_to(ga, a) if needs(a) else None, reduce_to(gb, b) if needs(b) else None)
    return record(out, tuple(v for v in (a, b)), gradients)


def reduce_to(g, operand):
    """The gradient g of a broadcast result summed back to `operand`'s shape (None for a float)."""
    if g is None or not isinstance(operand, Tensor):
        return None
    want = operand.shape
    if g.shape == want:
        return g
    lead = len(g.shape) - len(want)
    keep = (1,) * lead + want
    axes_shape = tuple(1 if k == 1 else s for s, k in zip(g.shape, keep))
    out = empty_like_shape(g.backend, axes_shape)
    g.backend.reduce(out.value, g.value, "sum")
    return Tensor(g.backend.reshape(out.value, want), g.backend)


def add(x1, x2):
    return _binary("add", x1, x2, lambda g, a, b, y: (g, g))


def subtract(x1, x2):
    return _binary("subtract", x1, x2, lambda g, a, b, y: (g, negative(g) if needs(b) else None))


def multiply(x1, x2):
    return _binary("multiply", x1, x2, lambda g, a, b, y: (
        g * b if needs(a) else None, g * a if needs(b) else None))


def divide(x1, x2):
    return _binary("divide", x1, x2, lambda g, a, b, y: (
        g / b if needs(a) else None, negative(g * y / b) if needs(b) else None))


def true_divide(x1, x2):
    return divide(x1, x2)


def power(x1, x2):
    def rule(g, a, b, y):
        ga = g * b * power(a, b - 1.0) if needs(a) else None
        gb = g * y * log(a) if needs(b) else None
        return ga, gb
    return _binary("power", x1, x2, rule)


def maximum(x1, x2):
    # ties send the gradient to a, so that the two parts add up to g
    return _binary("maximum", x1, x2, lambda g, a, b, y: (
        g * greater_equal(a, b) if needs(a) else None, g * less(a, b) if needs(b) else None))


def minimum(x1, x2):
    return _binary("minimum", x1, x2, lambda g, a, b, y: (
        g * less_equal(a, b) if needs(a) else None, g * greater(a, b) if needs(b) else None))


def _comparison(name):
    def op(x1, x2):
        return _binary(name, x1, x2)
    op.__name__ = name
    op.__doc__ = f"1.0 where a {name.replace('_', ' ')} b, else 0.0 (broadcasting)."
    return op


equal = _comparison("equal")
not_equal = _comparison("not_equal")
less = _comparison("less")
less_equal = _comparison("less_equal")
greater = _comparison("greater")
greater_equal = _comparison("greater_equal")
logical_and = _comparison("logical_and")
logical_or = _comparison("logical_or")


def logical_xor(x1, x2):
    return not_equal(not_equal(x1, 0.0), not_equal(x2, 0.0))


def where(condition, x1=None, x2=None):
    """x1 where condition is nonzero, else x2 (broadcasting); gradients flow to x1 and x2.
    With only condition, the indices of its nonzero entries (ops.nonzero)."""
    if x1 is None and x2 is None:   # host-side, as ops.nonzero: the size depends on the values
        c = as_tensor(condition)
        return tuple(Tensor(c.backend.from_numpy(i.astype(np.int32), dtype="int32"), c.backend)
                     for i in np.nonzero(c.numpy()))
    if x1 is None or x2 is None:
        raise ValueError("ops.where: give both x1 and x2, or neither")
    c = _float(as_tensor(condition))
    backend = c.backend
    a, b = (full((), float(v), backend=backend) if isinstance(v, (int, float))
            else as_tensor(v, backend) for v in (x1, x2))
    a, b = _float(a), _float(b)
    out = empty_like_shape(backend, np.broadcast_shapes(c.shape, a.shape, b.shape))
    backend.where(out.value, c.value, a.value, b.value)
    return record(out, (a, b), lambda g: (
        reduce_to(g * not_equal(c, 0.0), a) if needs(a) else None,
        reduce_to(g * equal(c, 0.0), b) if needs(b) else None))


def clip(x, x_min, x_max):
    """x limited to [x_min, x_max]; the gradient passes where x is inside."""
    return minimum(maximum(x, x_min), x_max)


def full(shape, fill_value, dtype="float32", backend=None):
    """A tensor of `shape` filled with fill_value (made on the device: no upload)."""
    backend = backend or default_backend()
    out = empty_like_shape(backend, shape_tuple(shape), _dtype_name(dtype))
    backend.fill(out.value, fill_value)
    return out


OPERATORS = {"add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
             "power": power, "negative": negative, "abs": abs, "less": less,
             "less_equal": less_equal, "greater": greater, "greater_equal": greater_equal,
             "convert_to_numpy": convert_to_numpy}


def __getattr__(name):
    """keras.ops.core's names defined in other modules of minidl.ops (which import this one)."""
    from .namespaces import resolve
    return resolve(__name__, name)


def __dir__():
    from .namespaces import names
    return names(__name__, globals())
