"""The int8 inference ops (minidl/backends/quantized_ops.py's contract) on the OpenCL device:
kernels/qgemm.cl, integer arithmetic, one work-item per output element (correct everywhere,
not yet tuned for GPUs)."""

import numpy as np

from ..quantized_ops import QuantizedOps, check, check_add, check_zero_point, conv_sizes, gemm_sizes

_FILE = "qgemm.cl"


def _window(plan):
    return (plan.n, plan.h, plan.w, plan.c, plan.kh, plan.kw, plan.sh, plan.sw, plan.pad_top,
            plan.pad_left, plan.oh, plan.ow)


class OpenCLQuantizedOps(QuantizedOps):
    name = "opencl"

    def upload(self, array):
        array = np.ascontiguousarray(array)
        out = self.backend.rt.alloc(array.shape, array.dtype)
        self.backend.rt.write(out, array)
        return out

    def empty_u8(self, shape):
        return self.backend.rt.alloc(tuple(shape), np.uint8)

    def to_numpy(self, x):
        return self.backend.rt.read(x)

    def _run(self, name, n, *args):
        self.backend._run1d(_FILE, name, n, *args)

    def quantize_u8(self, out, x, scale, zero_point):
        zp = check_zero_point("quantize_u8", zero_point)
        check("quantize_u8", "x", x, x.shape, np.float32)
        check("quantize_u8", "out", out, x.shape, np.uint8)
        self._run("quantize_u8", x.size, out, x, np.float32(1.0 / float(scale)), zp, x.size)

    def dequantize_u8(self, out, x, scale, zero_point):
        zp = check_zero_point("dequantize_u8", zero_point)
        check("dequantize_u8", "x", x, x.shape, np.uint8)
        check("dequantize_u8", "out", out, x.shape, np.float32)
        self._run("dequantize_u8", x.size, out, x, np.float32(scale), zp, x.size)

    def qgemm_forward(self, out, a, w, column_offset, multiplier, zero_point, relu):
        m, k, n = gemm_sizes("qgemm_forward", out, a, w, column_offset, multiplier)
        zp = check_zero_point("qgemm_forward", zero_point)
        # out passes as both the uint8 and the float pointer; the kernel writes the one it is
        self._run("qgemm_forward", m * n, out, out, a, w, column_offset, multiplier, zp,
                  int(bool(relu)), int(out.dtype == np.uint8), m, k, n)

    def qconv2d_forward(self, out, x, w, column_offset, multiplier, zero_point, relu, x_zero_point, plan):
        op = "qconv2d_forward"
        conv_sizes(op, out, x, w, column_offset, multiplier, plan)
        self._run("qconv2d_forward", out.size, out, out, x, w, column_offset, multiplier,
                  check_zero_point(op, zero_point), int(bool(relu)), int(out.dtype == np.uint8),
                  check_zero_point(op, x_zero_point), *_window(plan), plan.oc)

    def max_pool2d_u8(self, out, x, plan):
        check("max_pool2d_u8", "x", x, plan.in_shape, np.uint8)
        check("max_pool2d_u8", "out", out, (plan.n, plan.oh, plan.ow, plan.c), np.uint8)
        self._run("max_pool2d_u8", out.size, out, x, *_window(plan))

    def add_u8(self, out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier,
               out_zero_point, relu):
        za, zb, zo, ma, mb = check_add("add_u8", out, a, b, a_zero_point, b_zero_point, a_multiplier,
                                       b_multiplier, out_zero_point)
        self._run("add_u8", a.size, out, a, b, za, zb, np.int64(ma), np.int64(mb), zo,
                  int(bool(relu)), a.size)
