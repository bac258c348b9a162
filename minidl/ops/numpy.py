"""keras.ops.numpy: minidl.ops's numpy-style functions under Keras's namespace (the same
functions as minidl.ops.<name>)."""

from .composite import (  # noqa: F401
    all, any, append, arctan2, array, average, ceil, copy, count_nonzero, diag, diagonal, diff,
    empty, expm1, flip, floor_divide, hstack, isclose, isfinite, isinf, isnan, linspace, log10,
    log2, logaddexp, logspace, meshgrid, mod, moveaxis, nan_to_num, ndim, outer, pad, ravel,
    roll, select, size, swapaxes, take_along_axis, tensordot, trace, tri, tril, triu, vdot,
    vstack)
from .control_flow import (  # noqa: F401
    vectorize)
from .core import (  # noqa: F401
    abs, absolute, add, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, clip, cos, cosh,
    divide, equal, exp, floor, full, greater, greater_equal, less, less_equal, log, log1p,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, multiply, negative,
    not_equal, power, reciprocal, round, sign, sin, sinh, sqrt, square, subtract, tan, tanh,
    true_divide, where)
from .creation import (  # noqa: F401
    arange, eye, full_like, identity, ones, ones_like, zeros, zeros_like)
from .decompositions import (  # noqa: F401
    slogdet)
from .einsum import (  # noqa: F401
    einsum)
from .linalg import (  # noqa: F401
    dot, matmul)
from .numeric import (  # noqa: F401
    allclose, angle, bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or,
    bitwise_right_shift, bitwise_xor, cbrt, conj, conjugate, deg2rad, divide_no_nan, empty_like,
    exp2, fabs, fmax, fmin, fmod, gcd, geomspace, heaviside, hypot, i0, imag, isneginf,
    isposinf, isreal, lcm, ldexp, left_shift, logaddexp2, nanargmax, nanargmin, nancumprod,
    nancumsum, nanmax, nanmean, nanmedian, nanmin, nanpercentile, nanprod, nanquantile, nanstd,
    nansum, nanvar, nextafter, percentile, ptp, rad2deg, real, right_shift, signbit, sinc, trunc)
from .array_functions import (  # noqa: F401
    argpartition, array_split, bartlett, bincount, blackman, corrcoef, correlate, cross, diagflat,
    digitize, dsplit, dstack, fliplr, flipud, get_item, hamming, hanning, histogram, hsplit,
    inner, isin, kaiser, kron, nonzero, rot90, searchsorted, trapezoid, unique, unravel_index,
    vander, view, vsplit)
from .ordering import (  # noqa: F401
    argsort, cumprod, cumsum, median, quantile, sort)
from .reductions import (  # noqa: F401
    amax, amin, argmax, argmin, max, mean, min, prod, std, sum, var)
from .shapes import (  # noqa: F401
    broadcast_to, concatenate, expand_dims, repeat, reshape, split, squeeze, stack, take, tile,
    transpose)
