"""The rest of keras.ops's numpy-style functions: elementwise math, bitwise ops,
nan-reductions and quantiles (flips, splits, products, windows and binning: array_functions.py).

Each is composed from the differentiable backend ops of the other modules (so it runs on every
backend and gets its gradient from theirs), except the integer and eager ones noted "host-side":
bitwise ops, gcd / lcm (no integer kernels: exact int32 arithmetic on the host), and unique /
nonzero / histogram / bincount's output sizes, which depend on the values (Keras computes those
eagerly too).
"""

import builtins
import math as _math

import numpy as np

from .composite import absolute, ceil, isnan, mod, moveaxis
from .core import (as_tensor, cast, convert_to_tensor, equal, exp, floor, full, greater,
                   is_tensor, less, log1p, maximum, minimum, multiply, negative, power, sign, sin,
                   sqrt, stop_gradient, where)
from .creation import arange
from .ordering import cumprod, cumsum, quantile, sort, QUANTILE_METHODS
from .reductions import argmax, argmin, max as reduce_max, min as reduce_min, prod, sum as reduce_sum
from .shapes import _axis, concatenate, reshape, squeeze, transpose

_S = builtins.slice


def _host(x):
    """x as a numpy array and the backend it lives on (None for host values)."""
    if is_tensor(x):
        t = as_tensor(x)
        return t.backend.to_numpy(t.value), t.backend
    return np.asarray(x), None


def _upload(array, backend, dtype=None):
    array = np.asarray(array)
    if dtype is None:
        dtype = "int32" if array.dtype.kind in "iub" else "float32"
    return convert_to_tensor(array, dtype=dtype, backend=backend)


def _int_op(name, fn, *xs):
    """An integer op computed exactly on the host (host-side: no integer kernels), int32."""
    arrays, backend = [], None
    for x in xs:
        a, b = _host(x)
        if a.dtype.kind == "f":
            if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
                raise TypeError(f"ops.{name}: expects integer tensors, got float values")
        arrays.append(a.astype(np.int32))
        backend = backend or b
    return _upload(fn(*arrays).astype(np.int32), backend, "int32")


# ------------------------------------------------------------ elementwise math
def cbrt(x):
    t = as_tensor(x)
    return sign(t) * power(absolute(t), 1.0 / 3.0)


def deg2rad(x):
    return as_tensor(x) * (_math.pi / 180.0)


def rad2deg(x):
    return as_tensor(x) * (180.0 / _math.pi)


def exp2(x):
    return exp(as_tensor(x) * _math.log(2.0))


def fabs(x):
    return absolute(cast(as_tensor(x), "float32"))


def trunc(x):
    t = as_tensor(x)
    if t.dtype == "int32":
        return t
    return where(less(t, 0.0), negative(floor(negative(t))), floor(t))


def signbit(x):
    """1.0 where the sign bit is set: negative numbers and -0.0 (1 / -0 is -inf)."""
    t = cast(as_tensor(x), "float32")
    return maximum(less(t, 0.0), multiply(equal(t, 0.0), less(1.0 / t, 0.0)))


def fmax(x1, x2):
    """The larger of x1 and x2, ignoring NaN where only one is NaN."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    return where(isnan(a), b, where(isnan(b), a, maximum(a, b)))


def fmin(x1, x2):
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    return where(isnan(a), b, where(isnan(b), a, minimum(a, b)))


def fmod(x1, x2):
    """The remainder with the sign of the dividend (C's fmod)."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    out = a - trunc(a / b) * b
    return cast(out, "int32") if a.dtype == b.dtype == "int32" else out


def hypot(x1, x2):
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    return sqrt(a * a + b * b)


def heaviside(x1, x2):
    a = cast(as_tensor(x1), "float32")
    return where(less(a, 0.0), 0.0, where(greater(a, 0.0), 1.0, x2))


def ldexp(x1, x2):
    return as_tensor(x1) * exp2(cast(as_tensor(x2), "float32"))


def logaddexp2(x1, x2):
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    ln2 = _math.log(2.0)
    return maximum(a, b) + log1p(exp2(negative(absolute(a - b)))) / ln2


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    t = cast(as_tensor(x), "float32")
    zero = equal(t, 0.0)
    px = where(zero, 1.0, t) * _math.pi
    return where(zero, 1.0, sin(px) / px)


def nextafter(x1, x2):
    """The next float32 after x1 towards x2 (host-side: it works on the bits)."""
    a, backend = _host(x1)
    b, _ = _host(x2)
    return _upload(np.nextafter(a.astype(np.float32), b.astype(np.float32)), backend, "float32")


_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
             0.02635537, -0.01647633, 0.00392377]


