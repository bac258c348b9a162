"""random_color_forward of the numpy reference backend: the per-pixel colour changes of the
Keras 3 colour augmentation layers (RandomGrayscale, RandomInvert, RandomPosterization,
Solarization, RandomColorDegeneration), one random draw per sample from images.sample_uniforms
(the same numbers as the C and OpenCL kernels), computed in float32 in the kernels' order."""

import numpy as np

from .images import sample_uniforms

f32 = np.float32


def _gray(x):
    """(N, H, W, 1): Keras's rgb_to_grayscale weights; one channel is its own gray."""
    if x.shape[3] == 1:
        return x
    return (f32(0.2989) * x[..., 0:1] + f32(0.587) * x[..., 1:2]) + f32(0.114) * x[..., 2:3]


def _to_255(x, low, high):
    return (x - f32(low)) * (f32(255.0) / (f32(high) - f32(low)))


def _from_255(v, low, high):
    return v * ((f32(high) - f32(low)) / f32(255.0)) + f32(low)


def _rgb_to_hsv(x):
    """(h, s, v) planes of x (N, H, W, 3) by Keras's rgb_to_hsv (its torch backend's order)."""
    x = np.where(np.abs(x) < np.finfo(np.float32).eps, f32(0), x)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    value = np.maximum(np.maximum(r, g), b)
    range_ = value - np.minimum(np.minimum(r, g), b)
    norm = f32(1) / (f32(6) * np.where(range_ > 0, range_, f32(1)))
    hue = np.where(value == g, norm * (b - r) + f32(2 / 6), norm * (r - g) + f32(4 / 6))
    hue = np.where(value == r, norm * (g - b), hue)
    hue = np.where(range_ > 0, hue, f32(0)) + (hue < 0).astype(np.float32)
    saturation = np.where(value > 0, range_ / np.where(value > 0, value, f32(1)), f32(0))
    return hue, saturation, value


def _hsv_to_rgb(h, s, v):
    dh = (h - np.floor(h)) * f32(6)
    planes = (np.clip(np.abs(dh - f32(3)) - f32(1), 0, 1), np.clip(f32(2) - np.abs(dh - f32(2)), 0, 1),
              np.clip(f32(2) - np.abs(dh - f32(4)), 0, 1))
    return np.stack([v * ((f32(1) - s) + s * d) for d in planes], axis=-1)


def random_color_forward(out, x, kind, params, value_range, seed):
    n = x.shape[0]
    u = sample_uniforms(n, seed)
    u0, u1 = (u[:, j].reshape(n, 1, 1, 1) for j in (0, 1))
    p0, p1, p2, p3 = (f32(p) for p in params)
    low, high = value_range
    x = x.astype(np.float32, copy=False)
    if kind == "grayscale":
        result = np.where(u0 < p0, np.broadcast_to(_gray(x), x.shape), x)
    elif kind == "invert":
        result = np.where(u1 < p0 + (p1 - p0) * u0, f32(high) - x, x)
    elif kind == "posterize":
        bits = np.full_like(u0, p0) if p0 == p1 else np.minimum(np.floor(p0 + (p1 - p0) * u0), p1 - 1)
        shift = (f32(8) - bits).astype(np.uint32)
        v = np.clip(_to_255(x, low, high), 0, 255).astype(np.uint32)   # a uint8 cast truncates
        result = _from_255(((v >> shift) << shift).astype(np.float32), low, high)
    elif kind == "solarize":
        add = p0 + (p1 * f32(255) - p0) * u0
        threshold = p2 + (p3 * f32(255) - p2) * u1
        v = np.clip(_to_255(x, low, high) + add, f32(0), f32(255))
        result = _from_255(np.where(v < threshold, v, f32(255) - v), low, high)
    elif kind == "degenerate":
        factor = p0 + (p1 - p0) * u0
        result = np.clip(x + factor * (_gray(x) - x), f32(low), f32(high))
    elif kind == "saturation":   # Keras works on the raw values and clips s to value_range
        factor = p0 + (p1 - p0) * u0[..., 0]
        factor = factor / (f32(1) - factor + f32(1e-7))
        h, s, v = _rgb_to_hsv(x)
        result = _hsv_to_rgb(h, np.clip(s * factor, f32(low), f32(high)), v)
    elif kind == "hue":
        sign = np.where(u0[..., 0] > f32(0.5), f32(-1), f32(1))
        delta = sign * (p0 + (p1 - p0) * u1[..., 0]) * f32(0.5)
        scale = f32(high) - f32(low)
        h, s, v = _rgb_to_hsv((x - f32(low)) / scale)
        h = h + delta
        h = np.where(h > 1, h - f32(1), h)
        h = np.where(h < 0, h + f32(1), h)
        result = np.clip(_hsv_to_rgb(h, s, v), 0, 1) * scale + f32(low)
    else:
        raise ValueError(f"random_color_forward: unknown kind {kind!r}")
    out[...] = result


def auto_contrast_forward(out, x, value_range):
    """Keras's AutoContrast: each image's channels stretched from [min, max] to value_range,
    through 0..255 as Keras computes it; where that is NaN (a constant channel), x."""
    low, high = f32(value_range[0]), f32(value_range[1])
    x = x.astype(np.float32, copy=False)
    v = (x - low) * (f32(255) / (high - low))
    lo, hi = v.min(axis=(1, 2), keepdims=True), v.max(axis=(1, 2), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = f32(255) / (hi - lo)
        result = np.clip(v * scale + (-lo * scale), f32(0), f32(255)) * ((high - low) / f32(255)) + low
    out[...] = np.where(np.isnan(result), x, result)
