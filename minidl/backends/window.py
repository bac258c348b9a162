"""The geometry of a sliding 2-D window (a convolution or a pooling): Window2D, the plan that
the contract's conv and pool ops take, and TensorFlow's output-size and "same" padding rules."""

import math
from dataclasses import dataclass


def conv_output_length(size, kernel, stride, padding):
    """Keras/TensorFlow output length along one spatial axis."""
    if padding == "same":
        return -(-size // stride)
    if padding == "valid":
        return (size - kernel) // stride + 1
    raise ValueError(f"padding must be 'same' or 'valid', got {padding!r}")


def same_padding(size, kernel, stride):
    """TensorFlow's asymmetric 'same' padding: (before, after); the odd pixel goes after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


@dataclass
class Window2D:
    """Geometry of a sliding 2-D window (a convolution or a pooling), built once per layer.

    The fields are plain ints so every backend can pass them to its kernels;
    a backend may attach its own scratch buffers in `scratch` (a dict keyed by
    whatever it likes), which the plan keeps alive between steps.
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

    def __post_init__(self):
        self.scratch = {}

    @property
    def in_shape(self):
        return (self.n, self.h, self.w, self.c)

    @property
    def out_shape(self):
        return (self.n, self.oh, self.ow, self.oc)


def make_window(in_shape, kernel, strides, padding, out_channels=None):
    """Build a Window2D for input (N, H, W, C), kernel (kh, kw), strides (sh, sw)."""
    n, h, w, c = in_shape
    kh, kw = kernel
    sh, sw = strides
    oh = conv_output_length(h, kh, sh, padding)
    ow = conv_output_length(w, kw, sw, padding)
    if padding == "same":
        pt, pb = same_padding(h, kh, sh)
        pl, pr = same_padding(w, kw, sw)
    else:
        pt = pb = pl = pr = 0
    return Window2D(n, h, w, c, kh, kw, sh, sw, pt, pb, pl, pr, oh, ow,
                    c if out_channels is None else out_channels)