def _poly(t, coefficients):
    out = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        out = out * t + c
    return out


def i0(x):
    """The modified Bessel function of order 0 (Abramowitz and Stegun 9.8.1 / 9.8.2, relative
    error < 2e-7)."""
    t = absolute(cast(as_tensor(x), "float32"))
    small = _poly(_square(t / 3.75), _I0_SMALL)
    big_t = maximum(t, 3.75)
    large = exp(big_t) / sqrt(big_t) * _poly(3.75 / big_t, _I0_LARGE)
    return where(less(t, 3.75), small, large)


def _square(t):
    return t * t


def isneginf(x):
    return equal(cast(as_tensor(x), "float32"), float("-inf"))


def isposinf(x):
    return equal(cast(as_tensor(x), "float32"), float("inf"))


def isreal(x):
    """1.0 everywhere: minidl tensors are real."""
    return full(as_tensor(x).shape, 1.0, backend=as_tensor(x).backend)


def real(x):
    return as_tensor(x)


def imag(x):
    t = as_tensor(x)
    return full(t.shape, 0, t.dtype, backend=t.backend)


def conjugate(x):
    return as_tensor(x)


conj = conjugate


def angle(x):
    """The argument of real numbers: pi where x < 0, else 0."""
    return where(less(cast(as_tensor(x), "float32"), 0.0), _math.pi, 0.0)


