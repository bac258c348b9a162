"""The quantized section of the contract: the int8 inference ops of a quantized model
(minidl.quantization). Activations are uint8 with real value scale * (q - zero_point), weights
int8 packed as csrc/qgemm.h says (minidl/quantization/packing.py), the per-column epilogue arrays
int32 (column_offset) and float32 (multiplier).

Every op is exact integer arithmetic plus one float32 multiply and one round-to-nearest-even per
element (csrc/qgemm.h's epilogue), so every backend and every cpu ISA path gives results equal
bit for bit to the numpy reference (numpy_ops/quantized.py). The public ops check every argument
and turn the scalars into what the kernels take; a backend implements the underscore names
(numpy_ops/quantized.py, cpu/quantized.py, opencl/quantized.py).
"""

import numpy as np

NR = 16   # MINIDL_QGEMM_NR: packed weight columns are padded to a multiple of this
ADD_SHIFT = 20   # MINIDL_QADD_SHIFT: add_u8's multipliers are fixed point with this many bits


def check(op, name, x, shape, dtype):
    if tuple(x.shape) != tuple(shape) or np.dtype(x.dtype) != np.dtype(dtype):
        raise ValueError(f"{op}: {name} must be {np.dtype(dtype).name} of shape {tuple(shape)}, "
                         f"got {np.dtype(x.dtype).name} of shape {tuple(x.shape)}")


def check_zero_point(op, zero_point, name="zero_point"):
    if not (isinstance(zero_point, (int, np.integer)) and 0 <= int(zero_point) <= 255):
        raise ValueError(f"{op}: {name} must be an int in [0, 255], got {zero_point!r}")
    return int(zero_point)


def _check_epilogue(op, out, out_shape, w, column_offset, multiplier, k):
    n = out_shape[-1]
    check(op, "w", w, (-(-k // 4) * (-(-n // NR) * NR) * 4,), np.int8)
    check(op, "column_offset", column_offset, (n,), np.int32)
    check(op, "multiplier", multiplier, (n,), np.float32)
    if tuple(out.shape) != tuple(out_shape) or np.dtype(out.dtype) not in (np.uint8, np.float32):
        raise ValueError(f"{op}: out must be uint8 or float32 of shape {tuple(out_shape)}, got "
                         f"{np.dtype(out.dtype).name} of shape {tuple(out.shape)}")


class QuantizedSection:
    """The contract's int8 ops; a backend implements the underscore names."""

    # ----------------------------------------------------------- memory
    def quantized_upload(self, array):
        """A new backend tensor holding a copy of the numpy `array` in its own dtype (uint8, int8,
        int32 or float32): packed weights and epilogue arrays."""
        array = np.ascontiguousarray(array)
        if array.dtype not in (np.uint8, np.int8, np.int32, np.float32):
            raise ValueError(f"quantized_upload: array must be uint8, int8, int32 or float32, got "
                             f"{array.dtype} of shape {array.shape}")
        return self._quantized_upload(array)

    def empty_u8(self, shape):
        """A new uninitialized uint8 tensor of `shape` (quantized activations)."""
        return self._empty_u8(tuple(int(s) for s in shape))

    def quantized_path(self):
        """The int8 inner loop that runs on this backend (cpu: "amx", "vnni", "avx2", "generic";
        the others: the backend's name)."""
        return self._quantized_path()

    # -------------------------------------------------------------- ops
    def quantize_u8(self, out, x, scale, zero_point):
        """out = clamp(rint(x * float32(1 / scale)) + zero_point, 0, 255) (NaN -> zero_point)."""
        op = "quantize_u8"
        zp = check_zero_point(op, zero_point)
        check(op, "x", x, x.shape, np.float32)
        check(op, "out", out, x.shape, np.uint8)
        self._quantize_u8(out, x, np.float32(1.0 / float(scale)), zp)

    def dequantize_u8(self, out, x, scale, zero_point):
        """out (float32) = scale * (x - zero_point)."""
        op = "dequantize_u8"
        zp = check_zero_point(op, zero_point)
        check(op, "x", x, x.shape, np.uint8)
        check(op, "out", out, x.shape, np.float32)
        self._dequantize_u8(out, x, np.float32(scale), zp)

    def qgemm_forward(self, out, a, w, column_offset, multiplier, zero_point, relu):
        """out (m, n) uint8 or float32 = the epilogue of a (m, k) uint8 @ the packed w."""
        op = "qgemm_forward"
        if len(a.shape) != 2:
            raise ValueError(f"{op}: a must be (rows, k) uint8, got shape {tuple(a.shape)}")
        (m, k), n = a.shape, column_offset.shape[0]
        check(op, "a", a, (m, k), np.uint8)
        _check_epilogue(op, out, (m, n), w, column_offset, multiplier, k)
        self._qgemm_forward(out, a, w, column_offset, multiplier, check_zero_point(op, zero_point),
                            bool(relu), m, k, n)

    def qconv2d_forward(self, out, x, w, column_offset, multiplier, zero_point, relu, x_zero_point, plan):
        """The convolution of x (n, h, w, c) uint8 by packed w ((kh * kw * c, f) matrix), padding
        positions holding x_zero_point; out (n, oh, ow, f) uint8 or float32."""
        op = "qconv2d_forward"
        check(op, "x", x, plan.in_shape, np.uint8)
        if column_offset.shape[0] != plan.oc:
            raise ValueError(f"{op}: column_offset must have the plan's {plan.oc} filters, got "
                             f"shape {tuple(column_offset.shape)}")
        _check_epilogue(op, out, plan.out_shape, w, column_offset, multiplier, plan.kh * plan.kw * plan.c)
        self._qconv2d_forward(out, x, w, column_offset, multiplier, check_zero_point(op, zero_point),
                              bool(relu), check_zero_point(op, x_zero_point, "x_zero_point"), plan)

    def max_pool2d_u8(self, out, x, plan):
        """out = the maximum over each window's real positions of x (n, h, w, c) uint8."""
        op = "max_pool2d_u8"
        check(op, "x", x, plan.in_shape, np.uint8)
        check(op, "out", out, (plan.n, plan.oh, plan.ow, plan.c), np.uint8)
        self._max_pool2d_u8(out, x, plan)

    def add_u8(self, out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier,
               out_zero_point, relu):
        """csrc/qgemm.h's fixed-point sum of two uint8 tensors of other scales: out = clamp(
        round(((a - za) ma + (b - zb) mb) / 2^ADD_SHIFT) + zo, zo if relu else 0, 255)."""
        op = "add_u8"
        check(op, "a", a, a.shape, np.uint8)
        check(op, "b", b, a.shape, np.uint8)
        check(op, "out", out, a.shape, np.uint8)
        for name, m in (("a_multiplier", a_multiplier), ("b_multiplier", b_multiplier)):
            if not isinstance(m, (int, np.integer)) or not -2 ** 31 < int(m) < 2 ** 31:
                raise ValueError(f"{op}: {name} must be an int of magnitude < 2**31, got {m!r}")
        self._add_u8(out, a, b, check_zero_point(op, a_zero_point, "a_zero_point"),
                     check_zero_point(op, b_zero_point, "b_zero_point"), int(a_multiplier), int(b_multiplier),
                     check_zero_point(op, out_zero_point, "out_zero_point"), bool(relu))
