"""Image ops of the numpy reference backend: sampling under per-image transforms, the random
transforms of the preprocessing layers, contrast, brightness and per-channel scale/shift.

The random numbers are Philox4x32-10 words, sample n's four words from counter (n, 0) under
the seed as key (csrc/internal/philox.h, kernels/images.cl), computed here with numpy
integers so that every backend draws the same uniforms u = (word >> 8) / 2**24.
Transforms are computed in float32, as the kernels do.
"""

import numpy as np

from ..image_args import split_seed

_M0, _M1, _W0, _W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
_MASK = 0xFFFFFFFF


def sample_uniforms(n, seed, word=0):
    """(n, 4) float32 uniforms in [0, 1): four per sample, from counter (sample, word)."""
    key0, key1 = split_seed(seed)
    c0 = np.arange(n, dtype=np.uint64)
    c1 = np.full(n, word, np.uint64)
    c2 = np.zeros(n, np.uint64)
    c3 = np.zeros(n, np.uint64)
    for _ in range(10):
        p0 = c0 * np.uint64(_M0)
        p1 = c2 * np.uint64(_M1)
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(key0)
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(key1)
        c1, c3, c0, c2 = p1 & np.uint64(_MASK), p0 & np.uint64(_MASK), n0, n2
        key0, key1 = (key0 + _W0) & _MASK, (key1 + _W1) & _MASK
    words = np.stack([c0, c1, c2, c3], axis=1)
    return ((words >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0))


def random_transforms(transforms, kind, ranges, height, width, seed):
    """transforms (N, 8) for `kind` (see image_args.TRANSFORM_KINDS), in float32."""
    n = transforms.shape[0]
    u = sample_uniforms(n, seed)
    f = np.float32
    r0, r1, r2, r3 = (f(r) for r in ranges)
    h1, w1 = f(height - 1), f(width - 1)
    t = np.zeros((n, 8), np.float32)
    t[:, 0] = t[:, 4] = 1
    if kind == "flip":
        fx = (r0 != 0) & (u[:, 0] < 0.5)
        fy = (r1 != 0) & (u[:, 1] < 0.5)
        t[fx, 0], t[fx, 2] = -1, w1
        t[fy, 4], t[fy, 5] = -1, h1
    elif kind == "rotation":
        angle = f(2 * np.pi) * (r0 + (r1 - r0) * u[:, 0])
        cos, sin = np.cos(angle), np.sin(angle)
        t[:, 0], t[:, 1], t[:, 3], t[:, 4] = cos, -sin, sin, cos
        t[:, 2] = (w1 - (cos * w1 - sin * h1)) / f(2)
        t[:, 5] = (h1 - (sin * w1 + cos * h1)) / f(2)
    elif kind == "translation":
        t[:, 5] = -((r0 + (r1 - r0) * u[:, 0]) * f(height))
        t[:, 2] = -((r2 + (r3 - r2) * u[:, 1]) * f(width))
    elif kind in ("zoom", "zoom_tied"):
        zh = f(1) + r0 + (r1 - r0) * u[:, 0]
        zw = zh if kind == "zoom_tied" else f(1) + r2 + (r3 - r2) * u[:, 1]
        t[:, 0], t[:, 4] = zw, zh
        t[:, 2] = w1 / f(2) * (f(1) - zw)
        t[:, 5] = h1 / f(2) * (f(1) - zh)
    elif kind == "crop":
        t[:, 5] = min(np.floor(u[0, 0] * (r0 + 1)), r0)
        t[:, 2] = min(np.floor(u[0, 1] * (r1 + 1)), r1)
    elif kind == "shear":   # Keras's RandomShear: both shears take one random sign
        sign = np.where(u[:, 0] > 0.5, f(-1), f(1))
        t[:, 1] = (r0 + (r1 - r0) * u[:, 1]) * sign
        t[:, 3] = (r2 + (r3 - r2) * u[:, 2]) * sign
    transforms[...] = t


