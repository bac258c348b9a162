"""Keras 3's dropout and recurrent_dropout of ConvLSTM, as convolutions with groups=4.

Keras's ConvLSTMCell drops its step input with one mask per gate (four masks shaped like the
input (N, *image, C)) and h_{t-1} with one per gate (four shaped like the state (N, *out, f)),
each drawn once per sequence, scaled by 1 / (1 - rate), in training only. Gate g's
pre-activation is then conv(x * M_g, kernel_g), kernel_g its f columns of the kernel: the four
are one convolution with groups=4 of the input tiled to four channel blocks (block g times
M_g) by the layer's own kernel (kh, kw, C, 4f), whose filter group g is gate g's columns.
Its backward is the grouped convolution's; dL/dx is the sum over the blocks of each block's
gradient times its mask.

The masks of a call are one tensor (N, S * 4 * C) (S the positions of a sample): for sample
n, position s, block g and channel k, element ((n S + s) 4 + g) C + k, the grouped
convolution's channel layout.
"""

import math


def _size(b, x):
    return math.prod(b.shape(x))


def draw_gate_masks(b, call, role, n, positions, channels, rate, seed):
    """The call's four masks for `role` ("input" or "state"), (N, S * 4 * C), drawn by the
    backend's counter-based generator from `seed` (the same on every backend)."""
    shape = (n, positions * 4 * channels)
    ones = call.buffer(f"{role}_dropout_ones", shape)
    b.fill(ones, 1.0)
    mask = call.buffer(f"{role}_dropout_mask", shape)
    b.dropout_forward(call.buffer(f"{role}_dropout_kept", shape), mask, ones, rate, seed)
    return mask


def tile_dropped(b, out, x, mask, lead, channels):
    """out (L N S, 4 C) = x (L N S, C) repeated in four channel blocks, block g times M_g, the
    masks (N, S * 4 C) the same for each of the L leading slices (time steps)."""
    pixels = _size(b, x) // channels
    b.strided_copy(b.reshape(out, (pixels, 4, channels)), x, 0, (channels, 0, 1))
    flat = b.reshape(out, (lead, pixels // lead * 4 * channels))
    b.binary(flat, flat, b.reshape(mask, (_size(b, mask),)), "multiply")


def sum_dropped(b, out, d_tiled, mask, lead, channels):
    """The gradient back through tile_dropped: out (L N S, C) = the sum over the blocks of
    d_tiled (L N S, 4 C) times their masks (d_tiled is overwritten)."""
    pixels = _size(b, out) // channels
    flat = b.reshape(d_tiled, (lead, pixels // lead * 4 * channels))
    b.binary(flat, flat, b.reshape(mask, (_size(b, mask),)), "multiply")
    b.reduce(b.reshape(out, (pixels, 1, channels)), b.reshape(d_tiled, (pixels, 4, channels)),
             "sum")
