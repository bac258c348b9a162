"""The pooling section of the contract (contract/pooling.py, which checked every tensor against
the plan or the pads) on the cpu backend: the C kernels of csrc/pool.c (window maxima and
means, global average pooling, zero padding)."""

from ._ffi import INT32, checked, output, window_struct


class CpuPoolingOps:
    """Mixin of CpuBackend (which provides _lib): the pooling ops."""

    def _max_pool2d_forward(self, out, argmax, x, plan):
        op = "max_pool2d_forward"
        self._lib.minidl_max_pool2d_forward(output(op, "out", out), output(op, "argmax", argmax, dtype=INT32),
                                            checked(op, "x", x), window_struct(op, plan))

    def _max_pool2d_backward(self, dx, dout, argmax, plan):
        op = "max_pool2d_backward"
        self._lib.minidl_max_pool2d_backward(output(op, "dx", dx), checked(op, "dout", dout),
                                             checked(op, "argmax", argmax, dtype=INT32), window_struct(op, plan))

    def _avg_pool2d_forward(self, out, x, plan):
        op = "avg_pool2d_forward"
        self._lib.minidl_avg_pool2d_forward(output(op, "out", out), checked(op, "x", x), window_struct(op, plan))

    def _avg_pool2d_backward(self, dx, dout, plan):
        op = "avg_pool2d_backward"
        self._lib.minidl_avg_pool2d_backward(output(op, "dx", dx), checked(op, "dout", dout),
                                             window_struct(op, plan))

    def _global_avg_pool_forward(self, out, x):
        op = "global_avg_pool_forward"
        n, h, w, c = x.shape
        self._lib.minidl_global_avg_pool_forward(output(op, "out", out), checked(op, "x", x), n, h * w, c)

    def _global_avg_pool_backward(self, dx, dout):
        op = "global_avg_pool_backward"
        n, h, w, c = dx.shape
        self._lib.minidl_global_avg_pool_backward(output(op, "dx", dx), checked(op, "dout", dout), n, h * w, c)

    def _pad2d_forward(self, out, x, pads):
        op = "pad2d_forward"
        n, h, w, c = x.shape
        self._lib.minidl_pad2d_forward(output(op, "out", out), checked(op, "x", x), n, h, w, c, *pads)

    def _pad2d_backward(self, dx, dout, pads):
        op = "pad2d_backward"
        n, h, w, c = dx.shape
        self._lib.minidl_pad2d_backward(output(op, "dx", dx), checked(op, "dout", dout), n, h, w, c, *pads)
