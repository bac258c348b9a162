"""Arguments of the backend ops of Keras 3's mixing augmentation layers (base.Backend,
"images"): batch_mix_forward (MixUp; CutMix's labels), image_paste_forward (CutMix,
RandomErasing) and image_filter_blend_forward (RandomGaussianBlur, RandomSharpness), and the
checks every backend runs before launching them. The per-sample numbers (weights, source
indices, boxes) are drawn on the host by the layers and handed over as small float32 tables.
"""

import math

from .checks import check_shape


def check_batch_mix(op, out, x, mix):
    """mix (N, 3) rows (a, b, source) of a batch_mix_forward of x (N, ...)."""
    if len(x.shape) < 1 or x.shape[0] < 1:
        raise ValueError(f"{op}: x must have a batch axis of at least 1 sample, got shape {tuple(x.shape)}")
    check_shape(op, "out", out, x.shape)
    check_shape(op, "mix", mix, (x.shape[0], 3))
    return x.shape[0], math.prod(x.shape[1:])


def check_paste(op, out, x, boxes, source, clip):
    """(low, high) of an image_paste_forward: x (N, H, W, C), boxes (N, 7), source (M, SH, SW, C)."""
    if len(x.shape) != 4:
        raise ValueError(f"{op}: expects images (N, H, W, C), got x of shape {tuple(x.shape)}")
    check_shape(op, "out", out, x.shape)
    check_shape(op, "boxes", boxes, (x.shape[0], 7))
    if len(source.shape) != 4 or source.shape[3] != x.shape[3] or min(source.shape[:3]) < 1:
        raise ValueError(f"{op}: source must have shape (M, SH, SW, {x.shape[3]}) with M, SH, SW >= 1 "
                         f"(the channels of x {tuple(x.shape)}), got {tuple(source.shape)}")
    low, high = (float(v) for v in clip)
    if not low <= high:
        raise ValueError(f"{op}: clip must be (low, high) with low <= high, got {clip!r}")
    return low, high


def check_filter_blend(op, out, x, kernel, weights, value_range):
    """(low, high) of an image_filter_blend_forward: x (N, H, W, C), kernel (KH, KW) with odd
    sizes, weights (N,)."""
    if len(x.shape) != 4:
        raise ValueError(f"{op}: expects images (N, H, W, C), got x of shape {tuple(x.shape)}")
    check_shape(op, "out", out, x.shape)
    check_shape(op, "weights", weights, (x.shape[0],))
    if len(kernel.shape) != 2 or kernel.shape[0] % 2 == 0 or kernel.shape[1] % 2 == 0:
        raise ValueError(f"{op}: kernel must be (KH, KW) with odd KH and KW, got {tuple(kernel.shape)}")
    low, high = (float(v) for v in value_range)
    if not low < high:
        raise ValueError(f"{op}: value_range must be (low, high) with low < high, got {value_range!r}")
    return low, high


__all__ = ["check_batch_mix", "check_filter_blend", "check_paste"]
