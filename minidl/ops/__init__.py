"""minidl.ops: tensor operations named and behaving as keras.ops, with automatic gradients.

Use them in a Layer subclass's call, a layers.Lambda, a loss or a metric. Each op runs at
once on the backend its tensors live on (numpy, the cpu backend's C kernels, the opencl
backend's kernels: nothing leaves the device) and, inside a training step, records its
gradient rule (minidl.autodiff). Tensors also take the operators + - * / ** @, unary -,
comparisons and indexing (x[:, 1:3], x[..., 0], x[:, [0, 2]]).
"""

from .. import autodiff
from ..autodiff import Tensor
from .core import (OPERATORS, abs, absolute, add, arccos, arccosh, arcsin, arcsinh, arctan,
                   arctanh, cast, cos, cosh, erf, sin, sinh, tan, clip, convert_to_numpy,
                   convert_to_tensor, divide, equal, exp, floor, full, greater, greater_equal,
                   is_tensor, less, less_equal, log, log1p, logical_and, logical_not, logical_or,
                   logical_xor, maximum, minimum, multiply, negative, not_equal, power, reciprocal,
                   relu, round, shape, sigmoid, sign, sqrt, square, stop_gradient, subtract, tanh,
                   true_divide, where)
from .composite import (all, any, append, arctan2, array, average, batch_normalization, ceil, copy, count_nonzero, diag, diff,
                        diagonal, elu, empty, expm1, floor_divide, hard_silu, in_top_k, logspace,
                        meshgrid, norm, normalize, select, unstack, vdot, flip, hard_sigmoid, hstack, isclose, isfinite, isinf,
                        isnan, linspace, log10, log2, log_sigmoid, logaddexp, logsumexp, mod,
                        moments, moveaxis, multi_hot, nan_to_num, ndim, outer, pad, ravel, relu6,
                        roll, rsqrt, selu, size, slice, slice_update, softsign, swapaxes, swish,
                        take_along_axis, tensordot, trace, tri, tril, triu, vstack)
from .creation import arange, eye, full_like, identity, ones, ones_like, zeros, zeros_like
from .einsum import einsum
from .linalg import dot, matmul
from .nn import (average_pool, binary_crossentropy, categorical_crossentropy, conv, conv_transpose,
                 gelu, leaky_relu, log_softmax, max_pool, one_hot, silu, softmax, softplus,
                 sparse_categorical_crossentropy)
from .ordering import argsort, cumprod, cumsum, median, quantile, sort, top_k
from .reductions import amax, amin, argmax, argmin, max, mean, min, prod, std, sum, var
from .shapes import (broadcast_to, concatenate, expand_dims, getitem, repeat, reshape, split,
                     squeeze, stack, take, tile, transpose)

from .numeric import (allclose, angle, bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or,
    bitwise_right_shift, bitwise_xor, cbrt, conj, conjugate, deg2rad, divide_no_nan, empty_like,
    exp2, fabs, fmax, fmin, fmod, gcd, geomspace, heaviside, hypot, i0, imag, isneginf,
    isposinf, isreal, lcm, ldexp, left_shift, logaddexp2, nanargmax, nanargmin, nancumprod,
    nancumsum, nanmax, nanmean, nanmedian, nanmin, nanpercentile, nanprod, nanquantile, nanstd,
    nansum, nanvar, nextafter, percentile, ptp, rad2deg, real, right_shift, signbit, sinc, trunc)
from .array_functions import (argpartition, array_split, bartlett, bincount, blackman, corrcoef, correlate, cross, diagflat,
    digitize, dsplit, dstack, fliplr, flipud, get_item, hamming, hanning, histogram, hsplit,
    inner, isin, kaiser, kron, nonzero, rot90, searchsorted, trapezoid, unique, unravel_index,
    vander, view, vsplit)
from .nn_functions import (adaptive_average_pool, adaptive_max_pool, celu, ctc_decode, ctc_loss,
                           depth_to_space, depthwise_conv, dot_product_attention, fold, glu, hard_shrink, hard_swish,
                           hard_tanh, layer_normalization, psnr, rms_normalization, separable_conv,
                           soft_shrink, space_to_depth, sparse_plus, sparse_sigmoid, sparsemax,
                           squareplus, tanh_shrink, threshold, unfold)
from .decompositions import (cholesky, cholesky_inverse, det, eig, eigh, fft, fft2, ifft2, inv, irfft,
                             logdet, lstsq, lu_factor, matrix_rank, norm, pinv, qr, rfft, slogdet, solve,
                             solve_triangular, svd)
from .control_flow import (associative_scan, cond, custom_gradient, dtype, fori_loop, map,
                           saturate_cast, scan, scatter, scatter_update, segment_max, segment_min,
                           segment_prod, segment_sum, switch, vectorize, vectorized_map, while_loop)
from .math_functions import cdist, erfc, erfinv, extract_sequences, rearrange


autodiff.register_operators(dict(OPERATORS, matmul=matmul, getitem=getitem, mod=mod, floor_divide=floor_divide))

# Keras's namespaces (keras.ops.numpy, .nn, .linalg, .math, .core, .image): modules naming the
# functions above as Keras groups them
from . import image, math, numpy  # noqa: E402

__all__ = [name for name in dir() if not name.startswith("_") and name not in
           ("OPERATORS", "attention", "autodiff", "composite", "core", "creation", "einsum", "linalg", "nn", "ordering", "reductions",
            "shapes", "numeric", "nn_functions", "decompositions", "control_flow", "math_functions",
            "image", "math", "numpy", "image_functions", "namespaces")]

# Each public function, here and in the namespaces, becomes a graph node when it is called on
# a functional model's symbolic tensors (symbolic_dispatch.py)
import sys as _sys  # noqa: E402

from . import core as _core, linalg as _linalg, nn as _nn, symbolic_dispatch as _dispatch  # noqa: E402
from .namespaces import CORE as _CORE, LINALG as _LINALG, NN as _NN  # noqa: E402

_dispatch.install(_sys.modules[__name__], __all__)
for _module, _names in ((numpy, dir(numpy)), (math, dir(math)),
                        (image, [n for n, f in vars(image).items()
                                 if getattr(f, "__module__", None) == image.__name__]),
                        (_nn, _NN), (_linalg, _LINALG + ("matmul", "dot")),
                        (_core, _CORE + tuple(n for n in __all__ if n in vars(_core)))):
    _dispatch.install(_module, _names)
del _module, _names
