"""Weights of a quantized Conv2D or Dense: 7-bit symmetric per output channel, packed as the
kernels read them (csrc/qgemm.h), with the per-column epilogue arrays.

7 bits ([-63, 63]) rather than 8: AVX2's vpmaddubsw adds two u8 x s8 products into a
saturating int16, and 2 * 255 * 63 = 32130 fits where 2 * 255 * 127 does not; with this one
format every ISA path (VNNI, AVX2, generic, OpenCL, numpy) computes the same exact sums.
"""

import numpy as np

from ..backends.contract.quantized import ADD_SHIFT, NR

WEIGHT_MAX = 63


def weight_scales(kernel):
    """Per output channel (last axis of the (k, n) matrix) scales: max |w| / 63 (1 where a
    channel is all zeros, which keeps its quantized weights zero)."""
    peak = np.abs(kernel).max(axis=0).astype(np.float32)
    return np.where(peak > 0, peak / np.float32(WEIGHT_MAX), np.float32(1)).astype(np.float32)


def quantize_kernel(kernel, scales):
    """int8 weights round(kernel / scale) of the (k, n) float matrix, within [-63, 63]."""
    q = np.rint(kernel.astype(np.float64) / scales.astype(np.float64))
    return np.clip(q, -WEIGHT_MAX, WEIGHT_MAX).astype(np.int8)


def pack(q):
    """The packed (kp / 4, np, 4) int8 layout of the (k, n) int8 matrix q, zero padded."""
    k, n = q.shape
    kp, np_ = -(-k // 4) * 4, -(-n // NR) * NR
    padded = np.zeros((kp, np_), np.int8)
    padded[:k, :n] = q
    return np.ascontiguousarray(padded.reshape(kp // 4, 4, np_).transpose(0, 2, 1)).reshape(-1)


def epilogue_arrays(q, w_scales, bias, in_scale, in_zero_point, out_scale):
    """(column_offset int32, multiplier float32) of csrc/qgemm.h for weights q (k, n), the
    layer's float bias (n,) or None, its input's (scale, zero point) and its output scale
    (None: a float output)."""
    acc_scale = np.float64(in_scale) * w_scales.astype(np.float64)   # the int32 sums' scale
    bias_q = np.zeros(q.shape[1], np.int64) if bias is None else \
        np.clip(np.rint(bias.astype(np.float64) / acc_scale), -2 ** 30, 2 ** 30).astype(np.int64)
    offset = bias_q - int(in_zero_point) * q.astype(np.int64).sum(axis=0)
    multiplier = acc_scale if out_scale is None else acc_scale / np.float64(out_scale)
    return offset.astype(np.int32), multiplier.astype(np.float32)


def add_multiplier(in_scale, out_scale):
    """add_u8's fixed-point multiplier of an input of scale in_scale into an output of out_scale."""
    m = int(round(float(in_scale) / float(out_scale) * 2 ** ADD_SHIFT))
    if not 0 < m < 2 ** 31:
        raise ValueError(f"minidl.quantization: an Add input's scale {in_scale} is out of range "
                         f"for its output's scale {out_scale}")
    return m
