"""The images section on the numpy backend, the reference of the others: sampling under
per-image transforms, the random transforms of the preprocessing layers, contrast, brightness,
the colour changes of the Keras 3 colour augmentation layers (RandomGrayscale, RandomInvert,
RandomPosterization, Solarization, RandomColorDegeneration; float32 in the kernels' order),
upsampling and per-channel scale/shift. The contract (minidl/backends/contract/images.py)
checked every argument.

The random numbers are Philox4x32-10 words, sample n's four words from counter (n, 0) under
the seed as key (csrc/internal/philox.h, kernels/images.cl), computed here with numpy
integers so that every backend draws the same uniforms u = (word >> 8) / 2**24.
Transforms are computed in float32, as the kernels do.
"""

import numpy as np

from ..contract.images import split_seed

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
    """transforms (N, 8) for `kind` (see contract/images.py, TRANSFORM_KINDS), in float32."""
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


# ------------------------------------------------------------------ colour
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


# -------------------------------------------------------------- upsampling
# Each axis is a small interpolation matrix A (out, in), so out = A_h x A_w^T per image and
# channel, and the backward pass applies the transposes. The weights are csrc/upsample.h's
# (nearest: Keras's repeat; bilinear: half-pixel centers).
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


def upsample_forward(out, x, sh, sw, bilinear):
    _, h, w, _ = x.shape
    a_h, a_w = axis_matrix(h, sh, bilinear, x.dtype), axis_matrix(w, sw, bilinear, x.dtype)
    out[...] = np.einsum("ph,nhwc,qw->npqc", a_h, x, a_w, optimize=True)


def upsample_backward(dx, dout, sh, sw, bilinear):
    _, h, w, _ = dx.shape
    a_h, a_w = axis_matrix(h, sh, bilinear, dout.dtype), axis_matrix(w, sw, bilinear, dout.dtype)
    dx[...] = np.einsum("ph,npqc,qw->nhwc", a_h, dout, a_w, optimize=True)


class NumpyImageOps:
    """The image ops of NumpyBackend."""

    def _image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        transform_forward(out, x, transforms, interpolation, fill_mode, fill_value)

    def _image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        transform_backward(dx, dout, transforms, interpolation, fill_mode)

    def _image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        random_transforms(transforms, kind, ranges, height, width, seed)

    def _random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        contrast_forward(out, x, lower, upper, value_range, seed)

    def _random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        brightness_forward(out, x, lower, upper, value_range, seed)

    def _random_color_forward(self, out, x, kind, params, value_range, seed):
        random_color_forward(out, x, kind, params, value_range, seed)

    def _auto_contrast_forward(self, out, x, value_range):
        auto_contrast_forward(out, x, value_range)

    def _upsample2d_forward(self, out, x, sh, sw, bilinear):
        upsample_forward(out, x, sh, sw, bilinear)

    def _upsample2d_backward(self, dx, dout, sh, sw, bilinear):
        upsample_backward(dx, dout, sh, sw, bilinear)

    def _channel_scale_shift(self, out, x, scale, shift):
        out[...] = x * scale + shift
