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
    else:
        raise ValueError(f"random_color_forward: unknown kind {kind!r}")
    out[...] = result
