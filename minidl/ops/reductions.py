"""Reductions over axes (sum, mean, max, min, prod, var, std) and argmax / argmin."""

import math

from ..autodiff import Tensor
from .core import as_tensor, cast, empty_like_shape, equal, maximum, minimum, record, stop_gradient
from .shapes import _axis, broadcast_to, reshape, transpose


def _axes(t, axis):
    rank = len(t.shape)
    if axis is None:
        return tuple(range(rank))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(sorted({_axis(a, rank) for a in axes}))
    return axes


def _reduce(name, x, axis, keepdims, rule):
    t = cast(as_tensor(x), "float32")
    axes = _axes(t, axis)
    kept = tuple(1 if k in axes else n for k, n in enumerate(t.shape))
    out = empty_like_shape(t.backend, kept)
    t.backend.reduce(out.value, t.value, name)
    out = record(out, (t,), lambda g: (rule(broadcast_to(g, t.shape), t, out),))
    if keepdims:
        return out
    return reshape(out, tuple(n for k, n in enumerate(t.shape) if k not in axes))


def sum(x, axis=None, keepdims=False):  # noqa: A001 - keras.ops.sum
    return _reduce("sum", x, axis, keepdims, lambda g, x, y: g)


def _extreme(name, x, axis, keepdims):
    def rule(g, x, y):
        # ties share the gradient equally, as TensorFlow's reduce_max does
        mask = equal(x, broadcast_to(y, x.shape))
        counts = sum(mask, axis, keepdims=True)
        return g * mask / broadcast_to(counts, x.shape)
    return _reduce(name, x, axis, keepdims, rule)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001 - keras.ops.max
    out = _extreme("max", x, axis, keepdims)
    return out if initial is None else maximum(out, float(initial))


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001 - keras.ops.min
    out = _extreme("min", x, axis, keepdims)
    return out if initial is None else minimum(out, float(initial))


def amax(x, axis=None, keepdims=False):
    return max(x, axis, keepdims)


def amin(x, axis=None, keepdims=False):
    return min(x, axis, keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    # d prod / d x_i = prod / x_i (inputs that are exactly zero get a NaN gradient)
    return _reduce("prod", x, axis, keepdims, lambda g, x, y: g * broadcast_to(y, x.shape) / x)


def _count(t, axis):
    return math.prod(t.shape[a] for a in _axes(t, axis))


def mean(x, axis=None, keepdims=False):
    t = as_tensor(x)
    return sum(t, axis, keepdims) / float(_count(t, axis))


def var(x, axis=None, keepdims=False):
    """The biased variance (numpy's, Keras's)."""
    t = cast(as_tensor(x), "float32")
    centered = t - mean(t, axis, keepdims=True)
    return mean(centered * centered, axis, keepdims)


def std(x, axis=None, keepdims=False):
    return var(x, axis, keepdims) ** 0.5


def _arg(name, x, axis, keepdims):
    t = cast(stop_gradient(x), "float32")
    if axis is None:
        flat = reshape(t, (1, -1))
        out = empty_like_shape(t.backend, (1,), "int32")
        t.backend.arg_reduce(out.value, flat.value, name)
        return reshape(out, (1,) * len(t.shape) if keepdims else ())
    a = _axis(axis, len(t.shape))
    order = [k for k in range(len(t.shape)) if k != a] + [a]
    moved = transpose(t, order) if a != len(t.shape) - 1 else t
    rows = reshape(moved, (-1, t.shape[a]))
    out = empty_like_shape(t.backend, (rows.shape[0],), "int32")
    t.backend.arg_reduce(out.value, rows.value, name)
    shape = t.shape[:a] + ((1,) if keepdims else ()) + t.shape[a + 1:]
    return Tensor(t.backend.reshape(out.value, shape), t.backend)


def argmax(x, axis=None, keepdims=False):
    """The index of the largest value along axis (of the flattened x when None), int32."""
    return _arg("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg("argmin", x, axis, keepdims)
