"""The quantized section on the opencl backend: the int8 inference ops on the device
(kernels/qgemm.cl), integer arithmetic, one work-item per output element (correct everywhere,
not yet tuned for GPUs). minidl/backends/contract/quantized.py checked every argument."""

import numpy as np

_FILE = "qgemm.cl"


def _window(plan):
    return (plan.n, plan.h, plan.w, plan.c, plan.kh, plan.kw, plan.sh, plan.sw, plan.pad_top,
            plan.pad_left, plan.oh, plan.ow)


class OpenCLQuantizedOps:
    """The quantized section of OpenCLBackend (its rt and _run1d)."""

    def _quantized_upload(self, array):
        out = self.rt.alloc(array.shape, array.dtype)
        self.rt.write(out, array)
        return out

    def _empty_u8(self, shape):
        return self.rt.alloc(shape, np.uint8)

    def _quantized_path(self):
        return self.name

    def _quantize_u8(self, out, x, inv_scale, zp):
        self._run1d(_FILE, "quantize_u8", x.size, out, x, np.float32(inv_scale), zp, x.size)

    def _dequantize_u8(self, out, x, scale, zp):
        self._run1d(_FILE, "dequantize_u8", x.size, out, x, np.float32(scale), zp, x.size)

    def _qgemm_forward(self, out, a, w, column_offset, multiplier, zp, relu, m, k, n):
        # out passes as both the uint8 and the float pointer; the kernel writes the one it is
        self._run1d(_FILE, "qgemm_forward", m * n, out, out, a, w, column_offset, multiplier, zp,
                    int(relu), int(out.dtype == np.uint8), m, k, n)

    def _qconv2d_forward(self, out, x, w, column_offset, multiplier, zp, relu, x_zp, plan):
        self._run1d(_FILE, "qconv2d_forward", out.size, out, out, x, w, column_offset, multiplier, zp,
                    int(relu), int(out.dtype == np.uint8), x_zp, *_window(plan), plan.oc)

    def _max_pool2d_u8(self, out, x, plan):
        self._run1d(_FILE, "max_pool2d_u8", out.size, out, x, *_window(plan))

    def _add_u8(self, out, a, b, za, zb, ma, mb, zo, relu):
        self._run1d(_FILE, "add_u8", a.size, out, a, b, za, zb, np.int64(ma), np.int64(mb), zo,
                    int(relu), a.size)
