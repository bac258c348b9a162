"""keras.ops's numpy-style array functions: flips, rotations and splits, products, windows,
binning and searching (the rest of the numpy-style names are in numeric.py).

Composed from the differentiable backend ops of the other modules, except those whose output
size depends on the values (unique, nonzero, histogram, bincount: host-side, as Keras
computes them eagerly too).
"""

import builtins
import math as _math

import numpy as np

from .composite import absolute, diagonal, flip, mod, moveaxis, pad, ravel, swapaxes, tensordot
from .core import (as_tensor, cast, convert_to_tensor, cos, equal, floor, full, greater,
                   greater_equal, is_tensor, less, less_equal, maximum, minimum, sqrt,
                   stop_gradient)
from .creation import arange, zeros
from .numeric import _host, _square, _upload, i0
from .reductions import max as reduce_max, mean, min as reduce_min, sum as reduce_sum
from .shapes import _axis, concatenate, expand_dims, getitem, reshape, split, stack, take, transpose

_S = builtins.slice


# ------------------------------------------------------------ flips, rotations, splits, stacks
def fliplr(x):
    if len(as_tensor(x).shape) < 2:
        raise ValueError("ops.fliplr: x must have at least 2 axes")
    return flip(x, 1)


def flipud(x):
    if len(as_tensor(x).shape) < 1:
        raise ValueError("ops.flipud: x must have at least 1 axis")
    return flip(x, 0)


def rot90(array, k=1, axes=(0, 1)):
    """array rotated by 90 degrees k times in the plane of `axes` (from the first towards the
    second), as numpy.rot90."""
    t = as_tensor(array)
    rank = len(t.shape)
    if len(axes) != 2 or rank < 2:
        raise ValueError(f"ops.rot90: axes must be two axes of an array of rank >= 2, got {axes} "
                         f"for shape {t.shape}")
    a0, a1 = axes[0] % rank, axes[1] % rank
    if a0 == a1:
        raise ValueError(f"ops.rot90: axes must differ, got {axes}")
    k %= 4
    if k == 0:
        return t
    if k == 2:
        return flip(flip(t, a0), a1)
    if k == 1:
        return swapaxes(flip(t, a1), a0, a1)
    return flip(swapaxes(t, a0, a1), a1)


def array_split(x, indices_or_sections, axis=0):
    """Pieces of x along axis: n sections that may differ by one (the first ones longer), or cut
    at the given indices."""
    t = as_tensor(x)
    axis = _axis(axis, len(t.shape))
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"ops.array_split: the number of sections must be > 0, got {sections}")
        n = t.shape[axis]
        size, extra = divmod(n, sections)
        cuts, at = [], 0
        for k in range(sections - 1):
            at += size + (1 if k < extra else 0)
            cuts.append(at)
        return split(t, cuts, axis)
    return split(t, indices_or_sections, axis)


def hsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 1 if len(as_tensor(x).shape) > 1 else 0)


def vsplit(x, indices_or_sections):
    if len(as_tensor(x).shape) < 2:
        raise ValueError("ops.vsplit: x must have at least 2 axes")
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    if len(as_tensor(x).shape) < 3:
        raise ValueError("ops.dsplit: x must have at least 3 axes")
    return split(x, indices_or_sections, 2)


def _atleast_3d(t):
    if len(t.shape) == 0:
        return reshape(t, (1, 1, 1))
    if len(t.shape) == 1:
        return reshape(t, (1, t.shape[0], 1))
    if len(t.shape) == 2:
        return expand_dims(t, -1)
    return t


def dstack(xs):
    return concatenate([_atleast_3d(as_tensor(x)) for x in xs], 2)


def diagflat(x, k=0):
    from .composite import diag
    return diag(ravel(x), k)


