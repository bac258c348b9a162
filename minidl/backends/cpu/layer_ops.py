"""The cpu ops behind PReLU, GaussianNoise and SpatialDropout2D (a mixin of CpuBackend, which
provides _lib and _column_scratch); the C kernels are csrc/prelu.c and csrc/noise.c."""

from ..numpy_ops.layer_ops import check_axes, check_channel_mask, check_seed
from ._ffi import checked, ffi, output


def _rows(op, x, alpha):
    if x.ndim != 2 or alpha.shape != x.shape[1:]:
        raise ValueError(f"{op}: x must be (rows, K) and alpha (K,), got x {x.shape} and alpha {alpha.shape}")
    return x.shape


class CpuLayerOps:
    def transpose(self, out, x, axes):
        op = "transpose"
        axes = check_axes(op, out, x, axes)
        px = checked(op, "x", x)
        self._lib.minidl_transpose(output(op, "out", out, out.shape), px, ffi.new("int64_t[]", x.shape),
                                   ffi.new("int64_t[]", axes), x.ndim)

    def prelu_forward(self, out, x, alpha):
        op = "prelu_forward"
        rows, k = _rows(op, x, alpha)
        px = checked(op, "x", x)
        self._lib.minidl_prelu_forward(output(op, "out", out, x.shape), px, checked(op, "alpha", alpha), rows, k)

    def prelu_backward(self, dx, dalpha, dout, x, alpha):
        op = "prelu_backward"
        rows, k = _rows(op, x, alpha)
        px = checked(op, "x", x)
        self._lib.minidl_prelu_backward(output(op, "dx", dx, x.shape), output(op, "dalpha", dalpha, (k,)),
                                        checked(op, "dout", dout, x.shape), px, checked(op, "alpha", alpha),
                                        rows, k, self._column_scratch(k))

    def gaussian_noise(self, out, x, stddev, seed):
        op = "gaussian_noise"
        check_seed(op, seed)
        px = checked(op, "x", x)
        self._lib.minidl_gaussian_noise(output(op, "out", out, x.shape), px, float(stddev),
                                        int(seed) % 2 ** 64, x.size)

    def channel_mask_multiply(self, out, x, mask):
        op = "channel_mask_multiply"
        check_channel_mask(op, out, x, mask)
        px = checked(op, "x", x)
        n, k, c = x.shape
        self._lib.minidl_channel_mask_multiply(output(op, "out", out, x.shape), px,
                                               checked(op, "mask", mask, (n, c)), n, k, c)
