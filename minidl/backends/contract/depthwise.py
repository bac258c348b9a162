"""The depthwise section of the contract: DepthwiseConv2D's plan and its forward, input-gradient
and kernel-gradient ops (SeparableConv2D adds a 1x1 gemm). A kernel (KH, KW, C, M) convolves
input channel c with its own M filters kernel[:, :, c, m] into output channel c * M + m
(minidl/backends/depthwise_geometry.py). The public ops check every tensor against the plan
once; a backend implements the underscore names (numpy_ops/depthwise.py, cpu/depthwise.py,
opencl/depthwise.py)."""

from ..depthwise_geometry import depthwise_window, multiplier
from .checks import optional_shape, same_shape


def _kernel_shape(plan):
    """(KH, KW, C, M) of a depthwise plan (a ValueError for a plan that is not one)."""
    return plan.kh, plan.kw, plan.c, multiplier(plan)


class DepthwiseSection:
    """The contract's depthwise conv2d ops; a backend implements the underscore names."""

    def depthwise_conv2d_plan(self, in_shape, kernel_shape, strides, padding):
        """A Window2D for input (N, H, W, C) and a depthwise kernel (KH, KW, C, M); plan.oc = C * M."""
        return depthwise_window("depthwise_conv2d_plan", in_shape, kernel_shape, strides, padding)

    def depthwise_conv2d_forward(self, out, x, weight, bias, plan):
        """out (N, OH, OW, C*M) = depthwise conv(x (N, H, W, C), weight (KH, KW, C, M)) + bias (C*M,) or None."""
        op = "depthwise_conv2d_forward"
        kernel = _kernel_shape(plan)
        same_shape(op, "out", out, plan.out_shape)
        same_shape(op, "x", x, plan.in_shape)
        same_shape(op, "weight", weight, kernel)
        optional_shape(op, "bias", bias, (plan.oc,))
        self._depthwise_conv2d_forward(out, x, weight, bias, plan)

    def depthwise_conv2d_backward_data(self, dx, dout, weight, plan):
        """dx (N, H, W, C) = gradient of the depthwise output dout (N, OH, OW, C*M) w.r.t. its input."""
        op = "depthwise_conv2d_backward_data"
        kernel = _kernel_shape(plan)
        same_shape(op, "dx", dx, plan.in_shape)
        same_shape(op, "dout", dout, plan.out_shape)
        same_shape(op, "weight", weight, kernel)
        self._depthwise_conv2d_backward_data(dx, dout, weight, plan)

    def depthwise_conv2d_backward_filter(self, dweight, dbias, dout, x, plan):
        """dweight (KH, KW, C, M) and dbias (C*M,) or None from dout and the forward input x."""
        op = "depthwise_conv2d_backward_filter"
        kernel = _kernel_shape(plan)
        same_shape(op, "dweight", dweight, kernel)
        optional_shape(op, "dbias", dbias, (plan.oc,))
        same_shape(op, "dout", dout, plan.out_shape)
        same_shape(op, "x", x, plan.in_shape)
        self._depthwise_conv2d_backward_filter(dweight, dbias, dout, x, plan)