# ------------------------------------------------------------ products
def inner(x1, x2):
    """The sum product over the last axes (numpy.inner); scalars multiply."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    if not a.shape or not b.shape:
        return a * b
    return tensordot(a, b, axes=[[-1], [-1]])


def kron(x1, x2):
    """The Kronecker product: every entry of x1 times the whole of x2."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    rank = builtins.max(len(a.shape), len(b.shape))
    a = reshape(a, (1,) * (rank - len(a.shape)) + a.shape)
    b = reshape(b, (1,) * (rank - len(b.shape)) + b.shape)
    wide_a = reshape(a, tuple(d for n in a.shape for d in (n, 1)))
    wide_b = reshape(b, tuple(d for n in b.shape for d in (1, n)))
    return reshape(wide_a * wide_b, tuple(p * q for p, q in zip(a.shape, b.shape)))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or 2-vectors, whose z is 0) along the given axes."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"ops.cross: the vector axes must have size 2 or 3, got {x1.shape} and {x2.shape}")
    ax = [a[..., k] for k in range(a.shape[-1])]
    bx = [b[..., k] for k in range(b.shape[-1])]
    if len(ax) == 2 and len(bx) == 2:
        return ax[0] * bx[1] - ax[1] * bx[0]
    zero_a = ax[0] * 0.0
    zero_b = bx[0] * 0.0
    ax = ax + [zero_a] * (3 - len(ax))
    bx = bx + [zero_b] * (3 - len(bx))
    c = stack([ax[1] * bx[2] - ax[2] * bx[1], ax[2] * bx[0] - ax[0] * bx[2],
               ax[0] * bx[1] - ax[1] * bx[0]], -1)
    return moveaxis(c, -1, axisc)


