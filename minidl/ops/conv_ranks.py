"""ops.conv on sequences (N, L, C) and volumes (N, D, H, W, C), built from the 2-D conv op
(nn.conv2d) as Keras's ops.conv takes every rank: a sequence is a (N, 1, L, C) image, a volume
the sum over the kernel's depth taps of 2-D convolutions of depth slices. Gradients come from
the ops they are made of (reshape, take, pad, the 2-D conv)."""

import numpy as np

from ..arguments import int_tuple
from .core import full
from .shapes import concatenate
from .shapes import reshape, take


def _tuple(value, rank, what):
    values = (value,) * rank if isinstance(value, int) else tuple(value)
    return int_tuple(values, what, "ops.conv")


def conv1d(conv2d, x, w, strides, padding, dilation_rate):
    """x (N, L, C), w (K, C / groups, F) -> (N, OL, F) through conv2d on a height of 1."""
    (stride,), (dilation,) = _tuple(strides, 1, "strides"), _tuple(dilation_rate, 1, "dilation_rate")
    n, length, c = x.shape
    out = conv2d(reshape(x, (n, 1, length, c)), reshape(w, (1,) + tuple(w.shape)),
                 strides=(1, stride), padding=padding, dilation_rate=(1, dilation))
    return reshape(out, (n, out.shape[2], out.shape[3]))


def conv3d(conv2d, x, w, strides, padding, dilation_rate):
    """x (N, D, H, W, C), w (KD, KH, KW, C / groups, F) -> (N, OD, OH, OW, F): for each depth
    tap kd, the 2-D convolution of the depth slices it meets with w[kd], summed. padding
    "same" pads the depth as TensorFlow does (the odd slice after), as the 2-D op does."""
    sd, sh, sw = _tuple(strides, 3, "strides")
    dd, dh, dw = _tuple(dilation_rate, 3, "dilation_rate")
    n, depth, h, wd, c = x.shape
    taps = w.shape[0]
    extent = (taps - 1) * dd + 1
    if padding == "same":
        out_depth = -(-depth // sd)
        total = max((out_depth - 1) * sd + extent - depth, 0)
        x = _pad_depth(x, total // 2, total - total // 2)
        depth += total
    out_depth = (depth - extent) // sd + 1
    if out_depth < 1:
        raise ValueError(f"ops.conv: the kernel's depth {taps} (dilated to {extent}) does not fit "
                         f"inputs of depth {depth} with padding='valid'")
    total = None
    for kd in range(taps):
        rows = np.arange(out_depth, dtype="int32") * sd + kd * dd
        slices = reshape(take(x, rows, axis=1), (n * out_depth, h, wd, c))
        part = conv2d(slices, take(w, kd, axis=0), strides=(sh, sw), padding=padding,
                      dilation_rate=(dh, dw))
        total = part if total is None else total + part
    return reshape(total, (n, out_depth) + tuple(total.shape[1:]))


def _pad_depth(x, before, after):
    """x (N, D, H, W, C) with zero planes before and after its depth axis (composite.pad
    would do it, but composite imports nn, which imports this module)."""
    parts = []
    for count in (before, after):
        shape = (x.shape[0], count) + tuple(x.shape[2:])
        parts.append(full(shape, 0.0, backend=x.backend) if count else None)
    pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
    return concatenate(pieces, 1) if len(pieces) > 1 else x
