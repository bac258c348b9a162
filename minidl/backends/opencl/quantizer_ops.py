"""The opencl ops of larq's quantizers (a mixin of OpenCLBackend, which provides _run1d and
_check); the kernels are kernels/quantize.cl."""

import numpy as np

from ..quantizer_args import quantizer_code


class QuantizerOps:
    def _quantizer_args(self, op, name, param, stat, x, tensors):
        code, param = quantizer_code(op, name, param, stat, x.size)
        for arg, t in tensors.items():
            self._check(op, arg, t, tuple(x.shape))
        # a kernel argument must be a buffer: x stands in for an absent stat (never read)
        return (x if stat is None else stat), np.int32(stat is not None), np.int32(code), np.float32(param)

    def quantize_forward(self, out, x, name, param=0.0, stat=None):
        op = "quantize_forward"
        args = self._quantizer_args(op, name, param, stat, x, {"out": out})
        self._run1d("quantize.cl", "quantize_forward", x.size, out, x, *args, np.int32(x.size))

    def quantize_backward(self, dx, dout, x, name, param=0.0, stat=None):
        op = "quantize_backward"
        args = self._quantizer_args(op, name, param, stat, x, {"dx": dx, "dout": dout})
        self._run1d("quantize.cl", "quantize_backward", x.size, dx, dout, x, *args, np.int32(x.size))
