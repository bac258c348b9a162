"""keras.ops names composed from the backend ops of the other modules (their gradients follow
from those ops' rules)."""

import builtins
import math as _math

import numpy as np

from ..backends.checks import contiguous_strides

from .core import (abs as absolute, arctan, as_tensor, cast, convert_to_tensor, divide, equal, exp,
                   floor, full, greater, is_tensor, less, less_equal, log, log1p, maximum, minimum, negative,
                   not_equal, sigmoid, sqrt, subtract, where)
from .creation import arange, eye
from .linalg import matmul
from .nn import one_hot
from .reductions import max as reduce_max, mean, sum as reduce_sum
from .shapes import broadcast_to, concatenate, expand_dims, getitem, reshape, take, transpose


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
    return getitem(t, tuple(builtins.slice(None, None, -1) if k in axes else builtins.slice(None)
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
    return equal(absolute(x), float("inf"))


def isfinite(x):
    t = as_tensor(x)
    return equal(t - t, 0.0)     # NaN for NaN and for +-inf


def rsqrt(x):
    return 1.0 / sqrt(x)


def logsumexp(x, axis=None, keepdims=False):
    t = as_tensor(x)
    top = reduce_max(t, axis, keepdims=True)
    shift = where(isfinite(top), top, 0.0)
    out = log(reduce_sum(exp(t - shift), axis, keepdims=True)) + shift
    return out if keepdims else reshape(out, reduce_sum(t, axis).shape)


def all(x, axis=None, keepdims=False):  # noqa: A001 - keras.ops.all
    return equal(reduce_sum(equal(x, 0.0), axis, keepdims), 0.0)


def any(x, axis=None, keepdims=False):  # noqa: A001 - keras.ops.any
    return greater(reduce_sum(not_equal(x, 0.0), axis, keepdims), 0.0)


def count_nonzero(x, axis=None):
    return reduce_sum(not_equal(x, 0.0), axis)


def average(x, axis=None, weights=None):
    if weights is None:
        return mean(x, axis)
    t, w = as_tensor(x), as_tensor(weights)
    return reduce_sum(t * w, axis) / reduce_sum(w + t * 0.0, axis)    # weights broadcast to x's shape


def relu6(x):
    return minimum(maximum(x, 0.0), 6.0)


def elu(x, alpha=1.0):
    t = as_tensor(x)
    return where(greater(t, 0.0), t, alpha * expm1(minimum(t, 0.0)))


def selu(x):
    return 1.0507009873554805 * elu(x, 1.6732632423543772)


def softsign(x):
    t = as_tensor(x)
    return t / (absolute(t) + 1.0)


def swish(x):
    t = as_tensor(x)
    return t * sigmoid(t)


def log_sigmoid(x):
    t = as_tensor(x)
    return negative(log1p(exp(negative(absolute(t)))) + maximum(negative(t), 0.0))


def hard_sigmoid(x):
    return minimum(maximum(as_tensor(x) / 6.0 + 0.5, 0.0), 1.0)


def moments(x, axes, keepdims=False, synchronized=False):
    m = mean(x, axes, keepdims=True)
    v = mean((as_tensor(x) - m) ** 2.0, axes, keepdims=True)
    if keepdims:
        return m, v
    shape = reduce_sum(as_tensor(x), axes).shape
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


def pad(x, pad_width, mode="constant", constant_values=None):
    """x with pad_width = [(before, after), ...] entries of constant_values around each axis."""
    if mode != "constant":
        raise ValueError(f"ops.pad: only mode='constant' is supported, got {mode!r}")
    t = as_tensor(x)
    constant_values = 0 if constant_values is None else constant_values
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


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    step = (stop - start) / max(num - 1 if endpoint else num, 1)
    out = arange(num, dtype="float32") * float(step) + float(start)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        out = cast(floor(out), "int32")
    return (out, step) if retstep else out


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    a, b = as_tensor(x1), as_tensor(x2)
    close = less_equal(absolute(a - b), atol + rtol * absolute(b))
    close = maximum(close, equal(a, b))          # equal infinities
    return maximum(close, isnan(a) * isnan(b)) if equal_nan else close


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN to nan, +-inf to posinf / neginf (the largest float32 numbers when None)."""
    posinf = 3.4028234663852886e38 if posinf is None else posinf
    neginf = -3.4028234663852886e38 if neginf is None else neginf
    t = as_tensor(x)
    t = where(isnan(t), float(nan), t)
    t = where(equal(t, float("inf")), float(posinf), t)
    return where(equal(t, float("-inf")), float(neginf), t)


def logaddexp(x1, x2):
    a, b = as_tensor(x1), as_tensor(x2)
    return maximum(a, b) + log1p(exp(negative(absolute(a - b))))


def roll(x, shift, axis=None):
    t = as_tensor(x)
    if axis is None:
        return reshape(roll(ravel(t), shift, 0), t.shape)
    axis %= len(t.shape)
    n = t.shape[axis]
    shift %= n
    if shift == 0:
        return t
    lead = (builtins.slice(None),) * axis
    return concatenate([getitem(t, lead + (builtins.slice(n - shift, None),)),
                        getitem(t, lead + (builtins.slice(0, n - shift),))], axis)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal `offset` of the matrix formed by axes axis1 and axis2 (moved last)."""
    t = as_tensor(x)
    rank = len(t.shape)
    a1, a2 = axis1 % rank, axis2 % rank
    order = [k for k in range(rank) if k not in (a1, a2)] + [a1, a2]
    t = transpose(t, order) if order != list(range(rank)) else t
    n, m = t.shape[-2:]
    rows = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    start = (0, offset) if offset >= 0 else (-offset, 0)
    lead = t.shape[:-2]
    flat = reshape(t, lead + (n * m,))
    index = [(start[0] + i) * m + start[1] + i for i in range(rows)]
    return take(flat, index, axis=len(lead))


def trace(x, offset=0, axis1=0, axis2=1):
    return reduce_sum(diagonal(x, offset, axis1, axis2), axis=-1)


def diag(x, k=0):
    """The diagonal of a matrix, or the matrix with a vector on diagonal k."""
    t = as_tensor(x)
    if len(t.shape) == 2:
        return diagonal(t, k)
    n = t.shape[0] + abs(k)
    # row i of the result holds the vector's entry on diagonal k (padding fills the rest)
    rows = pad(t, [(max(-k, 0), max(k, 0))]) if k else t
    return eye(n, k=k, backend=t.backend) * expand_dims(rows, 1)


def tensordot(x1, x2, axes=2):
    """Sum of products over the last `axes` axes of x1 and the first of x2 (or the given
    lists), as numpy.tensordot: a transpose, a reshape and one matmul."""
    a, b = as_tensor(x1), as_tensor(x2)
    if isinstance(axes, int):
        axes_a = list(range(len(a.shape) - axes, len(a.shape)))
        axes_b = list(range(axes))
    else:
        axes_a = [k % len(a.shape) for k in np.atleast_1d(axes[0])]
        axes_b = [k % len(b.shape) for k in np.atleast_1d(axes[1])]
    free_a = [k for k in range(len(a.shape)) if k not in axes_a]
    free_b = [k for k in range(len(b.shape)) if k not in axes_b]
    inner = _math.prod(a.shape[k] for k in axes_a)
    left = reshape(transpose(a, free_a + axes_a), (-1, inner))
    right = reshape(transpose(b, axes_b + free_b), (inner, -1))
    return reshape(matmul(left, right), tuple(a.shape[k] for k in free_a)
                   + tuple(b.shape[k] for k in free_b))


def take_along_axis(x, indices, axis=None):
    """numpy.take_along_axis: x's entries at integer `indices` (x's rank) along `axis`."""
    t = as_tensor(x)
    if axis is None:
        return take(t, indices)
    idx = cast(indices if is_tensor(indices) else
               convert_to_tensor(np.asarray(indices, np.int32), backend=t.backend), "float32")
    axis %= len(t.shape)
    shape = np.broadcast_shapes(idx.shape, t.shape[:axis] + (1,) + t.shape[axis + 1:])
    n = t.shape[axis]
    idx = where(less(idx, 0.0), idx + float(n), idx)
    # the flat position of every picked element: sum of its coordinates times x's strides
    strides = contiguous_strides(t.shape)
    flat = idx * float(strides[axis])
    for k, size_k in enumerate(shape):
        if k != axis:
            coord = reshape(arange(size_k, dtype="float32", backend=t.backend),
                            (1,) * k + (size_k,) + (1,) * (len(shape) - k - 1))
            flat = flat + coord * float(strides[k])
    flat = broadcast_to(flat, shape)
    return reshape(take(ravel(t), cast(ravel(flat), "int32")), shape)


def slice(inputs, start_indices, shape):  # noqa: A001 - keras.ops.slice
    """inputs[start_0:start_0 + shape_0, ...]."""
    return getitem(inputs, tuple(builtins.slice(int(s), int(s) + int(n))
                                 for s, n in zip(start_indices, shape)))


def slice_update(inputs, start_indices, updates):
    """inputs with the block at start_indices replaced by updates (a new tensor)."""
    t, u = as_tensor(inputs), as_tensor(updates)
    widths = [(int(s), n - int(s) - m) for s, n, m in zip(start_indices, t.shape, u.shape)]
    inside = pad(full(u.shape, 1.0, backend=t.backend), widths)
    return t * (1.0 - inside) + pad(u, widths)


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """1.0 at every label of each row of integer `inputs` (batch, labels)."""
    num_classes = kwargs.pop("num_tokens", num_classes)   # Keras's older name
    if num_classes is None:
        raise ValueError("ops.multi_hot: num_classes is required")
    if sparse:
        raise ValueError("ops.multi_hot: sparse=True is not supported (minidl has no sparse tensors)")
    return reduce_max(one_hot(inputs, num_classes), axis=-2)    # a reduction over the labels


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    t = as_tensor(x)
    shape = [1] * len(t.shape)
    shape[axis % len(t.shape)] = t.shape[axis % len(t.shape)]

    def along(v):
        return reshape(as_tensor(v), tuple(shape))
    out = (t - along(mean)) / sqrt(along(variance) + float(epsilon))
    if scale is not None:
        out = out * along(scale)
    return out + along(offset) if offset is not None else out


def array(x, dtype=None):
    return convert_to_tensor(x, dtype)


def copy(x):
    t = as_tensor(x)
    return t * 1.0 if t.dtype == "float32" else cast(cast(t, "float32"), t.dtype)


def empty(shape, dtype="float32"):
    """A new tensor of `shape` (zero-filled: minidl hands out no uninitialized memory here)."""
    return full(shape, 0, dtype)


def append(x1, x2, axis=None):
    if axis is None:
        return concatenate([ravel(x1), ravel(x2)], 0)
    return concatenate([x1, x2], axis)


def floor_divide(x1, x2):
    return floor(divide(x1, x2))


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    return float(base) ** linspace(start, stop, num, endpoint)


def meshgrid(*x, indexing="xy"):
    xs = x
    if indexing not in ("xy", "ij"):
        raise ValueError(f"ops.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [ravel(x) for x in xs]
    if indexing == "xy" and len(ts) > 1:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    grids = [broadcast_to(reshape(t, (1,) * k + (t.shape[0],) + (1,) * (len(ts) - k - 1)), shape)
             for k, t in enumerate(ts)]
    if indexing == "xy" and len(ts) > 1:   # the first two axes were swapped: so are the grids
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def vdot(x1, x2):
    return reduce_sum(ravel(x1) * ravel(x2))


def unstack(x, num=None, axis=0):
    t = as_tensor(x)
    axis %= len(t.shape)
    lead = (builtins.slice(None),) * axis
    return [getitem(t, lead + (k,)) for k in range(t.shape[axis])]


def hard_silu(x):
    t = as_tensor(x)
    return t * hard_sigmoid(t)


def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm (ord None or 2, or 'fro'), 1-norm or inf-norm of vectors along axis."""
    t = as_tensor(x)
    if ord in (None, 2, "fro", "euclidean"):
        return sqrt(reduce_sum(t * t, axis, keepdims))
    if ord == 1:
        return reduce_sum(absolute(t), axis, keepdims)
    if ord == float("inf"):
        return reduce_max(absolute(t), axis, keepdims)
    raise ValueError(f"ops.norm: ord must be None, 1, 2, inf or 'fro', got {ord!r}")


def normalize(x, axis=-1, order=2, epsilon=None):
    """x / max(its norm along axis, epsilon) (epsilon 1e-7 by default, keras.backend.epsilon())."""
    t = as_tensor(x)
    return t / maximum(norm(t, order, axis, keepdims=True), 1e-7 if epsilon is None else float(epsilon))


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, elementwise (numpy.select)."""
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = where(cond, choice, out)
    return out


def diff(a, n=1, axis=-1):
    t = as_tensor(a)
    lead = (builtins.slice(None),) * (axis % len(t.shape))
    for _ in range(n):
        t = getitem(t, lead + (builtins.slice(1, None),)) - getitem(t, lead + (builtins.slice(None, -1),))
    return t


def arctan2(x1, x2):
    """The angle of (x2, x1), in (-pi, pi]."""
    y, x = as_tensor(x1), as_tensor(x2)
    base = arctan(y / where(equal(x, 0.0), 1.0, x))
    half_turn = where(less(y, 0.0), -_math.pi, _math.pi)
    at_zero = where(greater(y, 0.0), _math.pi / 2, where(less(y, 0.0), -_math.pi / 2, 0.0))
    return where(greater(x, 0.0), base, where(less(x, 0.0), base + half_turn, at_zero))


def in_top_k(targets, predictions, k):
    """1.0 where the target class is among the k largest predictions of its row."""
    p = as_tensor(predictions)
    score = reduce_sum(one_hot(targets, p.shape[-1]) * p, axis=-1)
    return less(reduce_sum(greater(p, expand_dims(score, -1)), axis=-1), float(k))
