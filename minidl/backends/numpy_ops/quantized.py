"""The quantized section on the numpy backend: the int8 inference ops in integer numpy, the
reference every backend and cpu ISA path equals bit for bit (minidl/backends/contract/quantized.py
checked the arguments)."""

import numpy as np

from ..contract.quantized import ADD_SHIFT, NR


def unpack_weights(w, k, n):
    """The (k, n) int8 matrix of packed weights w ((kp / 4) * np * 4 int8)."""
    kp, np_ = -(-k // 4) * 4, -(-n // NR) * NR
    if w.dtype != np.int8 or w.size != kp * np_:
        raise ValueError(f"packed weights must be {kp * np_} int8 for k={k}, n={n}, "
                         f"got {w.size} {w.dtype}")
    return w.reshape(kp // 4, np_, 4).transpose(0, 2, 1).reshape(kp, np_)[:k, :n]


def epilogue(acc, column_offset, multiplier, zero_point, relu, out_dtype):
    """csrc/qgemm.h's epilogue of int64 sums acc (..., n): uint8 or float32."""
    total = (acc + column_offset).astype(np.int32)   # wraps as the C int32 addition does
    v = total.astype(np.float32) * multiplier.astype(np.float32)
    if out_dtype == np.uint8:
        lo = np.float32(0 if relu else -zero_point)
        return (np.rint(np.clip(v, lo, np.float32(255 - zero_point))) + zero_point).astype(np.uint8)
    return np.maximum(v, np.float32(0)) if relu else v


def im2col(x, plan, pad_value):
    """(n * oh * ow, kh * kw * c) uint8 windows of x (n, h, w, c); padding holds pad_value."""
    padded = np.full((plan.n, plan.h + plan.pad_top + plan.pad_bottom,
                      plan.w + plan.pad_left + plan.pad_right, plan.c), pad_value, np.uint8)
    padded[:, plan.pad_top:plan.pad_top + plan.h, plan.pad_left:plan.pad_left + plan.w] = x
    windows = np.lib.stride_tricks.sliding_window_view(padded, (plan.kh, plan.kw), axis=(1, 2))
    windows = windows[:, ::plan.sh, ::plan.sw][:, :plan.oh, :plan.ow]  # (n, oh, ow, c, kh, kw)
    return windows.transpose(0, 1, 2, 4, 5, 3).reshape(plan.n * plan.oh * plan.ow, -1)


class NumpyQuantizedOps:
    """The quantized section of NumpyBackend (and of CpuBackend for the memory ops: both keep
    host arrays)."""

    def _quantized_upload(self, array):
        return np.array(array, order="C", copy=True)

    def _empty_u8(self, shape):
        return np.empty(shape, np.uint8)

    def _quantized_path(self):
        return self.name

    def _quantize_u8(self, out, x, inv_scale, zp):
        v = np.rint(np.asarray(x, np.float32) * inv_scale)
        q = np.where(np.isnan(v), np.float32(zp), v + np.float32(zp))
        out[...] = np.clip(q, 0, 255).astype(np.uint8)

    def _dequantize_u8(self, out, x, scale, zp):
        out[...] = scale * (x.astype(np.int32) - zp).astype(np.float32)

    def _qgemm_forward(self, out, a, w, column_offset, multiplier, zp, relu, m, k, n):
        acc = a.astype(np.int64) @ unpack_weights(w, k, n).astype(np.int64)
        out[...] = epilogue(acc, column_offset, multiplier, zp, relu, out.dtype)

    def _qconv2d_forward(self, out, x, w, column_offset, multiplier, zp, relu, x_zp, plan):
        cols = im2col(x, plan, x_zp)
        acc = cols.astype(np.int64) @ unpack_weights(w, cols.shape[1], plan.oc).astype(np.int64)
        out[...] = epilogue(acc, column_offset, multiplier, zp, relu, out.dtype).reshape(out.shape)

    def _add_u8(self, out, a, b, za, zb, ma, mb, zo, relu):
        acc = (a.astype(np.int64) - za) * ma + (b.astype(np.int64) - zb) * mb
        q = ((acc + (1 << (ADD_SHIFT - 1))) >> ADD_SHIFT) + zo
        out[...] = np.clip(q, zo if relu else 0, 255).astype(np.uint8)

    def _max_pool2d_u8(self, out, x, plan):
        # padding is 0, the smallest uint8, so it never beats a real position's value
        windows = im2col(x, plan, 0).reshape(plan.n, plan.oh, plan.ow, plan.kh * plan.kw, plan.c)
        out[...] = windows.max(axis=3)
