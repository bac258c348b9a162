"""Arguments of image_displace_forward / _backward (the contract's images section): resampling
images (N, H, W, C) along a per-pixel displacement field (N, H, W, 2) of (dy, dx) in pixels,
as Keras 3's RandomElasticTransform does with map_coordinates. The kernels take small integer
codes: interpolation 0 nearest, 1 bilinear; fill_mode as DISPLACE_FILL_MODES orders them
(map_coordinates' modes: the transform ops' four and "mirror")."""

import math

from .contract.images import INTERPOLATIONS, code

DISPLACE_FILL_MODES = ("constant", "nearest", "wrap", "reflect", "mirror")


def check_displace(op, out_name, out, in_name, x, field, interpolation, fill_mode,
                   clip=(-math.inf, math.inf)):
    """(interpolation code, fill_mode code, low, high) after checking an image_displace_* call."""
    if len(x.shape) != 4 or x.shape[1] < 1 or x.shape[2] < 1:
        raise ValueError(f"{op}: expects images (N, H, W, C) with H, W >= 1, got {in_name} of shape "
                         f"{tuple(x.shape)}")
    if tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"{op}: {out_name} must have the shape of {in_name} {tuple(x.shape)}, got "
                         f"{tuple(out.shape)}")
    expected = tuple(x.shape[:3]) + (2,)
    if tuple(field.shape) != expected:
        raise ValueError(f"{op}: field must be (N, H, W, 2) = {expected} (dy, dx per pixel) for "
                         f"images {tuple(x.shape)}, got {tuple(field.shape)}")
    low, high = (float(v) for v in clip)
    if not low <= high:
        raise ValueError(f"{op}: clip must be (low, high) with low <= high, got {clip!r}")
    return (code(op, "interpolation", interpolation, INTERPOLATIONS),
            code(op, "fill_mode", fill_mode, DISPLACE_FILL_MODES), low, high)


__all__ = ["DISPLACE_FILL_MODES", "check_displace"]
