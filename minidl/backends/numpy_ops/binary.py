"""The numpy reference of the binary (xnor-popcount) inference ops (a mixin of NumpyBackend;
the contract is in minidl/backends/base.py). It unpacks the bits back to +-1 integers and takes
the dot products in int64: the integer answer the popcount kernels must give exactly."""

import numpy as np

from ..quantizer_args import check_binary_conv, check_binary_thresholds, packed_kernel_shape, packed_shape

_WEIGHTS = (1 << np.arange(32, dtype=np.int64))


def _pack(negative):
    """(..., C) booleans -> (..., ceil(C / 32)) int32 words, bit b of word k = channel 32 k + b."""
    c = negative.shape[-1]
    words = -(-c // 32)
    padded = np.zeros(negative.shape[:-1] + (words * 32,), np.int64)
    padded[..., :c] = negative
    packed = (padded.reshape(negative.shape[:-1] + (words, 32)) * _WEIGHTS).sum(axis=-1)
    return packed.astype(np.uint32).view(np.int32)


def _unpack(bits, c):
    """(..., words) int32 -> (..., c) int64 of +-1."""
    words = bits.view(np.uint32).astype(np.int64)
    negative = (words[..., None] >> np.arange(32)) & 1
    negative = negative.reshape(bits.shape[:-1] + (-1,))[..., :c]
    return 1 - 2 * negative


class NumpyBinaryOps:
    def binary_pack_input(self, bits, x):
        packed_shape("binary_pack_input", bits, x)
        bits[...] = _pack(x < 0)

    def binary_pack_kernel(self, bits, weight):
        shape = packed_kernel_shape("binary_pack_kernel", bits, weight)
        kh, kw, c, f = weight.shape
        per_tap = _pack(np.moveaxis(weight < 0, 3, 2))            # (kh, kw, f, words)
        bits[...] = np.moveaxis(per_tap, 2, 3).reshape(shape)

    def binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        words, taps = check_binary_conv("binary_conv2d_forward", out, bits, kernel_bits, bias, plan, pad_value)
        x = _unpack(bits, plan.c)                                          # (n, h, w, c)
        w = _unpack(kernel_bits.reshape(plan.kh, plan.kw, words, plan.oc).transpose(0, 1, 3, 2),
                    plan.c).transpose(0, 1, 3, 2)                          # (kh, kw, c, f)
        pad_bottom = (plan.oh - 1) * plan.sh + (plan.kh - 1) * plan.dh + 1 - plan.h - plan.pad_top
        pad_right = (plan.ow - 1) * plan.sw + (plan.kw - 1) * plan.dw + 1 - plan.w - plan.pad_left
        padded = np.pad(x, ((0, 0), (plan.pad_top, max(pad_bottom, 0)), (plan.pad_left, max(pad_right, 0)),
                            (0, 0)), constant_values=pad_value)
        result = np.zeros((plan.n, plan.oh, plan.ow, plan.oc), np.int64)
        for ky in range(plan.kh):
            for kx in range(plan.kw):
                y0, x0 = ky * plan.dh, kx * plan.dw
                window = padded[:, y0:y0 + (plan.oh - 1) * plan.sh + 1:plan.sh,
                                x0:x0 + (plan.ow - 1) * plan.sw + 1:plan.sw, :]
                result += np.einsum("nhwc,cf->nhwf", window, w[ky, kx])
        out[...] = result + (0 if bias is None else bias)

    def binary_pack_thresholds(self, bits, z, bounds):
        check_binary_thresholds("binary_pack_thresholds", bits, z, bounds)
        bits[...] = _pack(~((bounds[0] <= z) & (z <= bounds[1])))