def divide_no_nan(x1, x2):
    """x1 / x2, 0 where x2 is 0."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    zero = equal(b, 0.0)
    return where(zero, 0.0, a / where(zero, 1.0, b))


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    from .composite import all as all_, isclose
    return all_(isclose(x1, x2, rtol, atol, equal_nan))


def ptp(x, axis=None, keepdims=False):
    return reduce_max(x, axis, keepdims) - reduce_min(x, axis, keepdims)


def empty_like(x, dtype=None):
    t = as_tensor(x)
    return full(t.shape, 0, dtype or t.dtype, backend=t.backend)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """num numbers spaced evenly on a log scale from start to stop (numpy.geomspace)."""
    if start == 0 or stop == 0:
        raise ValueError("ops.geomspace: start and stop must be nonzero")
    if (start < 0) != (stop < 0):
        raise ValueError("ops.geomspace: start and stop must have the same sign")
    s = -1.0 if start < 0 else 1.0
    lo, hi = _math.log10(abs(start)), _math.log10(abs(stop))
    step = (hi - lo) / builtins.max(num - 1 if endpoint else num, 1)
    k = arange(num, dtype="float32")
    out = power(10.0, k * float(step) + float(lo)) * s
    out = where(equal(k, 0.0), float(start), out)          # exact ends, as numpy
    return where(equal(k, float(num - 1)), float(stop), out) if endpoint else out


# ------------------------------------------------------------ bitwise (host-side)
def bitwise_and(x, y):
    return _int_op("bitwise_and", np.bitwise_and, x, y)


def bitwise_or(x, y):
    return _int_op("bitwise_or", np.bitwise_or, x, y)


def bitwise_xor(x, y):
    return _int_op("bitwise_xor", np.bitwise_xor, x, y)


def bitwise_invert(x):
    return _int_op("bitwise_invert", np.invert, x)


bitwise_not = bitwise_invert


def bitwise_left_shift(x, y):
    return _int_op("bitwise_left_shift", np.left_shift, x, y)


def bitwise_right_shift(x, y):
    return _int_op("bitwise_right_shift", np.right_shift, x, y)


left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


def gcd(x1, x2):
    return _int_op("gcd", np.gcd, x1, x2)


def lcm(x1, x2):
    return _int_op("lcm", np.lcm, x1, x2)


# ------------------------------------------------------------ nan-reductions
def _fill_nan(x, value):
    t = cast(as_tensor(x), "float32")
    return where(isnan(t), float(value), t)


def _valid_count(t, axis, keepdims):
    return reduce_sum(1.0 - isnan(t), axis, keepdims)


def nansum(x, axis=None, keepdims=False):
    return reduce_sum(_fill_nan(x, 0.0), axis, keepdims)


def nanprod(x, axis=None, keepdims=False):
    return prod(_fill_nan(x, 1.0), axis, keepdims)


def nanmean(x, axis=None, keepdims=False):
    """The mean of the non-NaN entries (NaN where there is none)."""
    t = cast(as_tensor(x), "float32")
    return nansum(t, axis, keepdims) / _valid_count(t, axis, keepdims)


def nanvar(x, axis=None, keepdims=False):
    t = cast(as_tensor(x), "float32")
    m = nanmean(t, axis, keepdims=True)
    return nanmean((t - m) * (t - m), axis, keepdims)


def nanstd(x, axis=None, keepdims=False):
    return sqrt(nanvar(x, axis, keepdims))


def _all_nan(t, axis, keepdims):
    return equal(_valid_count(t, axis, keepdims), 0.0)


def nanmax(x, axis=None, keepdims=False):
    t = cast(as_tensor(x), "float32")
    return where(_all_nan(t, axis, keepdims), float("nan"), reduce_max(_fill_nan(t, float("-inf")), axis, keepdims))


def nanmin(x, axis=None, keepdims=False):
    t = cast(as_tensor(x), "float32")
    return where(_all_nan(t, axis, keepdims), float("nan"), reduce_min(_fill_nan(t, float("inf")), axis, keepdims))


def nanargmax(x, axis=None, keepdims=False):
    """The index of the largest non-NaN value (-1 for an all-NaN slice, as Keras's torch backend)."""
    t = cast(as_tensor(x), "float32")
    idx = argmax(_fill_nan(t, float("-inf")), axis, keepdims)
    return cast(where(_all_nan(t, axis, keepdims), -1.0, cast(idx, "float32")), "int32")


def nanargmin(x, axis=None, keepdims=False):
    t = cast(as_tensor(x), "float32")
    idx = argmin(_fill_nan(t, float("inf")), axis, keepdims)
    return cast(where(_all_nan(t, axis, keepdims), -1.0, cast(idx, "float32")), "int32")


def nancumsum(x, axis=None, dtype=None):
    return cumsum(_fill_nan(x, 0.0), axis, dtype)


def nancumprod(x, axis=None, dtype=None):
    return cumprod(_fill_nan(x, 1.0), axis, dtype)


# ------------------------------------------------------------ quantiles
def percentile(x, q, axis=None, method="linear", keepdims=False):
    return quantile(x, np.asarray(q, np.float64) / 100.0, axis, method, keepdims)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """quantile over the non-NaN entries of each slice (NaN for an all-NaN slice)."""
    if method not in QUANTILE_METHODS:
        raise ValueError(f"ops.nanquantile: method must be one of {QUANTILE_METHODS}, got {method!r}")
    qs = np.asarray(q, dtype=np.float64)
    if qs.ndim > 1 or qs.size == 0 or not np.all((qs >= 0) & (qs <= 1)):
        raise ValueError(f"ops.nanquantile: q must be a number or a list of numbers in [0, 1], got {q!r}")
    t = cast(as_tensor(x), "float32")
    rank = len(t.shape)
    axes = tuple(range(rank)) if axis is None else tuple(
        sorted(_axis(a, rank) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))))
    kept = [k for k in range(rank) if k not in axes]
    moved = transpose(t, kept + list(axes)) if kept + list(axes) != list(range(rank)) else t
    lead = tuple(t.shape[k] for k in kept)
    rows = sort(reshape(moved, lead + (-1,)), axis=-1)          # NaN sort last
    count = reduce_sum(1.0 - isnan(rows), -1, keepdims=True)     # lead + (1,)
    last = maximum(count - 1.0, 0.0)
    values = []
    for qv in qs.reshape(-1):
        pos = last * float(qv)
        low, high = floor(pos), ceil(pos)
        if method == "nearest":   # numpy rounds halves to even
            half = equal(pos - low, 0.5)
            even = equal(mod(low, 2.0), 0.0)
            near = where(less(pos - low, 0.5), low, high)
            idx = where(half, where(even, low, high), near)
            v = _take_rows(rows, idx)
        elif method == "lower":
            v = _take_rows(rows, low)
        elif method == "higher":
            v = _take_rows(rows, high)
        else:
            a, b = _take_rows(rows, low), _take_rows(rows, high)
            v = (a + b) * 0.5 if method == "midpoint" else a + (b - a) * stop_gradient(pos - low)
        values.append(where(equal(count, 0.0), float("nan"), v))
    out = concatenate(values, -1)                                   # lead + (len(q),)
    if keepdims:
        shape = tuple(1 if k in axes else t.shape[k] for k in range(rank))
        out = reshape(moveaxis(out, -1, 0), (-1,) + shape)
    else:
        out = moveaxis(out, -1, 0)
    return squeeze(out, axis=0) if qs.ndim == 0 else out


def _take_rows(rows, idx):
    from .composite import take_along_axis
    return take_along_axis(rows, cast(stop_gradient(idx), "int32"), axis=-1)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    return nanquantile(x, np.asarray(q, np.float64) / 100.0, axis, method, keepdims)


def nanmedian(x, axis=None, keepdims=False):
    return nanquantile(x, 0.5, axis, keepdims=keepdims)
