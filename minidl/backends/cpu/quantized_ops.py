"""The int8 inference ops (minidl/backends/quantized_ops.py's contract) on the C kernels of
csrc/qgemm.c: AMX tiles when minidl_amx_active(), else the VNNI, AVX2 or generic micro-kernel, as minidl_cpu_isa() selects."""

import numpy as np

from ..quantized_ops import QuantizedOps, check, check_add, check_zero_point, conv_sizes, gemm_sizes
from ._ffi import ffi, raise_for_status, require_lib, window_struct


def _ptr(kind, array):
    return ffi.from_buffer(kind, array)


def _outputs(out):
    """(uint8 *, float *) for an output that is one or the other."""
    if out.dtype == np.uint8:
        return _ptr("uint8_t[]", out), ffi.NULL
    return ffi.NULL, _ptr("float[]", out)


class CpuQuantizedOps(QuantizedOps):
    name = "cpu"

    def __init__(self, backend):
        super().__init__(backend)
        self._lib = require_lib()

    def path(self):
        """The int8 kernel that runs: "amx" (tiles), "vnni", "avx2" or "generic"."""
        return ffi.string(self._lib.minidl_qgemm_path()).decode()

    def quantize_u8(self, out, x, scale, zero_point):
        zp = check_zero_point("quantize_u8", zero_point)
        check("quantize_u8", "x", x, x.shape, np.float32)
        check("quantize_u8", "out", out, x.shape, np.uint8)
        self._lib.minidl_quantize_u8(_ptr("uint8_t[]", out), _ptr("float[]", x),
                                     float(np.float32(1.0 / float(scale))), zp, x.size)

    def dequantize_u8(self, out, x, scale, zero_point):
        zp = check_zero_point("dequantize_u8", zero_point)
        check("dequantize_u8", "x", x, x.shape, np.uint8)
        check("dequantize_u8", "out", out, x.shape, np.float32)
        self._lib.minidl_dequantize_u8(_ptr("float[]", out), _ptr("uint8_t[]", x), float(scale), zp, x.size)

    def qgemm_forward(self, out, a, w, column_offset, multiplier, zero_point, relu):
        m, k, n = gemm_sizes("qgemm_forward", out, a, w, column_offset, multiplier)
        zp = check_zero_point("qgemm_forward", zero_point)
        self._lib.minidl_qgemm_forward(*_outputs(out), _ptr("uint8_t[]", a), _ptr("int8_t[]", w),
                                       _ptr("int32_t[]", column_offset), _ptr("float[]", multiplier),
                                       zp, int(bool(relu)), m, k, n)

    def qconv2d_forward(self, out, x, w, column_offset, multiplier, zero_point, relu, x_zero_point, plan):
        op = "qconv2d_forward"
        conv_sizes(op, out, x, w, column_offset, multiplier, plan)
        status = self._lib.minidl_qconv2d_forward(
            *_outputs(out), _ptr("uint8_t[]", x), _ptr("int8_t[]", w), _ptr("int32_t[]", column_offset),
            _ptr("float[]", multiplier), check_zero_point(op, zero_point), int(bool(relu)),
            check_zero_point(op, x_zero_point), window_struct(op, plan))
        if status:
            raise_for_status(op, status)

    def max_pool2d_u8(self, out, x, plan):
        check("max_pool2d_u8", "x", x, plan.in_shape, np.uint8)
        check("max_pool2d_u8", "out", out, (plan.n, plan.oh, plan.ow, plan.c), np.uint8)
        self._lib.minidl_max_pool2d_u8(_ptr("uint8_t[]", out), _ptr("uint8_t[]", x),
                                       window_struct("max_pool2d_u8", plan))

    def add_u8(self, out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier,
               out_zero_point, relu):
        za, zb, zo, ma, mb = check_add("add_u8", out, a, b, a_zero_point, b_zero_point, a_multiplier,
                                       b_multiplier, out_zero_point)
        self._lib.minidl_add_u8(_ptr("uint8_t[]", out), _ptr("uint8_t[]", a), _ptr("uint8_t[]", b),
                                za, zb, ma, mb, zo, int(bool(relu)), a.size)
