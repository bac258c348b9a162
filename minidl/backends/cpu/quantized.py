"""The quantized section on the cpu backend: the int8 inference ops on the C kernels of
csrc/qgemm.c: AMX tiles when minidl_amx_active(), else the VNNI, AVX2 or generic micro-kernel, as
minidl_cpu_isa() selects. minidl/backends/contract/quantized.py checked every argument; the host
memory ops are numpy's (tensors are numpy arrays)."""

import numpy as np

from ..numpy_ops.quantized import NumpyQuantizedOps
from ._ffi import ffi, raise_for_status, window_struct


def _ptr(kind, array):
    return ffi.from_buffer(kind, array)


def _outputs(out):
    """(uint8 *, float *) for an output that is one or the other."""
    if out.dtype == np.uint8:
        return _ptr("uint8_t[]", out), ffi.NULL
    return ffi.NULL, _ptr("float[]", out)


class CpuQuantizedOps(NumpyQuantizedOps):
    """The quantized section of CpuBackend (its _lib); the memory ops are the numpy backend's."""

    def _quantized_path(self):
        """The int8 kernel that runs: "amx" (tiles), "vnni", "avx2" or "generic"."""
        return ffi.string(self._lib.minidl_qgemm_path()).decode()

    def _quantize_u8(self, out, x, inv_scale, zp):
        self._lib.minidl_quantize_u8(_ptr("uint8_t[]", out), _ptr("float[]", x), float(inv_scale), zp, x.size)

    def _dequantize_u8(self, out, x, scale, zp):
        self._lib.minidl_dequantize_u8(_ptr("float[]", out), _ptr("uint8_t[]", x), float(scale), zp, x.size)

    def _qgemm_forward(self, out, a, w, column_offset, multiplier, zp, relu, m, k, n):
        self._lib.minidl_qgemm_forward(*_outputs(out), _ptr("uint8_t[]", a), _ptr("int8_t[]", w),
                                       _ptr("int32_t[]", column_offset), _ptr("float[]", multiplier),
                                       zp, int(relu), m, k, n)

    def _qconv2d_forward(self, out, x, w, column_offset, multiplier, zp, relu, x_zp, plan):
        op = "qconv2d_forward"
        status = self._lib.minidl_qconv2d_forward(
            *_outputs(out), _ptr("uint8_t[]", x), _ptr("int8_t[]", w), _ptr("int32_t[]", column_offset),
            _ptr("float[]", multiplier), zp, int(relu), x_zp, window_struct(op, plan))
        if status:
            raise_for_status(op, status)

    def _max_pool2d_u8(self, out, x, plan):
        self._lib.minidl_max_pool2d_u8(_ptr("uint8_t[]", out), _ptr("uint8_t[]", x),
                                       window_struct("max_pool2d_u8", plan))

    def _add_u8(self, out, a, b, za, zb, ma, mb, zo, relu):
        self._lib.minidl_add_u8(_ptr("uint8_t[]", out), _ptr("uint8_t[]", a), _ptr("uint8_t[]", b),
                                za, zb, ma, mb, zo, int(relu), a.size)
