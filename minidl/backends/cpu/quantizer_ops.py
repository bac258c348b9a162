"""The cpu ops of larq's quantizers (a mixin of CpuBackend, which provides _lib); the C kernels
are csrc/quantize.c (quantize.h documents the codes and parameters)."""

from ..quantizer_args import quantizer_code
from ._ffi import checked, ffi, output


class CpuQuantizerOps:
    def quantize_forward(self, out, x, name, param=0.0, stat=None):
        op = "quantize_forward"
        code, param = quantizer_code(op, name, param, stat, x.size)
        px = checked(op, "x", x)
        self._lib.minidl_quantize_forward(output(op, "out", out, x.shape), px,
                                          ffi.NULL if stat is None else checked(op, "stat", stat, (1,)),
                                          code, param, x.size)

    def quantize_backward(self, dx, dout, x, name, param=0.0, stat=None):
        op = "quantize_backward"
        code, param = quantizer_code(op, name, param, stat, x.size)
        px = checked(op, "x", x)
        self._lib.minidl_quantize_backward(output(op, "dx", dx, x.shape), checked(op, "dout", dout, x.shape),
                                           px, ffi.NULL if stat is None else checked(op, "stat", stat, (1,)),
                                           code, param, x.size)
