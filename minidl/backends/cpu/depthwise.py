"""The depthwise convolution ops of the cpu backend, on csrc/depthwise.c's kernels.

`DepthwiseOps` is a mixin of CpuBackend; its plan is the contract's Window2D, whose C struct
(window.h, with f = C * M) is built once and kept in the plan (_ffi.window_struct).
"""

from ._ffi import checked, ffi, output, raise_for_status, require_lib, window_struct


def _call(op, plan, kernel, outputs, inputs):
    """Run C kernel `kernel` of `op` on (name, tensor) outputs then inputs (a None tensor becomes
    NULL; the contract checked their shapes against the plan), then the plan's window struct."""
    pointers = [ffi.NULL if t is None else output(op, name, t) for name, t in outputs]
    pointers += [ffi.NULL if t is None else checked(op, name, t) for name, t in inputs]
    status = kernel(*pointers, window_struct(op, plan))
    if status:
        raise_for_status(op, status, f"input {plan.in_shape}, output {plan.out_shape}")


class DepthwiseOps:
    """The depthwise section's implementations of CpuBackend (contract/depthwise.py)."""

    def _depthwise_conv2d_forward(self, out, x, weight, bias, plan):
        op = "depthwise_conv2d_forward"
        _call(op, plan, require_lib().minidl_depthwise_conv2d_forward, [("out", out)],
              [("x", x), ("weight", weight), ("bias", bias)])

    def _depthwise_conv2d_backward_data(self, dx, dout, weight, plan):
        op = "depthwise_conv2d_backward_data"
        _call(op, plan, require_lib().minidl_depthwise_conv2d_backward_data, [("dx", dx)],
              [("dout", dout), ("weight", weight)])

    def _depthwise_conv2d_backward_filter(self, dweight, dbias, dout, x, plan):
        op = "depthwise_conv2d_backward_filter"
        _call(op, plan, require_lib().minidl_depthwise_conv2d_backward_filter,
              [("dweight", dweight), ("dbias", dbias)], [("dout", dout), ("x", x)])
