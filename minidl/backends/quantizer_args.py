"""The argument checks shared by every backend's quantize_forward / quantize_backward (the
contract is in base.py): the quantizer's code, its scalar parameter and its (1,) statistic."""

import math

from .base import QUANTIZERS
from .checks import check_shape


def quantizer_code(op, name, param, stat, n):
    """(code, param as a float) of quantizer `name` after checking its arguments."""
    if name not in QUANTIZERS:
        raise ValueError(f"{op}: name must be one of {QUANTIZERS}, got {name!r}")
    if isinstance(param, bool) or not isinstance(param, (int, float)) or math.isnan(param):
        raise TypeError(f"{op} ({name}): param must be a number, got {param!r}")
    if name == "dorefa_weights" and stat is None:
        raise ValueError(f"{op} (dorefa_weights): stat must be a (1,) tensor holding max |x|")
    if stat is not None:
        if name not in ("ste_tern", "dorefa_weights"):
            raise ValueError(f"{op} ({name}): only ste_tern and dorefa_weights take a stat tensor")
        check_shape(op, "stat", stat, (1,))
    if name.startswith("dorefa") and op == "quantize_forward" and not param >= 1:
        raise ValueError(f"{op} ({name}): param must be the number of levels 2^k_bit - 1 >= 1, "
                         f"got {param!r}")
    if n == 0 and stat is not None and name == "ste_tern":
        raise ValueError(f"{op} (ste_tern): Ternary Weight Networks' threshold needs a non-empty x")
    return QUANTIZERS.index(name), float(param)


def check_binary_conv(op, out, bits, kernel_bits, bias, plan, pad_value):
    """(words per pixel, taps) of a binary_conv2d_forward call after checking its arguments."""
    if pad_value not in (0, 1) or isinstance(pad_value, bool):
        raise ValueError(f"{op}: pad_value must be 0 or 1, got {pad_value!r}")
    if plan.groups != 1:
        raise ValueError(f"{op}: the binary convolution has no groups, got a plan with groups={plan.groups}")
    words = -(-plan.c // 32)
    taps = plan.kh * plan.kw
    check_shape(op, "bits", bits, (plan.n, plan.h, plan.w, words))
    check_shape(op, "kernel_bits", kernel_bits, (taps * words, plan.oc))
    check_shape(op, "out", out, plan.out_shape)
    if bias is not None:
        check_shape(op, "bias", bias, (plan.oc,))
    return words, taps


def packed_shape(op, bits, x):
    """The bits shape binary_pack_input needs for x, after checking bits has it."""
    shape = tuple(x.shape[:-1]) + (-(-x.shape[-1] // 32),)
    check_shape(op, "bits", bits, shape)
    return shape


def packed_kernel_shape(op, bits, weight):
    if len(weight.shape) != 4:
        raise ValueError(f"{op}: weight must be (kh, kw, C, F), got shape {tuple(weight.shape)}")
    kh, kw, c, f = weight.shape
    shape = (kh * kw * -(-c // 32), f)
    check_shape(op, "bits", bits, shape)
    return shape


def check_binary_thresholds(op, bits, z, bounds):
    """(pixels, channels) of a binary_pack_thresholds call after checking its arguments."""
    shape = packed_shape(op, bits, z)
    c = z.shape[-1]
    check_shape(op, "bounds", bounds, (2, c))
    return math.prod(shape[:-1]), c
