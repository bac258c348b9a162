"""The int8 inference ops: their contract, and the numpy reference every backend must equal.

These ops are not part of Backend (minidl/backends/base.py): only a quantized model
(minidl.quantization) calls them, through the object `minidl.quantization.ops.for_backend`
returns for a backend. Tensors are that backend's; activations are uint8 with real value
scale * (q - zero_point), weights int8 packed as csrc/qgemm.h says (minidl/quantization/
packing.py), the per-column epilogue arrays int32 (column_offset) and float32 (multiplier).

Every op is exact integer arithmetic plus one float32 multiply and one round-to-nearest-even
per element (csrc/qgemm.h's epilogue), so every backend and every cpu ISA path gives results
equal bit for bit to this reference.
"""

import numpy as np

NR = 16   # MINIDL_QGEMM_NR: packed weight columns are padded to a multiple of this
ADD_SHIFT = 20   # MINIDL_QADD_SHIFT: add_u8's multipliers are fixed point with this many bits


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


def check(op, name, x, shape, dtype):
    if tuple(x.shape) != tuple(shape) or np.dtype(x.dtype) != np.dtype(dtype):
        raise ValueError(f"{op}: {name} must be {np.dtype(dtype).name} of shape {tuple(shape)}, "
                         f"got {np.dtype(x.dtype).name} of shape {tuple(x.shape)}")


def gemm_sizes(op, out, a, w, column_offset, multiplier):
    """(m, k, n) of a qgemm call, every argument checked."""
    if len(a.shape) != 2:
        raise ValueError(f"{op}: a must be (rows, k) uint8, got shape {tuple(a.shape)}")
    (m, k), n = a.shape, column_offset.shape[0]
    check(op, "a", a, (m, k), np.uint8)
    _check_epilogue(op, out, (m, n), w, column_offset, multiplier, k)
    return m, k, n


