"""The opencl ops of binary (xnor-popcount) inference (a mixin of OpenCLBackend, which provides
_run1d); the kernels are kernels/binary.cl (OpenCL's popcount on 32-bit words)."""

import numpy as np

from ..quantizer_args import check_binary_conv, check_binary_thresholds, packed_kernel_shape, packed_shape

FILTERS_PER_ITEM = 4   # binary.cl's default


class BinaryOps:
    def binary_pack_input(self, bits, x):
        packed_shape("opencl binary_pack_input", bits, x)
        c = x.shape[-1]
        self._run1d("binary.cl", "binary_pack_input", bits.size, bits, x, c, -(-c // 32), bits.size)

    def binary_pack_kernel(self, bits, weight):
        packed_kernel_shape("opencl binary_pack_kernel", bits, weight)
        c, f = weight.shape[2], weight.shape[3]
        self._run1d("binary.cl", "binary_pack_kernel", bits.size, bits, weight, c, -(-c // 32), f, bits.size)

    def binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        check_binary_conv("opencl binary_conv2d_forward", out, bits, kernel_bits, bias, plan, pad_value)
        groups = -(-plan.oc // FILTERS_PER_ITEM)
        total = plan.n * plan.oh * plan.ow * groups
        self._run1d("binary.cl", "binary_conv2d_forward", total, out, bits, kernel_bits,
                    out if bias is None else bias, np.int32(bias is not None), int(pad_value),
                    plan.h, plan.w, plan.c, plan.oh, plan.ow, plan.kh, plan.kw, plan.sh, plan.sw,
                    plan.pad_top, plan.pad_left, plan.dh, plan.dw, plan.oc, groups, total)

    def binary_pack_thresholds(self, bits, z, bounds):
        _, c = check_binary_thresholds("opencl binary_pack_thresholds", bits, z, bounds)
        self._run1d("binary_threshold.cl", "binary_pack_thresholds", bits.size, bits, z, bounds, c, -(-c // 32),
                    bits.size)
