"""Arguments of the backend op random_color_forward (base.Backend, "images"): the kinds of
per-pixel colour change it makes, their codes (the same in csrc/image_color.c and
kernels/image_color.cl) and the checks every backend runs before launching it."""

from .image_args import check_images, check_value_range

# kind -> (code, what its four params mean); u0, u1 are the sample's first two uniforms.
COLOR_KINDS = {
    "grayscale": 0,    # (p, -, -, -): if u0 < p, every channel = 0.2989 r + 0.587 g + 0.114 b
    "invert": 1,       # (lo, hi, -, -): if u1 < lo + (hi - lo) u0, out = high - x
    "posterize": 2,    # (lo, hi, -, -): keep the top `bits` bits of x scaled to 0..255 (uint8)
    "solarize": 3,     # (add_lo, add_hi, thr_lo, thr_hi): 255 - v where v + add >= threshold
    "degenerate": 4,   # (lo, hi, -, -): x + f (gray - x), f = lo + (hi - lo) u0, clipped
    "saturation": 5,   # (lo, hi, -, -): HSV s times f / (1 - f + 1e-7), f = lo + (hi - lo) u0
    "hue": 6,          # (lo, hi, -, -): HSV h plus +-(lo + (hi - lo) u1) / 2, sign by u0
}


def check_random_color(op, out, x, kind, params):
    """(kind code, four float params, channels) of a random_color_forward call, or a
    ValueError naming the op and the argument."""
    check_images(op, out, x)
    if kind not in COLOR_KINDS:
        raise ValueError(f"{op}: kind must be one of {sorted(COLOR_KINDS)}, got {kind!r}")
    params = tuple(float(p) for p in params)
    if len(params) > 4:
        raise ValueError(f"{op}: params holds at most 4 numbers, got {len(params)}")
    channels = x.shape[3]
    if kind in ("saturation", "hue") and channels != 3:
        raise ValueError(f"{op}: kind {kind!r} needs 3 channels (RGB), got images of shape "
                         f"{tuple(x.shape)}")
    if kind in ("grayscale", "degenerate") and channels not in (1, 3):
        raise ValueError(f"{op}: kind {kind!r} needs 1 or 3 channels (RGB), got images of shape "
                         f"{tuple(x.shape)}")
    return COLOR_KINDS[kind], params + (0.0,) * (4 - len(params))


__all__ = ["COLOR_KINDS", "check_random_color", "check_value_range"]
