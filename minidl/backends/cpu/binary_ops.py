"""The cpu ops of binary (xnor-popcount) inference (a mixin of CpuBackend); the C kernels are
csrc/binary_conv.c and its micro-kernels binary_popcount_{generic,avx2,avx512}.c."""

from ..quantizer_args import check_binary_conv, check_binary_thresholds, packed_kernel_shape, packed_shape
from ._ffi import INT32, checked, ffi, output, raise_for_status, window_struct


class CpuBinaryOps:
    def binary_pack_input(self, bits, x):
        op = "binary_pack_input"
        shape = packed_shape(op, bits, x)
        c = x.shape[-1]
        self._lib.minidl_binary_pack_input(output(op, "bits", bits, shape, INT32), checked(op, "x", x),
                                           x.size // max(c, 1), c)

    def binary_pack_kernel(self, bits, weight):
        op = "binary_pack_kernel"
        shape = packed_kernel_shape(op, bits, weight)
        kh, kw, c, f = weight.shape
        self._lib.minidl_binary_pack_kernel(output(op, "bits", bits, shape, INT32), checked(op, "weight", weight),
                                            kh * kw, c, f)

    def binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        op = "binary_conv2d_forward"
        check_binary_conv(op, out, bits, kernel_bits, bias, plan, pad_value)
        status = self._lib.minidl_binary_conv2d_forward(
            output(op, "out", out, plan.out_shape), checked(op, "bits", bits, dtype=INT32),
            checked(op, "kernel_bits", kernel_bits, dtype=INT32),
            ffi.NULL if bias is None else checked(op, "bias", bias), int(pad_value), window_struct(op, plan))
        if status:
            raise_for_status(op, status)

    def binary_pack_thresholds(self, bits, z, bounds):
        op = "binary_pack_thresholds"   # csrc/binary_threshold.c
        pixels, c = check_binary_thresholds(op, bits, z, bounds)
        self._lib.minidl_binary_pack_thresholds(output(op, "bits", bits, bits.shape, INT32), checked(op, "z", z),
                                                checked(op, "bounds", bounds), pixels, c)