def _fix_index(index, size, fill_mode):
    """Integer source indices mapped into [0, size) by fill_mode; (indices, inside mask)."""
    inside = (index >= 0) & (index < size)
    if fill_mode == "constant":
        return np.clip(index, 0, size - 1), inside
    if fill_mode == "nearest":
        return np.clip(index, 0, size - 1), np.ones_like(inside)
    if fill_mode == "wrap":
        return np.mod(index, size), np.ones_like(inside)
    m = np.mod(index, 2 * size)                       # reflect: d c b a | a b c d | d c b a
    return np.where(m >= size, 2 * size - 1 - m, m), np.ones_like(inside)


def _taps(transforms, n, oh, ow, h, w, interpolation, fill_mode):
    """[(weight (N, OH, OW), iy, ix, inside)] of every source pixel each output pixel reads."""
    t = np.broadcast_to(transforms.astype(np.float32), (n, 8))[:, :, None, None]
    ys, xs = np.meshgrid(np.arange(oh, dtype=np.float32), np.arange(ow, dtype=np.float32),
                         indexing="ij")
    k = t[:, 6] * xs + t[:, 7] * ys + np.float32(1)
    px = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k
    py = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k
    if interpolation == "nearest":
        corners = [(np.ones_like(px), np.floor(py + np.float32(0.5)), np.floor(px + np.float32(0.5)))]
    else:
        x0, y0 = np.floor(px), np.floor(py)
        fx, fy = px - x0, py - y0
        corners = [((1 - fy) * (1 - fx), y0, x0), ((1 - fy) * fx, y0, x0 + 1),
                   (fy * (1 - fx), y0 + 1, x0), (fy * fx, y0 + 1, x0 + 1)]
    taps = []
    for weight, iy, ix in corners:
        iy, in_y = _fix_index(iy.astype(np.int64), h, fill_mode)
        ix, in_x = _fix_index(ix.astype(np.int64), w, fill_mode)
        taps.append((weight, iy, ix, in_y & in_x))
    return taps


def transform_forward(out, x, transforms, interpolation, fill_mode, fill_value):
    n, h, w, _ = x.shape
    oh, ow = out.shape[1:3]
    result = np.zeros(out.shape, np.float64)
    batch = np.arange(n)[:, None, None]
    for weight, iy, ix, inside in _taps(transforms, n, oh, ow, h, w, interpolation, fill_mode):
        value = np.where(inside[..., None], x[batch, iy, ix].astype(np.float64), fill_value)
        result += weight[..., None].astype(np.float64) * value
    out[...] = result


def transform_backward(dx, dout, transforms, interpolation, fill_mode):
    n, h, w, c = dx.shape
    oh, ow = dout.shape[1:3]
    grad = np.zeros(dx.shape, np.float64)
    batch = np.broadcast_to(np.arange(n)[:, None, None], (n, oh, ow))
    for weight, iy, ix, inside in _taps(transforms, n, oh, ow, h, w, interpolation, fill_mode):
        contribution = weight[..., None].astype(np.float64) * dout    # taps of the fill: none
        np.add.at(grad, (batch[inside], iy[inside], ix[inside]), contribution[inside])
    dx[...] = grad


def contrast_forward(out, x, lower, upper, value_range, seed):
    u = sample_uniforms(x.shape[0], seed)[:, 0]
    f = np.float32
    factor = ((f(1) - f(lower)) + (f(upper) + f(lower)) * u).astype(np.float64)
    mean = x.astype(np.float64).mean(axis=(1, 2), keepdims=True)
    result = (x - mean) * factor[:, None, None, None] + mean
    out[...] = np.clip(result, *value_range)


def brightness_forward(out, x, lower, upper, value_range, seed):
    u = sample_uniforms(x.shape[0], seed)[:, 0]
    f = np.float32
    delta = (f(lower) + (f(upper) - f(lower)) * u) * (f(value_range[1]) - f(value_range[0]))
    out[...] = np.clip(x + delta.astype(np.float64)[:, None, None, None], *value_range)
