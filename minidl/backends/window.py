"""The geometry of a sliding 2-D window (a convolution or a pooling): Window2D, the plan that
the contract's conv and pool ops take, TensorFlow's output-size and "same" padding rules, and
the geometry of a transposed convolution (Keras's conv_transpose output size and alignment)."""

import math
from dataclasses import dataclass


def effective_kernel(kernel, dilation=1):
    """Extent of a kernel of `kernel` taps `dilation` apart: (kernel - 1) * dilation + 1."""
    return (kernel - 1) * dilation + 1


def conv_output_length(size, kernel, stride, padding, dilation=1):
    """Keras/TensorFlow output length along one spatial axis."""
    if padding in ("same", "causal"):   # causal: left-padded by the kernel's extent - 1
        return -(-size // stride)
    if padding == "valid":
        return (size - effective_kernel(kernel, dilation)) // stride + 1
    raise ValueError(f"padding must be 'same', 'valid' or 'causal', got {padding!r}")


def same_padding(size, kernel, stride, dilation=1):
    """TensorFlow's asymmetric 'same' padding: (before, after); the odd pixel goes after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + effective_kernel(kernel, dilation) - size, 0)
    return total // 2, total - total // 2


@dataclass
class Window2D:
    """Geometry of a sliding 2-D window (a convolution or a pooling), built once per layer.

    The fields are plain ints so every backend can pass them to its kernels; a backend keeps
    its own per-plan data (buffers, C structs, derived plans) in a dataclass of its own, which
    `scratch_for` holds for the plan and keeps alive between steps. Tap (ky, kx) of
    output (oy, ox) reads input (oy * sh - pad_top + ky * dh, ox * sw - pad_left + kx * dw).
    A grouped convolution (groups > 1) splits c and oc into `groups` equal slices; output
    slice g sees input slice g only. pad_bottom / pad_right may be negative (a transposed
    convolution's geometry): the last input rows / columns are then read by no window.
    """

    n: int          # batch size
    h: int          # input height
    w: int          # input width
    c: int          # input channels
    kh: int         # window height
    kw: int         # window width
    sh: int         # stride along height
    sw: int         # stride along width
    pad_top: int
    pad_bottom: int
    pad_left: int
    pad_right: int
    oh: int         # output height
    ow: int         # output width
    oc: int         # output channels (conv: filters; pooling: == c)
    dh: int = 1     # dilation along height
    dw: int = 1     # dilation along width
    groups: int = 1

    def __post_init__(self):
        self._per_backend = {}   # a backend's scratch type -> this plan's instance of it

    def scratch_for(self, kind):
        """This plan's instance of `kind`, the dataclass in which one backend keeps its per-plan
        data (every field defaulted), made by kind() on first use. Each backend reads and
        writes only its own type; nothing else on the plan changes."""
        held = self._per_backend.get(kind)
        if held is None:
            held = kind()
            self._per_backend[kind] = held
        return held

    @property
    def in_shape(self):
        return (self.n, self.h, self.w, self.c)

    @property
    def out_shape(self):
        return (self.n, self.oh, self.ow, self.oc)

    @property
    def kernel_shape(self):
        """A convolution's weight: (kh, kw, c / groups, oc)."""
        return (self.kh, self.kw, self.c // self.groups, self.oc)


def is_pointwise(plan):
    """A 1x1, stride-1, ungrouped, unpadded convolution: x itself is the patch matrix (no im2col),
    and the input gradient is one GEMM. The same rule as csrc/internal/conv_paths.h's
    conv_is_pointwise, the one the C kernels use."""
    return (plan.kh == plan.kw == plan.sh == plan.sw == plan.groups == 1 and plan.pad_top == 0
            and plan.pad_left == 0 and plan.oh == plan.h and plan.ow == plan.w)


def make_window(in_shape, kernel, strides, padding, out_channels=None, dilation=(1, 1), groups=1):
    """Build a Window2D for input (N, H, W, C), kernel (kh, kw), strides (sh, sw)."""
    n, h, w, c = in_shape
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilation
    oh = conv_output_length(h, kh, sh, padding, dh)
    ow = conv_output_length(w, kw, sw, padding, dw)
    if padding == "same":
        pt, pb = same_padding(h, kh, sh, dh)
        pl, pr = same_padding(w, kw, sw, dw)
    elif padding == "causal":
        # Keras's Conv1D(padding="causal"): output t sees inputs up to t only, all padding
        # before (a 1-D layer runs as (N, 1, L, C), so height pads by (1 - 1) * dh = 0)
        pt, pb = effective_kernel(kh, dh) - 1, 0
        pl, pr = effective_kernel(kw, dw) - 1, 0
    else:
        pt = pb = pl = pr = 0
    return Window2D(n, h, w, c, kh, kw, sh, sw, pt, pb, pl, pr, oh, ow,
                    c if out_channels is None else out_channels, dh, dw, groups)


def transpose_alignment(size, kernel, stride, padding, output_padding, dilation):
    """(output length, pad_top) of a transposed convolution along one axis, as Keras computes
    them (keras/src/backend/common/backend_utils.py: the output length of
    _get_output_shape_given_tf_padding, the crop of its jax conversion, which TensorFlow's
    conv2d_transpose agrees with). Output position o receives input i through tap k when
    o = i * stride - pad_top + k * dilation."""
    k = effective_kernel(kernel, dilation)
    if padding == "valid":
        extra = max(k, stride) - k if output_padding is None else output_padding
        return (size - 1) * stride + k + extra, 0
    if padding != "same":
        raise ValueError(f"padding must be 'same' or 'valid', got {padding!r}")
    if output_padding is None:
        length, pad_len = size * stride, stride + k - 2
    else:
        length, pad_len = (size - 1) * stride + k % 2 + output_padding, k + k % 2 - 2 + output_padding
    left = min(pad_len // 2 + pad_len % 2, k - 1)   # jax's padding of the stride-dilated input
    return length, k - 1 - left


def transpose_window(in_shape, kernel_shape, strides, padding, output_padding, dilation):
    """The Window2D of the convolution whose backward-data is the transposed convolution of
    input (N, H, W, Cin) with kernel (kh, kw, filters, Cin): that convolution maps the
    transposed output (N, OH', OW', filters) to (N, H, W, Cin), so its out_shape is in_shape."""
    n, h, w, cin = in_shape
    kh, kw, filters, _ = kernel_shape
    pads = (None, None) if output_padding is None else output_padding
    if output_padding is not None and any(p >= s for p, s in zip(output_padding, strides)):
        raise ValueError(f"output_padding must be less than strides in every dimension, got "
                         f"output_padding={tuple(output_padding)}, strides={tuple(strides)}")
    rows, top = transpose_alignment(h, kh, strides[0], padding, pads[0], dilation[0])
    cols, left = transpose_alignment(w, kw, strides[1], padding, pads[1], dilation[1])
    bottom = (h - 1) * strides[0] + effective_kernel(kh, dilation[0]) - rows - top
    right = (w - 1) * strides[1] + effective_kernel(kw, dilation[1]) - cols - left
    return Window2D(n, rows, cols, filters, kh, kw, strides[0], strides[1], top, bottom, left, right,
                    h, w, cin, dilation[0], dilation[1])
