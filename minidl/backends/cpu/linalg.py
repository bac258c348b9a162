"""The 2-D convolutions of the cpu backend (its gemm: gemm.py), on the C kernels in
csrc/conv*.c; with precision="bfloat16" and AMX on csrc/conv_bf16.c; otherwise (float16, or no
AMX) the operands are rounded into kept buffers (rounded_operands.py) and the float32 kernels run.

`LinalgOps` is a mixin of CpuBackend: the underscore names of contract/convolution.py. Every
tensor is a C-contiguous float32 numpy array; the C code reads and writes it in place.
"""

import numpy as np

from ._ffi import (CpuPlanScratch, checked, ffi, fptr, output, raise_for_status, require_lib,
                   window_struct)


class _ConvScratch:
    """The C view of one conv plan: its window struct and the scratch its kernels use,
    allocated once when the plan is made and reused by every step (CpuPlanScratch.conv)."""

    def __init__(self, op, plan):
        lib = require_lib()
        self.window = window_struct(op, plan)
        self.floats = lib.minidl_conv2d_scratch_floats(self.window)
        # the kernels keep packed weights here and read them with aligned vector loads
        raw = np.empty(self.floats + 16, dtype=np.float32)
        start = (-raw.ctypes.data % 64) // 4
        self.buffer = raw[start:start + self.floats]
        self.ptr = fptr(self.buffer)


def _scratch(op, plan):
    held = plan.scratch_for(CpuPlanScratch)
    if held.conv is None:  # a plan made by another backend's conv2d_plan: attach ours once
        held.conv = _ConvScratch(op, plan)
    return held.conv


def _raise(op, status, plan):
    raise_for_status(op, status, f"input {plan.in_shape}, output {plan.out_shape}; build the plan with "
                                 f"the cpu backend's conv2d_plan")


def _conv_kernel(op, precision):
    """The C kernel of conv op `op` for `precision` (checked by the contract): float32's,
    bfloat16's on AMX, or None (the caller rounds the operands into kept buffers and runs
    float32's: float16, and bfloat16 without AMX, whose C fallback would allocate its rounded
    copies at every call)."""
    lib = require_lib()
    if precision is None:
        return getattr(lib, f"minidl_{op}")
    return getattr(lib, f"minidl_{op}_bf16") if precision == "bfloat16" and lib.minidl_bf16_native() else None


class LinalgOps:
    """conv2d ops of the cpu backend (mixed into CpuBackend)."""

    def _conv2d_plan(self, plan):
        """The contract's new plan with this backend's scratch attached (once)."""
        plan.scratch_for(CpuPlanScratch).conv = _ConvScratch("conv2d_plan", plan)
        return plan

    # The contract (contract/convolution.py) checked every shape against the plan and the
    # precision; the pointers' checks are the cpu tensor's own (C-contiguous float32 arrays).
    def _conv2d_forward(self, out, x, weight, bias, plan, precision):
        op = "conv2d_forward"
        kernel = _conv_kernel(op, precision)
        if kernel is None:
            self._rounded_conv2d_forward(out, x, weight, bias, plan, precision)
            return
        pbias = ffi.NULL if bias is None else checked(op, "bias", bias)
        s = _scratch(op, plan)
        status = kernel(output(op, "out", out), checked(op, "x", x), checked(op, "weight", weight), pbias,
                        s.window, s.ptr, s.floats)
        if status:
            _raise(op, status, plan)

    def _conv2d_backward_data(self, dx, dout, weight, plan, precision):
        op = "conv2d_backward_data"
        kernel = _conv_kernel(op, precision)
        if kernel is None:
            self._rounded_conv2d_backward_data(dx, dout, weight, plan, precision)
            return
        s = _scratch(op, plan)
        status = kernel(output(op, "dx", dx), checked(op, "dout", dout), checked(op, "weight", weight),
                        s.window, s.ptr, s.floats)
        if status:
            _raise(op, status, plan)

    def _conv2d_backward_filter(self, dweight, dbias, dout, x, plan, precision):
        op = "conv2d_backward_filter"
        kernel = _conv_kernel(op, precision)
        if kernel is None:
            self._rounded_conv2d_backward_filter(dweight, dbias, dout, x, plan, precision)
            return
        pdb = ffi.NULL if dbias is None else output(op, "dbias", dbias)
        s = _scratch(op, plan)
        status = kernel(output(op, "dweight", dweight), pdb, checked(op, "dout", dout), checked(op, "x", x),
                        s.window, s.ptr, s.floats)
        if status:
            _raise(op, status, plan)