def _check_epilogue(op, out, out_shape, w, column_offset, multiplier, k):
    n = out_shape[-1]
    check(op, "w", w, (-(-k // 4) * (-(-n // NR) * NR) * 4,), np.int8)
    check(op, "column_offset", column_offset, (n,), np.int32)
    check(op, "multiplier", multiplier, (n,), np.float32)
    if tuple(out.shape) != tuple(out_shape) or np.dtype(out.dtype) not in (np.uint8, np.float32):
        raise ValueError(f"{op}: out must be uint8 or float32 of shape {tuple(out_shape)}, got "
                         f"{np.dtype(out.dtype).name} of shape {tuple(out.shape)}")


def conv_sizes(op, out, x, w, column_offset, multiplier, plan):
    check(op, "x", x, plan.in_shape, np.uint8)
    if column_offset.shape[0] != plan.oc:
        raise ValueError(f"{op}: column_offset must have the plan's {plan.oc} filters, got "
                         f"shape {tuple(column_offset.shape)}")
    _check_epilogue(op, out, (plan.n, plan.oh, plan.ow, plan.oc), w, column_offset, multiplier,
                    plan.kh * plan.kw * plan.c)


def check_zero_point(op, zero_point):
    if not (isinstance(zero_point, (int, np.integer)) and 0 <= int(zero_point) <= 255):
        raise ValueError(f"{op}: zero_point must be an int in [0, 255], got {zero_point!r}")
    return int(zero_point)


def check_add(op, out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier, out_zero_point):
    """(za, zb, zo, ma, mb) of an add_u8 call, every argument checked."""
    check(op, "a", a, a.shape, np.uint8)
    check(op, "b", b, a.shape, np.uint8)
    check(op, "out", out, a.shape, np.uint8)
    for name, m in (("a_multiplier", a_multiplier), ("b_multiplier", b_multiplier)):
        if not isinstance(m, (int, np.integer)) or not -2 ** 31 < int(m) < 2 ** 31:
            raise ValueError(f"{op}: {name} must be an int of magnitude < 2**31, got {m!r}")
    return (check_zero_point(op, a_zero_point), check_zero_point(op, b_zero_point),
            check_zero_point(op, out_zero_point), int(a_multiplier), int(b_multiplier))


class QuantizedOps:
    """The contract, implemented in numpy on host arrays: the reference of the other backends.

    memory: upload (a host array to a backend tensor of its dtype), empty_u8, to_numpy.
    quantize_u8(out, x, scale, zero_point): out = clamp(rint(x * float32(1 / scale)) + zp, 0, 255)
        (NaN -> zero_point); dequantize_u8(out, x, scale, zero_point): out = scale * (x - zp).
    qgemm_forward(out, a, w, column_offset, multiplier, zero_point, relu): out (m, n) uint8 or
        float32 = epilogue(a (m, k) uint8 @ w).
    qconv2d_forward(out, x, w, column_offset, multiplier, zero_point, relu, x_zero_point, plan):
        the convolution of x (n, h, w, c) uint8 by packed w ((kh * kw * c, f) matrix),
        padding positions holding x_zero_point.
    max_pool2d_u8(out, x, plan): max over each window's real positions.
    add_u8(out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier, out_zero_point,
        relu): csrc/qgemm.h's fixed-point sum of two uint8 tensors of other scales.
    """

    name = "numpy"

    def __init__(self, backend):
        self.backend = backend

    def upload(self, array):
        return np.array(array, order="C", copy=True)

    def empty_u8(self, shape):
        return np.empty(shape, np.uint8)

    def to_numpy(self, x):
        return np.array(x, copy=True)

    def quantize_u8(self, out, x, scale, zero_point):
        zp = check_zero_point("quantize_u8", zero_point)
        check("quantize_u8", "out", out, x.shape, np.uint8)
        inv = np.float32(1.0 / float(scale))
        v = np.rint(np.asarray(x, np.float32) * inv)
        q = np.where(np.isnan(v), np.float32(zp), v + np.float32(zp))
        out[...] = np.clip(q, 0, 255).astype(np.uint8)

    def dequantize_u8(self, out, x, scale, zero_point):
        zp = check_zero_point("dequantize_u8", zero_point)
        check("dequantize_u8", "out", out, x.shape, np.float32)
        out[...] = np.float32(scale) * (x.astype(np.int32) - zp).astype(np.float32)

    def qgemm_forward(self, out, a, w, column_offset, multiplier, zero_point, relu):
        m, k, n = gemm_sizes("qgemm_forward", out, a, w, column_offset, multiplier)
        acc = a.astype(np.int64) @ unpack_weights(w, k, n).astype(np.int64)
        out[...] = epilogue(acc, column_offset, multiplier, check_zero_point("qgemm_forward", zero_point),
                            relu, out.dtype)

    def qconv2d_forward(self, out, x, w, column_offset, multiplier, zero_point, relu, x_zero_point, plan):
        conv_sizes("qconv2d_forward", out, x, w, column_offset, multiplier, plan)
        cols = im2col(x, plan, check_zero_point("qconv2d_forward", x_zero_point))
        acc = cols.astype(np.int64) @ unpack_weights(w, cols.shape[1], plan.oc).astype(np.int64)
        out[...] = epilogue(acc, column_offset, multiplier, check_zero_point("qconv2d_forward", zero_point),
                            relu, out.dtype).reshape(out.shape)

    def add_u8(self, out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier,
               out_zero_point, relu):
        za, zb, zo, ma, mb = check_add("add_u8", out, a, b, a_zero_point, b_zero_point, a_multiplier,
                                       b_multiplier, out_zero_point)
        acc = (a.astype(np.int64) - za) * ma + (b.astype(np.int64) - zb) * mb
        q = ((acc + (1 << (ADD_SHIFT - 1))) >> ADD_SHIFT) + zo
        out[...] = np.clip(q, zo if relu else 0, 255).astype(np.uint8)

    def max_pool2d_u8(self, out, x, plan):
        check("max_pool2d_u8", "x", x, plan.in_shape, np.uint8)
        check("max_pool2d_u8", "out", out, (plan.n, plan.oh, plan.ow, plan.c), np.uint8)
        # padding is 0, the smallest uint8, so it never beats a real position's value
        windows = im2col(x, plan, 0).reshape(plan.n, plan.oh, plan.ow, plan.kh * plan.kw, plan.c)
        out[...] = windows.max(axis=3)
