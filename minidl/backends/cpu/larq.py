"""The larq section on the cpu backend: larq's quantizers (csrc/quantize.c; quantize.h documents
the codes and parameters) and binary (xnor-popcount) inference (csrc/binary_conv.c and its
micro-kernels binary_popcount_{generic,avx2,avx512}.c). A mixin of CpuBackend (its _lib). The
contract (minidl/backends/contract/larq.py) checked every argument; the pointers' checks here
are the cpu tensor's own."""

from ._ffi import INT32, checked, ffi, output, raise_for_status, window_struct


def _stat(op, stat):
    return ffi.NULL if stat is None else checked(op, "stat", stat)


class CpuLarqOps:
    """larq's quantizers and binary inference of CpuBackend."""

    def _quantize_forward(self, out, x, code, name, param, stat):
        op = "quantize_forward"
        self._lib.minidl_quantize_forward(output(op, "out", out), checked(op, "x", x), _stat(op, stat),
                                          code, param, x.size)

    def _quantize_backward(self, dx, dout, x, code, name, param, stat):
        op = "quantize_backward"
        self._lib.minidl_quantize_backward(output(op, "dx", dx), checked(op, "dout", dout), checked(op, "x", x),
                                           _stat(op, stat), code, param, x.size)

    def _binary_pack_input(self, bits, x):
        op = "binary_pack_input"
        c = x.shape[-1]
        self._lib.minidl_binary_pack_input(output(op, "bits", bits, dtype=INT32), checked(op, "x", x),
                                           x.size // max(c, 1), c)

    def _binary_pack_kernel(self, bits, weight):
        op = "binary_pack_kernel"
        kh, kw, c, f = weight.shape
        self._lib.minidl_binary_pack_kernel(output(op, "bits", bits, dtype=INT32), checked(op, "weight", weight),
                                            kh * kw, c, f)

    def _binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        op = "binary_conv2d_forward"
        status = self._lib.minidl_binary_conv2d_forward(
            output(op, "out", out), checked(op, "bits", bits, dtype=INT32),
            checked(op, "kernel_bits", kernel_bits, dtype=INT32),
            ffi.NULL if bias is None else checked(op, "bias", bias), pad_value, window_struct(op, plan))
        if status:
            raise_for_status(op, status)

    def _binary_conv2d_pool_forward(self, out, bits, kernel_bits, bias, plan, pad_value, pool):
        op = "binary_conv2d_forward"    # with pool: the convolution and its max pooling in one pass
        status = self._lib.minidl_binary_conv2d_pool_forward(
            output(op, "out", out), checked(op, "bits", bits, dtype=INT32),
            checked(op, "kernel_bits", kernel_bits, dtype=INT32),
            ffi.NULL if bias is None else checked(op, "bias", bias), pad_value, window_struct(op, plan),
            window_struct(op, pool))
        if status:
            raise_for_status(op, status)

    def _binary_pack_thresholds(self, bits, z, bounds, pixels, c):
        op = "binary_pack_thresholds"   # csrc/binary_threshold.c
        self._lib.minidl_binary_pack_thresholds(output(op, "bits", bits, bits.shape, INT32), checked(op, "z", z),
                                                checked(op, "bounds", bounds), pixels, c)
