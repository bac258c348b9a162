"""The geometry of a depthwise convolution, shared by every backend: its Window2D plan and its
depth multiplier (contract/depthwise.py checks the tensors against them).

A depthwise kernel (KH, KW, C, M) convolves each input channel c with its own M filters
kernel[:, :, c, m]; output channel c * M + m holds the result, so the output has C * M
channels (plan.oc) and M = plan.oc // plan.c (Keras's depth_multiplier).
"""

from .window import make_window


def depthwise_window(op, in_shape, kernel_shape, strides, padding):
    """A Window2D for input (N, H, W, C) and a depthwise kernel (KH, KW, C, M); oc = C * M."""
    if len(in_shape) != 4 or len(kernel_shape) != 4 or kernel_shape[2] != in_shape[3]:
        raise ValueError(f"{op}: input shape {tuple(in_shape)} must be (N, H, W, C) and kernel "
                         f"shape {tuple(kernel_shape)} (KH, KW, C, M) with the same C")
    kh, kw, c, multiplier = kernel_shape
    if min(kh, kw, multiplier, c) < 1 or min(strides) < 1:
        raise ValueError(f"{op}: kernel shape {tuple(kernel_shape)} and strides {tuple(strides)} "
                         f"must be positive")
    plan = make_window(in_shape, (kh, kw), strides, padding, out_channels=c * multiplier)
    if plan.oh < 1 or plan.ow < 1:
        raise ValueError(f"{op}: kernel {(kh, kw)} with strides {tuple(strides)} and padding "
                         f"{padding!r} leaves no output for input {tuple(in_shape)}")
    return plan


def multiplier(plan):
    """M, the depth multiplier of a depthwise plan (one made by depthwise_window)."""
    if plan.c < 1 or plan.oc % plan.c:
        raise ValueError(f"depthwise convolution: the plan's {plan.oc} output channels are not a "
                         f"multiple of its {plan.c} input channels; build it with "
                         f"depthwise_conv2d_plan")
    return plan.oc // plan.c
