"""The layer-ops section of the contract (contract/layer_ops.py, which checked every tensor) on
the cpu backend, a mixin of CpuBackend (which provides _lib and _column_scratch); the C
kernels are csrc/prelu.c, csrc/noise.c and the transpose of csrc/elementwise.c."""

from ._ffi import checked, ffi, output


class CpuLayerOps:
    def _transpose(self, out, x, axes):
        op = "transpose"
        px = checked(op, "x", x)
        self._lib.minidl_transpose(output(op, "out", out, out.shape), px, ffi.new("int64_t[]", x.shape),
                                   ffi.new("int64_t[]", axes), x.ndim)

    def _prelu_forward(self, out, x, alpha, rows, k):
        op = "prelu_forward"
        px = checked(op, "x", x)
        self._lib.minidl_prelu_forward(output(op, "out", out, x.shape), px, checked(op, "alpha", alpha), rows, k)

    def _prelu_backward(self, dx, dalpha, dout, x, alpha, rows, k):
        op = "prelu_backward"
        px = checked(op, "x", x)
        self._lib.minidl_prelu_backward(output(op, "dx", dx, x.shape), output(op, "dalpha", dalpha, (k,)),
                                        checked(op, "dout", dout, x.shape), px, checked(op, "alpha", alpha),
                                        rows, k, self._column_scratch(k))

    def _gaussian_noise(self, out, x, stddev, seed):
        op = "gaussian_noise"
        px = checked(op, "x", x)
        self._lib.minidl_gaussian_noise(output(op, "out", out, x.shape), px, stddev, seed, x.size)

    def _channel_mask_multiply(self, out, x, mask):
        op = "channel_mask_multiply"
        px = checked(op, "x", x)
        n, k, c = x.shape
        self._lib.minidl_channel_mask_multiply(output(op, "out", out, x.shape), px,
                                               checked(op, "mask", mask, (n, c)), n, k, c)
