"""The larq section on the opencl backend: larq's quantizers (kernels/quantize.cl) and binary
(xnor-popcount) inference (kernels/binary.cl, OpenCL's popcount on 32-bit words). A mixin of
OpenCLBackend (its _run1d). The contract (minidl/backends/contract/larq.py) checked every
argument."""

import numpy as np

FILTERS_PER_ITEM = 4   # binary.cl's default


def _stat_args(x, stat, code, param):
    # a kernel argument must be a buffer: x stands in for an absent stat (never read)
    return (x if stat is None else stat), np.int32(stat is not None), np.int32(code), np.float32(param)


class LarqOps:
    """larq's quantizers and binary inference of OpenCLBackend."""

    def _quantize_forward(self, out, x, code, name, param, stat):
        self._run1d("quantize.cl", "quantize_forward", x.size, out, x, *_stat_args(x, stat, code, param),
                    np.int32(x.size))

    def _quantize_backward(self, dx, dout, x, code, name, param, stat):
        self._run1d("quantize.cl", "quantize_backward", x.size, dx, dout, x, *_stat_args(x, stat, code, param),
                    np.int32(x.size))

    def _binary_pack_input(self, bits, x):
        c = x.shape[-1]
        self._run1d("binary.cl", "binary_pack_input", bits.size, bits, x, c, -(-c // 32), bits.size)

    def _binary_pack_kernel(self, bits, weight):
        c, f = weight.shape[2], weight.shape[3]
        self._run1d("binary.cl", "binary_pack_kernel", bits.size, bits, weight, c, -(-c // 32), f, bits.size)

    def _binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        groups = -(-plan.oc // FILTERS_PER_ITEM)
        total = plan.n * plan.oh * plan.ow * groups
        self._run1d("binary.cl", "binary_conv2d_forward", total, out, bits, kernel_bits,
                    out if bias is None else bias, np.int32(bias is not None), pad_value,
                    plan.h, plan.w, plan.c, plan.oh, plan.ow, plan.kh, plan.kw, plan.sh, plan.sw,
                    plan.pad_top, plan.pad_left, plan.dh, plan.dw, plan.oc, groups, total)

    def _binary_pack_thresholds(self, bits, z, bounds, pixels, c):
        self._run1d("binary_threshold.cl", "binary_pack_thresholds", bits.size, bits, z, bounds, c, -(-c // 32),
                    bits.size)
