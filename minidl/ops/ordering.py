"""keras.ops names that order or accumulate along an axis: argsort, sort, top_k, median,
quantile (the backend's argsort_rows), cumsum and cumprod (its scan_rows, one pass).

Each moves the axis last and views the tensor as (rows, n) for the backend op. sort and
top_k gather with take_along_axis, so their gradient goes to the positions each value came
from; quantile interpolates between sorted values, so its gradient does too.
"""

import numpy as np

from .composite import flip, isnan, moveaxis, ravel, take_along_axis
from .core import as_tensor, cast, convert_to_tensor, empty_like_shape, record, stop_gradient, where
from .reductions import _axis
from .shapes import reshape, squeeze, take, transpose

QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _as_rows(t, axis):
    """(t with `axis` moved last, viewed as (rows, n), the moved shape, the axis)."""
    if axis is None:
        t, axis = ravel(t), 0
    if not t.shape:
        raise ValueError("ops: this op needs a tensor of rank >= 1, got a scalar")
    a = _axis(axis, len(t.shape))
    moved = moveaxis(t, a, -1) if a != len(t.shape) - 1 else t
    return reshape(moved, (-1, moved.shape[-1])), moved.shape, a


def _back(rows, moved_shape, axis):
    out = reshape(rows, moved_shape)
    return moveaxis(out, -1, axis) if axis != len(moved_shape) - 1 else out


def argsort(x, axis=-1):
    """The int32 positions that sort x along axis (ascending, stable, NaN last); axis None
    sorts the flattened x."""
    t = cast(stop_gradient(x), "float32")
    rows, moved, a = _as_rows(t, axis)
    out = empty_like_shape(t.backend, rows.shape, "int32")
    t.backend.argsort_rows(out.value, rows.value)
    return _back(out, moved, a)


def sort(x, axis=-1):
    """x sorted along axis (ascending, NaN last); axis None sorts the flattened x."""
    t = as_tensor(x)
    if axis is None:
        t, axis = ravel(t), 0
    return take_along_axis(t, argsort(t, axis), axis)


def top_k(x, k, sorted=True):  # noqa: A002 - keras.ops.top_k's argument name
    """(values, indices) of the k largest entries along the last axis, largest first; of
    equal values the lower index comes first (Keras's rule)."""
    t = as_tensor(x)
    if not t.shape:
        raise ValueError("ops.top_k: x must have rank >= 1, got a scalar")
    n = t.shape[-1]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 < k <= n:
        raise ValueError(f"ops.top_k: k must be an int in [1, {n}] (the last axis of x "
                         f"{t.shape}), got {k!r}")
    order = argsort(-cast(t, "float32"), axis=-1)
    indices = order if k == n else order[..., :int(k)]
    return take_along_axis(t, indices, -1), indices


def cumsum(x, axis=None, dtype=None):
    """Running sums along axis (of the flattened x when None), in one pass."""
    return _scan("cumsum", x, axis, dtype)


def cumprod(x, axis=None, dtype=None):
    """Running products along axis (of the flattened x when None), in one pass. Its gradient
    divides by x (as TensorFlow's does): it is not finite where x is 0."""
    return _scan("cumprod", x, axis, dtype)


def _scan(name, x, axis, dtype):
    t = as_tensor(x)
    want = dtype or t.dtype
    rows, moved, a = _as_rows(cast(t, "float32"), axis)
    return cast(_back(_scan_rows(name, rows), moved, a), want)


def _scan_rows(name, rows):
    b = rows.backend
    out = empty_like_shape(b, rows.shape)
    b.scan_rows(out.value, rows.value, name)
    if name == "cumsum":   # d/dx_j of sum_k g_k out_k: the sum of g from j on
        return record(out, (rows,), lambda g: (_reverse_cumsum(g),))
    return record(out, (rows,), lambda g: (_reverse_cumsum(g * out) / rows,))


def _reverse_cumsum(g):
    return flip(_scan_rows("cumsum", flip(g, axis=1)), axis=1)


# ------------------------------------------------------------- quantiles
def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The q-th quantiles (q in [0, 1], a number or a list) along axis (an int, a tuple, or
    None for all of x), numpy's methods; a list q puts its axis first, as numpy. NaN in a
    slice makes its quantiles NaN."""
    if method not in QUANTILE_METHODS:
        raise ValueError(f"ops.quantile: method must be one of {QUANTILE_METHODS}, got {method!r}")
    qs = np.asarray(q, dtype=np.float64)
    if qs.ndim > 1 or qs.size == 0 or not np.all((qs >= 0) & (qs <= 1)):
        raise ValueError(f"ops.quantile: q must be a number or a list of numbers in [0, 1], "
                         f"got {q!r}")
    t = cast(as_tensor(x), "float32")
    rank = len(t.shape)
    axes = tuple(range(rank)) if axis is None else tuple(
        sorted(_axis(a, rank) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))))
    kept = [k for k in range(rank) if k not in axes]
    moved = transpose(t, kept + list(axes)) if kept + list(axes) != list(range(rank)) else t
    lead = tuple(t.shape[k] for k in kept)
    rows = sort(reshape(moved, lead + (-1,)), axis=-1)
    n = rows.shape[-1]
    values = _interpolate(rows, qs.reshape(-1) * (n - 1), method)      # lead + (len(q),)
    values = where(isnan(take(rows, [n - 1], axis=-1)), float("nan"), values)
    if keepdims:
        shape = tuple(1 if k in axes else t.shape[k] for k in range(rank))
        values = reshape(values, lead + (-1,))
        values = reshape(moveaxis(values, -1, 0), (-1,) + shape)
    else:
        values = moveaxis(values, -1, 0)
    return squeeze(values, axis=0) if qs.ndim == 0 else values


def _interpolate(rows, positions, method):
    low, high = np.floor(positions).astype(np.int32), np.ceil(positions).astype(np.int32)
    if method == "lower":
        return take(rows, low, axis=-1)
    if method == "higher":
        return take(rows, high, axis=-1)
    if method == "nearest":   # numpy rounds halves to even
        return take(rows, np.around(positions).astype(np.int32), axis=-1)
    a, b = take(rows, low, axis=-1), take(rows, high, axis=-1)
    if method == "midpoint":
        return (a + b) * 0.5
    frac = convert_to_tensor(np.asarray(positions - low, np.float32), backend=rows.backend)
    return a + (b - a) * frac


def median(x, axis=None, keepdims=False):
    """The median along axis (an int, a tuple, or None for all of x)."""
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


__all__ = ["argsort", "cumprod", "cumsum", "median", "quantile", "sort", "top_k"]
