"""UpSampling2D on the numpy backend: each axis is a small interpolation matrix A (out, in),
so out = A_h x A_w^T per image and channel, and the backward pass applies the transposes.
The weights are csrc/upsample.h's (nearest: Keras's repeat; bilinear: half-pixel centers)."""

import numpy as np


def axis_matrix(length, scale, bilinear, dtype):
    """A (length * scale, length): row o holds output o's weights on the inputs of one axis."""
    o = np.arange(length * scale)
    if bilinear:
        src = np.maximum((o + 0.5) / scale - 0.5, 0.0)
        i0 = np.floor(src).astype(np.int64)
        t = src - i0
        i1 = np.minimum(i0 + 1, length - 1)
    else:
        i0 = i1 = o // scale
        t = np.zeros(o.shape)
    a = np.zeros((o.size, length))
    np.add.at(a, (o, i0), 1.0 - t)
    np.add.at(a, (o, i1), t)
    return a.astype(dtype)


def forward(out, x, sh, sw, bilinear):
    _, h, w, _ = x.shape
    a_h, a_w = axis_matrix(h, sh, bilinear, x.dtype), axis_matrix(w, sw, bilinear, x.dtype)
    out[...] = np.einsum("ph,nhwc,qw->npqc", a_h, x, a_w, optimize=True)


def backward(dx, dout, sh, sw, bilinear):
    _, h, w, _ = dx.shape
    a_h, a_w = axis_matrix(h, sh, bilinear, dout.dtype), axis_matrix(w, sw, bilinear, dout.dtype)
    dx[...] = np.einsum("ph,npqc,qw->nhwc", a_h, dout, a_w, optimize=True)