def vander(x, N=None, increasing=False):
    """Columns x ** (N - 1), ..., x ** 0 (the other way when increasing)."""
    t = as_tensor(x)
    if len(t.shape) != 1:
        raise ValueError(f"ops.vander: x must be 1-D, got shape {t.shape}")
    n = t.shape[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    cols = [full(t.shape, 1, t.dtype, backend=t.backend) if p == 0 else t ** float(p) for p in powers]
    out = stack(cols, 1) if cols else zeros((t.shape[0], 0))
    return cast(out, "int32") if t.dtype == "int32" else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal-rule integral of y along axis (samples at x, or spaced dx)."""
    t = cast(as_tensor(y), "float32")
    axis = _axis(axis, len(t.shape))
    lead = (_S(None),) * axis
    mid = (getitem(t, lead + (_S(1, None),)) + getitem(t, lead + (_S(None, -1),))) * 0.5
    if x is None:
        return reduce_sum(mid, axis) * float(dx)
    xs = cast(as_tensor(x, t.backend), "float32")
    if len(xs.shape) == 1:
        d = xs[1:] - xs[:-1]
        d = reshape(d, (d.shape[0],) + (1,) * (len(t.shape) - axis - 1))
    else:
        xlead = (_S(None),) * _axis(axis, len(xs.shape))
        d = getitem(xs, xlead + (_S(1, None),)) - getitem(xs, xlead + (_S(None, -1),))
    return reduce_sum(mid * d, axis)


def correlate(x1, x2, mode="valid"):
    """The cross-correlation of two 1-D tensors (numpy.correlate): z[k] = sum_n a[n + k] * b[n]."""
    if mode not in ("valid", "same", "full"):
        raise ValueError(f"ops.correlate: mode must be 'valid', 'same' or 'full', got {mode!r}")
    a, b = cast(as_tensor(x1), "float32"), cast(as_tensor(x2, as_tensor(x1).backend), "float32")
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise ValueError(f"ops.correlate: x1 and x2 must be 1-D, got {a.shape} and {b.shape}")
    n, m = a.shape[0], b.shape[0]
    if n < m:   # numpy swaps and reverses: correlate(a, b) = reverse(correlate(b, a))
        return flip(correlate(b, a, mode), 0)
    if mode == "full":
        a = pad(a, [(m - 1, m - 1)])
    elif mode == "same":
        a = pad(a, [((m - 1) // 2, m - 1 - (m - 1) // 2)])
    length = a.shape[0] - m + 1
    # the windows of a as a (length, m) matrix (one gather), times b
    windows = take(a, (np.arange(length)[:, None] + np.arange(m)[None, :]).astype(np.int32))
    return reduce_sum(windows * b, -1)


def corrcoef(x):
    """Pearson correlation coefficients of the rows of x (numpy.corrcoef)."""
    t = cast(as_tensor(x), "float32")
    if len(t.shape) == 1:
        t = expand_dims(t, 0)
    c = t - mean(t, 1, keepdims=True)
    from .linalg import matmul
    cov = matmul(c, transpose(c))
    d = sqrt(diagonal(cov))
    out = cov / expand_dims(d, 1) / expand_dims(d, 0)
    out = minimum(maximum(out, -1.0), 1.0)
    return reshape(out, ()) if out.shape == (1, 1) else out


# ------------------------------------------------------------ windows
def _window_size(x, name):
    if is_tensor(x):
        x = int(np.asarray(as_tensor(x).numpy()))
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"ops.{name}: x (the window length) must be an int, got {x!r}")
    return int(x)


def _window(n, fn):
    if n <= 0:
        return zeros((0,))
    if n == 1:
        return full((1,), 1.0)
    k = arange(n, dtype="float32")
    return fn(k, float(n - 1))


def bartlett(x):
    n = _window_size(x, "bartlett")
    return _window(n, lambda k, m: 1.0 - absolute(k * (2.0 / m) - 1.0))


def hanning(x):
    n = _window_size(x, "hanning")
    return _window(n, lambda k, m: 0.5 - 0.5 * cos(k * (2.0 * _math.pi / m)))


def hamming(x):
    n = _window_size(x, "hamming")
    return _window(n, lambda k, m: 0.54 - 0.46 * cos(k * (2.0 * _math.pi / m)))


def blackman(x):
    n = _window_size(x, "blackman")
    return _window(n, lambda k, m: 0.42 - 0.5 * cos(k * (2.0 * _math.pi / m))
                   + 0.08 * cos(k * (4.0 * _math.pi / m)))


def kaiser(x, beta):
    n = _window_size(x, "kaiser")
    return _window(n, lambda k, m: i0(float(beta) * sqrt(maximum(1.0 - _square(k * (2.0 / m) - 1.0), 0.0)))
                   / float(np.i0(beta)))


# ------------------------------------------------------------ binning and search
def searchsorted(sorted_sequence, values, side="left"):
    """Where values would be inserted into the 1-D sorted_sequence to keep it sorted (int32):
    the count of entries < value ('left') or <= value ('right')."""
    if side not in ("left", "right"):
        raise ValueError(f"ops.searchsorted: side must be 'left' or 'right', got {side!r}")
    s = cast(stop_gradient(sorted_sequence), "float32")
    if len(s.shape) != 1:
        raise ValueError(f"ops.searchsorted: sorted_sequence must be 1-D, got shape {s.shape}")
    v = cast(stop_gradient(as_tensor(values, s.backend)), "float32")
    before = less if side == "left" else less_equal
    return cast(reduce_sum(before(s, expand_dims(v, -1)), -1), "int32")


def digitize(x, bins):
    """The index of the bin each x falls in (numpy.digitize, increasing bins, right=False)."""
    b = cast(stop_gradient(as_tensor(bins)), "float32")
    t = cast(stop_gradient(as_tensor(x, b.backend)), "float32")
    return cast(reduce_sum(less_equal(b, expand_dims(t, -1)), -1), "int32")


def isin(x1, x2, assume_unique=False, invert=False):
    """1.0 where an element of x1 is among the elements of x2."""
    a = cast(as_tensor(x1), "float32")
    b = ravel(cast(as_tensor(x2, a.backend), "float32"))
    found = greater(reduce_sum(equal(expand_dims(a, -1), b), -1), 0.0)
    return 1.0 - found if invert else found


def bincount(x, weights=None, minlength=0, sparse=False):
    """Counts (or summed weights) of each non-negative int in 1-D x (or each row of 2-D x); the
    length max(x) + 1 is read from the values (host-side, as Keras does)."""
    if sparse:
        raise ValueError("ops.bincount: sparse=True is not supported (minidl has no sparse tensors)")
    t = as_tensor(x)
    if t.dtype != "int32":
        raise TypeError(f"ops.bincount: x must be an int tensor, got {t.dtype}")
    if len(t.shape) not in (1, 2):
        raise ValueError(f"ops.bincount: x must be 1-D or 2-D, got shape {t.shape}")
    values = t.numpy()
    if values.size and values.min() < 0:
        raise ValueError("ops.bincount: x must be non-negative")
    length = builtins.max(int(values.max()) + 1 if values.size else 0, int(minlength))
    hot = equal(expand_dims(cast(t, "float32"), -1), arange(length, dtype="float32", backend=t.backend))
    if weights is not None:
        hot = hot * expand_dims(as_tensor(weights, t.backend), -1)
    counts = reduce_sum(hot, -2)
    if weights is None or as_tensor(weights).dtype == "int32":
        return cast(counts, "int32")
    return counts


def histogram(x, bins=10, range=None):  # noqa: A002 - numpy's argument name
    """(counts, bin_edges) of 1-D x in `bins` equal bins over range (x's min and max when None);
    the last bin includes its right edge."""
    t = cast(stop_gradient(as_tensor(x)), "float32")
    if len(t.shape) != 1:
        raise ValueError(f"ops.histogram: x must be 1-D, got shape {t.shape}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins <= 0:
        raise ValueError(f"ops.histogram: bins must be a positive int, got {bins!r}")
    if range is None:
        lo, hi = (float(reduce_min(t).numpy()), float(reduce_max(t).numpy())) if t.shape[0] else (0.0, 1.0)
    else:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise ValueError(f"ops.histogram: range must be (min, max) with min <= max, got {range}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = convert_to_tensor(np.linspace(lo, hi, int(bins) + 1).astype(np.float32), backend=t.backend)
    inside = greater_equal(t, lo) * less_equal(t, hi)
    index = minimum(floor((t - lo) * (float(bins) / (hi - lo))), float(bins - 1))
    hot = equal(expand_dims(index, -1), arange(int(bins), dtype="float32", backend=t.backend))
    counts = reduce_sum(hot * expand_dims(inside, -1), 0)
    return cast(counts, "int32"), edges


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,  # noqa: A002
           axis=None, size=None, fill_value=None):
    """The sorted unique values of x (host-side, as Keras computes it: the length depends on
    the values). With size, the result is cut or padded (with fill_value, default the smallest
    value) to that length."""
    array, backend = _host(x)
    result = np.unique(array, return_index=return_index, return_inverse=return_inverse,
                       return_counts=return_counts, axis=axis)
    parts = list(result) if isinstance(result, tuple) else [result]
    if size is not None:
        values = parts[0]
        n = values.shape[0 if axis is None else axis]
        if n >= size:
            parts[0] = np.take(values, np.arange(size), axis=0 if axis is None else axis)
        else:
            fill = values.min() if fill_value is None and values.size else (fill_value or 0)
            pad_shape = list(values.shape)
            pad_shape[0 if axis is None else axis] = size - n
            parts[0] = np.concatenate([values, np.full(pad_shape, fill, values.dtype)],
                                      0 if axis is None else axis)
        k = 1
        for flag in (return_index, return_inverse, return_counts):
            if flag:
                if parts[k] is not None and (flag is return_counts or flag is return_index):
                    extra = np.asarray(parts[k])
                    if extra.shape[0] >= size:
                        parts[k] = extra[:size]
                    else:
                        parts[k] = np.concatenate([extra, np.zeros(size - extra.shape[0], extra.dtype)])
                k += 1
    out = [_upload(p, backend) for p in parts]
    return out[0] if len(out) == 1 else tuple(out)


def nonzero(x):
    """A tuple of int32 index tensors, one per axis, of x's nonzero entries (host-side: its size
    depends on the values)."""
    array, backend = _host(x)
    return tuple(_upload(i.astype(np.int32), backend, "int32") for i in np.nonzero(array))


def unravel_index(indices, shape):
    """The coordinates of flat `indices` in an array of `shape`, a tuple of int32 tensors."""
    t = cast(as_tensor(indices), "float32")
    out = []
    for dim in reversed(shape):
        out.append(cast(mod(t, float(dim)), "int32"))
        t = floor(t / float(dim))
    return tuple(reversed(out))


def argpartition(x, kth, axis=-1):
    """Indices that put the kth smallest value of each slice in place, smaller ones before and
    larger after (a full stable argsort satisfies this; Keras's order within each side is not
    specified either)."""
    from .ordering import argsort
    t = as_tensor(x)
    n = t.shape[axis]
    if not -n <= kth < n:
        raise ValueError(f"ops.argpartition: kth {kth} is out of bounds for axis of size {n}")
    return argsort(t, axis=axis)


def get_item(x, key):
    return getitem(x, key)


def view(x, dtype=None):
    """x's bytes read as another 32-bit dtype (host-side: a bit reinterpretation)."""
    array, backend = _host(x)
    if dtype is None:
        return as_tensor(x)
    want = np.dtype(dtype)
    if want.itemsize != 4:
        raise ValueError(f"ops.view: minidl tensors are 32-bit; cannot view as {dtype!r}")
    return _upload(array.view(want), backend, "int32" if want.kind in "iu" else "float32")
