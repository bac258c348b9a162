"""keras.ops names composed from the backend ops of the other modules (their gradients follow
from those ops' rules)."""

import math as _math

from .core import (abs, as_tensor, cast, divide, equal, exp, floor, full, greater, log, log1p,
                   maximum, minimum, negative, not_equal, sigmoid, sqrt, subtract, where)
from .creation import arange
from .reductions import max, mean, sum
from .shapes import concatenate, expand_dims, getitem, reshape, transpose


def ravel(x):
    return reshape(x, (-1,))


def size(x):
    return _math.prod(as_tensor(x).shape)


def ndim(x):
    return len(as_tensor(x).shape)


def moveaxis(x, source, destination):
    t = as_tensor(x)
    rank = len(t.shape)
    order = [k for k in range(rank) if k != source % rank]
    order.insert(destination % rank, source % rank)
    return transpose(t, order)


def swapaxes(x, axis1, axis2):
    t = as_tensor(x)
    order = list(range(len(t.shape)))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return transpose(t, order)


def flip(x, axis=None):
    t = as_tensor(x)
    rank = len(t.shape)
    axes = range(rank) if axis is None else [a % rank for a in
                                             (axis if isinstance(axis, (tuple, list)) else (axis,))]
    return getitem(t, tuple(slice(None, None, -1) if k in axes else slice(None)
                            for k in range(rank)))


def hstack(xs):
    return concatenate(xs, axis=1 if len(as_tensor(xs[0]).shape) > 1 else 0)


def vstack(xs):
    return concatenate([x if len(as_tensor(x).shape) > 1 else expand_dims(x, 0) for x in xs], 0)


def outer(x1, x2):
    return expand_dims(ravel(x1), 1) * expand_dims(ravel(x2), 0)


def expm1(x):
    return exp(x) - 1.0


def log2(x):
    return log(x) / _math.log(2.0)


def log10(x):
    return log(x) / _math.log(10.0)


def ceil(x):
    return negative(floor(negative(x)))


def mod(x1, x2):
    """The remainder with the sign of the divisor (numpy.mod)."""
    return subtract(x1, floor(divide(x1, x2)) * x2)


def isnan(x):
    t = as_tensor(x)
    return not_equal(t, t)


def isinf(x):
    return equal(abs(x), float("inf"))


def isfinite(x):
    t = as_tensor(x)
    return equal(t - t, 0.0)     # NaN for NaN and for +-inf


def rsqrt(x):
    return 1.0 / sqrt(x)


def logsumexp(x, axis=None, keepdims=False):
    t = as_tensor(x)
    top = max(t, axis, keepdims=True)
    shift = where(isfinite(top), top, 0.0)
    out = log(sum(exp(t - shift), axis, keepdims=True)) + shift
    return out if keepdims else reshape(out, sum(t, axis).shape)


def all(x, axis=None, keepdims=False):  # noqa: A001 - keras.ops.all
    return equal(sum(equal(x, 0.0), axis, keepdims), 0.0)


def any(x, axis=None, keepdims=False):  # noqa: A001 - keras.ops.any
    return greater(sum(not_equal(x, 0.0), axis, keepdims), 0.0)


def count_nonzero(x, axis=None):
    return sum(not_equal(x, 0.0), axis)


def average(x, axis=None, weights=None):
    if weights is None:
        return mean(x, axis)
    t, w = as_tensor(x), as_tensor(weights)
    return sum(t * w, axis) / sum(w + t * 0.0, axis)    # weights broadcast to x's shape


def relu6(x):
    return minimum(maximum(x, 0.0), 6.0)


def elu(x, alpha=1.0):
    t = as_tensor(x)
    return where(greater(t, 0.0), t, alpha * expm1(minimum(t, 0.0)))


def selu(x):
    return 1.0507009873554805 * elu(x, 1.6732632423543772)


def softsign(x):
    t = as_tensor(x)
    return t / (abs(t) + 1.0)


def swish(x):
    t = as_tensor(x)
    return t * sigmoid(t)


def log_sigmoid(x):
    t = as_tensor(x)
    return negative(log1p(exp(negative(abs(t)))) + maximum(negative(t), 0.0))


def hard_sigmoid(x):
    return minimum(maximum(as_tensor(x) / 6.0 + 0.5, 0.0), 1.0)


def moments(x, axes, keepdims=False):
    m = mean(x, axes, keepdims=True)
    v = mean((as_tensor(x) - m) ** 2.0, axes, keepdims=True)
    if keepdims:
        return m, v
    shape = sum(as_tensor(x), axes).shape
    return reshape(m, shape), reshape(v, shape)


def tri(N, M=None, k=0, dtype="float32"):
    """1.0 on and below diagonal k of an N x M matrix."""
    M = N if M is None else M
    rows = expand_dims(arange(N, dtype="float32"), 1)
    return cast(greater(rows + float(k) + 0.5, arange(M, dtype="float32")), dtype)


def tril(x, k=0):
    t = as_tensor(x)
    return t * tri(t.shape[-2], t.shape[-1], k)


def triu(x, k=0):
    t = as_tensor(x)
    return t * (1.0 - tri(t.shape[-2], t.shape[-1], k - 1))


def pad(x, pad_width, mode="constant", constant_values=0):
    """x with pad_width = [(before, after), ...] entries of constant_values around each axis."""
    if mode != "constant":
        raise ValueError(f"ops.pad: only mode='constant' is supported, got {mode!r}")
    t = as_tensor(x)
    widths = [tuple(p) for p in pad_width]
    if len(widths) == 1:
        widths = widths * len(t.shape)
    for axis, (before, after) in enumerate(widths):
        parts = []
        shape = list(t.shape)
        if before:
            shape[axis] = before
            parts.append(full(tuple(shape), float(constant_values), backend=t.backend))
        parts.append(t)
        if after:
            shape[axis] = after
            parts.append(full(tuple(shape), float(constant_values), backend=t.backend))
        t = concatenate(parts, axis) if len(parts) > 1 else t
    return t
