"""keras.ops.image: resizing, affine and perspective warps, crops and pads, colour-space
conversions, patches, blurs and edges, map_coordinates, ssim. channels_last images (N, H, W, C)
or (H, W, C); data_format="channels_first" is transposed in and out.

Resampling runs on the backend's image_transform kernels (the ones Resizing and RandomRotation
use: bilinear / nearest taps, Keras's fill modes) with their adjoint as the gradient; the rest
is composed of differentiable minidl.ops.
"""

import math

import numpy as np

from .composite import pad as pad_tensor
from .core import (abs as absolute, as_tensor, cast, convert_to_tensor, equal, exp, floor, greater,
                   greater_equal, less, maximum, minimum, record, sqrt, where, empty_like_shape)
from .nn import conv
from .reductions import max as reduce_max, mean, min as reduce_min, sum as reduce_sum
from .shapes import concatenate, expand_dims, reshape, squeeze, stack, take, transpose

INTERPOLATIONS = ("nearest", "bilinear")
FILL_MODES = ("constant", "nearest", "reflect", "wrap")


def _images(images, data_format, op):
    """(images as (N, H, W, C) float32, undo) where undo restores the caller's rank and layout."""
    t = cast(as_tensor(images), "float32")
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError(f"ops.image.{op}: data_format must be 'channels_last' or 'channels_first', "
                         f"got {data_format!r}")
    if len(t.shape) not in (3, 4):
        raise ValueError(f"ops.image.{op}: images must be (N, H, W, C) or (H, W, C), got shape {t.shape}")
    single = len(t.shape) == 3
    if single:
        t = expand_dims(t, 0)
    first = data_format == "channels_first"
    if first:
        t = transpose(t, (0, 2, 3, 1))

    def undo(out):
        if first:
            out = transpose(out, (0, 3, 1, 2))
        return squeeze(out, 0) if single else out
    return t, undo


def _warp(x, rows, out_hw, interpolation, fill_mode, fill_value, op):
    """image_transform of x (N, H, W, C) with transform rows (N or 1, 8) to out_hw, recorded
    with its adjoint."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"ops.image.{op}: interpolation must be one of {INTERPOLATIONS} here, got "
                         f"{interpolation!r}")
    if fill_mode not in FILL_MODES:
        raise ValueError(f"ops.image.{op}: fill_mode must be one of {FILL_MODES}, got {fill_mode!r}")
    b = x.backend
    transforms = convert_to_tensor(np.asarray(rows, np.float32).reshape(-1, 8), backend=b)
    n, _, _, c = x.shape
    out = empty_like_shape(b, (n,) + tuple(out_hw) + (c,))
    b.image_transform_forward(out.value, x.value, transforms.value, interpolation, fill_mode,
                              float(fill_value))

    def rule(g):
        dx = empty_like_shape(b, x.shape)
        b.image_transform_backward(dx.value, g.value, transforms.value, interpolation, fill_mode)
        return (dx,)
    return record(out, (x,), rule)


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """images resized to size (height, width), pixel centres aligned (half-pixel), edges clamped;
    crop_to_aspect_ratio / pad_to_aspect_ratio first crop or pad to the target's aspect ratio.
    antialias=True when shrinking averages each output pixel's footprint first (area)."""
    from ..layers.image_steps import smart_resize_steps
    x, undo = _images(images, data_format, "resize")
    if len(size) != 2:
        raise ValueError(f"ops.image.resize: size must be (height, width), got {size!r}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("ops.image.resize: only one of crop_to_aspect_ratio and pad_to_aspect_ratio")
    if interpolation not in RESIZE_INTERPOLATIONS:
        raise ValueError(f"ops.image.resize: interpolation must be one of {RESIZE_INTERPOLATIONS}, "
                         f"got {interpolation!r}")
    out_hw = (int(size[0]), int(size[1]))
    steps = smart_resize_steps(x.shape[1:3], out_hw, "nearest" if interpolation == "nearest" else "bilinear",
                               crop_to_aspect_ratio, pad_to_aspect_ratio)
    for row, hw, method, mode in steps:
        last = row == steps[-1][0] and hw == out_hw
        shrink = hw[0] < x.shape[1] or hw[1] < x.shape[2]
        if last and (interpolation == "bicubic" or (antialias and shrink and interpolation == "bilinear")):
            x = _separable_resize(x, hw, interpolation, antialias)
        else:
            x = _warp(x, [row], hw, method, mode, fill_value, "resize")
    return undo(x)


RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "bicubic")


def _cubic(t, a):
    t = np.abs(t)
    return np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                    np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _resize_weights(in_size, out_size, interpolation, antialias):
    """(out_size, in_size) weights of one axis of a resize, as torch's interpolate computes them
    (align_corners=False). Antialiased: the filter widened by the shrink factor s = max(in /
    out, 1) around the source centre (i + 0.5) * in / out, taps outside dropped, rows
    normalized (PIL's; bicubic then uses a = -0.5). Plain bicubic: a = -0.75 taps at
    floor(p) - 1 ... floor(p) + 2 of p = (i + 0.5) * in / out - 0.5, clamped to the edge."""
    scale = in_size / out_size
    if antialias:
        s = max(scale, 1.0)
        centre = (np.arange(out_size) + 0.5) * scale
        d = (np.arange(in_size)[None, :] + 0.5 - centre[:, None]) / s
        w = np.maximum(0.0, 1.0 - np.abs(d)) if interpolation == "bilinear" else _cubic(d, -0.5)
        return (w / w.sum(1, keepdims=True)).astype(np.float32)
    p = (np.arange(out_size) + 0.5) * scale - 0.5
    base = np.floor(p)
    w = np.zeros((out_size, in_size))
    for k in range(-1, 3):
        taps = np.clip(base + k, 0, in_size - 1).astype(np.int64)
        np.add.at(w, (np.arange(out_size), taps), _cubic(p - (base + k), -0.75))
    return w.astype(np.float32)


def _separable_resize(x, out_hw, interpolation, antialias):
    """x (N, H, W, C) resized by two matrix products with per-axis weights."""
    from .einsum import einsum
    wy = convert_to_tensor(_resize_weights(x.shape[1], out_hw[0], interpolation, antialias), backend=x.backend)
    wx = convert_to_tensor(_resize_weights(x.shape[2], out_hw[1], interpolation, antialias), backend=x.backend)
    return einsum("ow,nhwc->nhoc", wx, einsum("oh,nhwc->nowc", wy, x))


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0,
                     data_format=None):
    """images read at each output pixel's input point under transform [a0, a1, a2, b0, b1, b2,
    c0, c1] (one row, or one per image): Keras's projective layout."""
    x, undo = _images(images, data_format, "affine_transform")
    rows = np.asarray(as_tensor(transform).numpy() if hasattr(transform, "numpy") else transform,
                      np.float32).reshape(-1, 8)
    return undo(_warp(x, rows, x.shape[1:3], interpolation, fill_mode, fill_value, "affine_transform"))


def _homography(start, end):
    """The transform row mapping output points `end` to input points `start` (4 corners each)."""
    a, rhs = [], []
    for (xs, ys), (xe, ye) in zip(start, end):
        a.append([xe, ye, 1, 0, 0, 0, -xs * xe, -xs * ye])
        rhs.append(xs)
        a.append([0, 0, 0, xe, ye, 1, -ys * xe, -ys * ye])
        rhs.append(ys)
    return np.linalg.solve(np.asarray(a, np.float64), np.asarray(rhs, np.float64))


def perspective_transform(images, start_points, end_points, interpolation="bilinear", fill_value=0,
                          data_format=None):
    """images warped so that start_points (4 corners (x, y), or one set per image) land on
    end_points."""
    x, undo = _images(images, data_format, "perspective_transform")
    s = np.asarray(start_points, np.float64).reshape(-1, 4, 2)
    e = np.asarray(end_points, np.float64).reshape(-1, 4, 2)
    rows = [_homography(si, ei) for si, ei in zip(s, e)]
    return undo(_warp(x, rows, x.shape[1:3], interpolation, "constant", fill_value,
                      "perspective_transform"))


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method,
                        antialias=True):
    """jax.image.scale_and_translate for channels_last images whose spatial_dims are (1, 2) of
    (N, H, W, C) (or (0, 1) of (H, W, C)): output pixel centre p reads input (p + 0.5 - t) / s -
    0.5; methods 'linear'/'bilinear' and 'nearest'."""
    x = cast(as_tensor(images), "float32")
    single = len(x.shape) == 3
    if single:
        x = expand_dims(x, 0)
        spatial_dims = tuple(d + 1 for d in spatial_dims)
    if tuple(spatial_dims) != (1, 2):
        raise ValueError(f"ops.image.scale_and_translate: spatial_dims must be the height and width "
                         f"axes of channels_last images, got {spatial_dims}")
    method = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest"}.get(method)
    if method is None:
        raise ValueError("ops.image.scale_and_translate: method must be 'linear' or 'nearest' here")
    sy, sx = (float(v) for v in np.asarray(scale).reshape(2))
    ty, tx = (float(v) for v in np.asarray(translation).reshape(2))
    row = [1 / sx, 0, (0.5 - tx) / sx - 0.5, 0, 1 / sy, (0.5 - ty) / sy - 0.5, 0, 0]
    oh, ow = output_shape[1:3] if len(output_shape) == 4 else output_shape[0:2]
    # taps outside the image: jax drops them and renormalizes, which for these two-tap kernels
    # is reading the edge pixel ("nearest")
    out = _warp(x, [row], (oh, ow), method, "nearest", 0.0, "scale_and_translate")
    return squeeze(out, 0) if single else out


def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None,
                right_cropping=None, target_height=None, target_width=None, data_format=None):
    """images cropped by the given margins (or to target_height / target_width)."""
    x, undo = _images(images, data_format, "crop_images")
    h, w = x.shape[1:3]
    top, left = top_cropping or 0, left_cropping or 0
    if target_height is None:
        target_height = h - top - (bottom_cropping or 0)
    if target_width is None:
        target_width = w - left - (right_cropping or 0)
    if top + target_height > h or left + target_width > w or target_height <= 0 or target_width <= 0:
        raise ValueError(f"ops.image.crop_images: the crop ({top}, {left}, {target_height}, "
                         f"{target_width}) does not fit images of height {h} and width {w}")
    return undo(x[:, top:top + target_height, left:left + target_width, :])


def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None, right_padding=None,
               target_height=None, target_width=None, data_format=None):
    """images padded with zeros by the given margins (or to target_height / target_width)."""
    x, undo = _images(images, data_format, "pad_images")
    h, w = x.shape[1:3]
    top, left = top_padding or 0, left_padding or 0
    bottom = bottom_padding if bottom_padding is not None else (
        target_height - h - top if target_height is not None else 0)
    right = right_padding if right_padding is not None else (
        target_width - w - left if target_width is not None else 0)
    if min(top, left, bottom, right) < 0:
        raise ValueError(f"ops.image.pad_images: the padding ({top}, {left}, {bottom}, {right}) must be "
                         f">= 0 for images of height {h} and width {w}")
    return undo(pad_tensor(x, [(0, 0), (top, bottom), (left, right), (0, 0)]))


def rgb_to_grayscale(images, data_format=None):
    """0.2989 R + 0.587 G + 0.114 B, one channel."""
    x, undo = _images(images, data_format, "rgb_to_grayscale")
    weights = convert_to_tensor(np.asarray([0.2989, 0.587, 0.114], np.float32), backend=x.backend)
    return undo(reduce_sum(x * weights, -1, keepdims=True))


def rgb_to_hsv(images, data_format=None):
    """RGB in [0, 1] to HSV, hue in [0, 1) (TensorFlow's formulas)."""
    x, undo = _images(images, data_format, "rgb_to_hsv")
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    value = maximum(maximum(r, g), b)
    delta = value - minimum(minimum(r, g), b)
    safe_v = where(greater(value, 0.0), value, 1.0)
    saturation = where(greater(value, 0.0), delta / safe_v, 0.0)
    safe_d = where(greater(delta, 0.0), delta, 1.0)
    hue = where(equal(value, r), (g - b) / safe_d,
                where(equal(value, g), 2.0 + (b - r) / safe_d, 4.0 + (r - g) / safe_d)) / 6.0
    hue = where(greater(delta, 0.0), hue, 0.0)
    hue = where(less(hue, 0.0), hue + 1.0, hue)
    return undo(stack([hue, saturation, value], -1))


def hsv_to_rgb(images, data_format=None):
    x, undo = _images(images, data_format, "hsv_to_rgb")
    h, s, v = x[..., 0], x[..., 1], x[..., 2]
    dh = h * 6.0

    def channel(k):
        # TensorFlow's formula: v * (1 - s * clip(2 - |((dh + k) mod 6) - 3|... ))
        n = dh + k
        n = n - floor(n / 6.0) * 6.0
        return v - v * s * maximum(minimum(minimum(n, 4.0 - n), 1.0), 0.0)
    return undo(stack([channel(5.0), channel(3.0), channel(1.0)], -1))


def _patch_index(h, w, size, strides, dilation_rate, padding, op):
    kh, kw = (size, size) if isinstance(size, int) else tuple(size)
    sh, sw = (kh, kw) if strides is None else ((strides, strides) if isinstance(strides, int) else tuple(strides))
    dh, dw = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else tuple(dilation_rate)
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    if padding == "valid":
        oh, ow, top, left = (h - eh) // sh + 1, (w - ew) // sw + 1, 0, 0
        ph, pw = 0, 0
    elif padding == "same":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + eh - h, 0), max((ow - 1) * sw + ew - w, 0)
        top, left = ph // 2, pw // 2
    else:
        raise ValueError(f"ops.image.{op}: padding must be 'valid' or 'same', got {padding!r}")
    if oh <= 0 or ow <= 0:
        raise ValueError(f"ops.image.{op}: patches of size {size} do not fit images {h}x{w}")
    return (kh, kw, sh, sw, dh, dw, oh, ow), (top, ph - top, left, pw - left)


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """(N, OH, OW, kh * kw * C): each patch flattened in (row, column, channel) order (one gather)."""
    x, undo = _images(images, data_format, "extract_patches")
    n, h, w, c = x.shape
    (kh, kw, sh, sw, dh, dw, oh, ow), (pt, pb, pl, pr) = _patch_index(
        h, w, size, strides, dilation_rate, padding, "extract_patches")
    if pt or pb or pl or pr:
        x = pad_tensor(x, [(0, 0), (pt, pb), (pl, pr), (0, 0)])
    hp, wp = x.shape[1:3]
    oi, oj, ki, kj, ci = np.meshgrid(np.arange(oh), np.arange(ow), np.arange(kh), np.arange(kw),
                                     np.arange(c), indexing="ij")
    index = ((oi * sh + ki * dh) * wp + oj * sw + kj * dw) * c + ci
    out = take(reshape(x, (n, hp * wp * c)), index.reshape(oh, ow, -1).astype(np.int32), axis=1)
    return undo(out)


def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """(N, OD, OH, OW, kd * kh * kw * C) from volumes (N, D, H, W, C) (valid or same padding)."""
    t = cast(as_tensor(volumes), "float32")
    single = len(t.shape) == 4
    if single:
        t = expand_dims(t, 0)
    if data_format == "channels_first":
        t = transpose(t, (0, 2, 3, 4, 1))
    n, d, h, w, c = t.shape
    k = (size,) * 3 if isinstance(size, int) else tuple(size)
    s = k if strides is None else ((strides,) * 3 if isinstance(strides, int) else tuple(strides))
    dl = (dilation_rate,) * 3 if isinstance(dilation_rate, int) else tuple(dilation_rate)
    extent = [dl[i] * (k[i] - 1) + 1 for i in range(3)]
    dims = (d, h, w)
    if padding == "valid":
        outs = [(dims[i] - extent[i]) // s[i] + 1 for i in range(3)]
        pads = [(0, 0)] * 3
    elif padding == "same":
        outs = [-(-dims[i] // s[i]) for i in range(3)]
        total = [max((outs[i] - 1) * s[i] + extent[i] - dims[i], 0) for i in range(3)]
        pads = [(p // 2, p - p // 2) for p in total]
    else:
        raise ValueError(f"ops.image.extract_patches_3d: padding must be 'valid' or 'same', got {padding!r}")
    if any(p for pair in pads for p in pair):
        t = pad_tensor(t, [(0, 0)] + pads + [(0, 0)])
    _, dp, hp, wp, _ = t.shape
    grids = np.meshgrid(*(np.arange(o) for o in outs), *(np.arange(kk) for kk in k), np.arange(c),
                        indexing="ij")
    od, oh, ow, kd, kh, kw, ci = grids
    index = ((((od * s[0] + kd * dl[0]) * hp + oh * s[1] + kh * dl[1]) * wp + ow * s[2] + kw * dl[2]) * c + ci)
    out = take(reshape(t, (n, dp * hp * wp * c)), index.reshape(*outs, -1).astype(np.int32), axis=1)
    if data_format == "channels_first":
        out = transpose(out, (0, 4, 1, 2, 3))
    return squeeze(out, 0) if single else out


def _depthwise(x, kernel2d):
    """x (N, H, W, C) convolved with the same 2-D kernel on every channel (valid)."""
    c = x.shape[3]
    kh, kw = kernel2d.shape
    w = np.repeat(kernel2d.astype(np.float32)[:, :, None, None], c, axis=3)     # (kh, kw, 1, C)
    return conv(x, convert_to_tensor(w, backend=x.backend), 1, "valid")


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """images blurred by a normalized Gaussian kernel per channel (kernel_size and sigma in the
    x (width) then y (height) direction, as Keras's), zero-padded by kernel_size // 2."""
    x, undo = _images(images, data_format, "gaussian_blur")
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    sx, sy = (sigma, sigma) if isinstance(sigma, (int, float)) else tuple(sigma)

    def g1(k, s):
        r = np.arange(k, dtype=np.float64) - (k - 1) / 2.0
        v = np.exp(-(r * r) / (2.0 * s * s))
        return v / v.sum()
    kernel = np.outer(g1(kh, sy), g1(kw, sx))
    xp = pad_tensor(x, [(0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)])
    return undo(_depthwise(xp, kernel))


def sobel_edges(images, data_format=None):
    """(N, H, W, C, 2): the vertical (dy) and horizontal (dx) Sobel responses, zero-padded."""
    x, undo = _images(images, data_format, "sobel_edges")
    ky = np.asarray([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    xp = pad_tensor(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
    out = stack([_depthwise(xp, ky), _depthwise(xp, ky.T)], -1)
    if data_format == "channels_first":
        out = transpose(out, (0, 3, 1, 2, 4))
    return squeeze(out, 0) if len(as_tensor(images).shape) == 3 else out


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, data_format=None):
    """The structural similarity of two image batches, averaged per image (Gaussian window,
    valid convolution, as tf.image.ssim): (N,)."""
    a, undo = _images(image1, data_format, "ssim")
    b, _ = _images(image2, data_format, "ssim")
    r = np.arange(filter_size, dtype=np.float64) - (filter_size - 1) / 2.0
    g = np.exp(-(r * r) / (2.0 * filter_sigma * filter_sigma))
    g /= g.sum()
    kernel = np.outer(g, g)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu_a, mu_b = _depthwise(a, kernel), _depthwise(b, kernel)
    saa = _depthwise(a * a, kernel) - mu_a * mu_a
    sbb = _depthwise(b * b, kernel) - mu_b * mu_b
    sab = _depthwise(a * b, kernel) - mu_a * mu_b
    lum = (2.0 * mu_a * mu_b + c1) / (mu_a * mu_a + mu_b * mu_b + c1)
    cs = (2.0 * sab + c2) / (saa + sbb + c2)
    out = mean(lum * cs, (1, 2, 3))
    return squeeze(out, 0) if len(as_tensor(image1).shape) == 3 else out


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """inputs read at `coordinates` (one tensor per axis of inputs, each of the output's shape),
    order 0 (nearest) or 1 (linear); fill_mode for points outside."""
    if order not in (0, 1):
        raise ValueError(f"ops.image.map_coordinates: order must be 0 or 1, got {order!r}")
    if fill_mode not in ("constant", "nearest", "wrap", "mirror", "reflect"):
        raise ValueError(f"ops.image.map_coordinates: invalid fill_mode {fill_mode!r}")
    x = cast(as_tensor(inputs), "float32")
    coords = [cast(as_tensor(c, x.backend), "float32") for c in coordinates]
    if len(coords) != len(x.shape):
        raise ValueError(f"ops.image.map_coordinates: needs {len(x.shape)} coordinate tensors for "
                         f"inputs of shape {x.shape}, got {len(coords)}")
    flat = reshape(x, (-1,))
    strides = [int(np.prod(x.shape[k + 1:])) for k in range(len(x.shape))]

    def fix(i, n):
        """(index inside [0, n), 1.0 where the tap is inside for constant mode)."""
        if fill_mode == "constant":
            inside = greater_equal(i, 0.0) * less(i, float(n))
            return minimum(maximum(i, 0.0), float(n - 1)), inside
        if fill_mode == "nearest":
            return minimum(maximum(i, 0.0), float(n - 1)), None
        if fill_mode == "wrap":
            return i - floor(i / n) * n, None
        if fill_mode == "mirror":   # d c b | a b c d | c b a
            period = max(2 * n - 2, 1)
            m = i - floor(i / period) * period
            return where(greater_equal(m, float(n)), float(period) - m, m), None
        period = 2 * n                # reflect: c b a | a b c d | d c b
        m = i - floor(i / period) * period
        return where(greater_equal(m, float(n)), float(period - 1) - m, m), None

    taps = []
    for c, n in zip(coords, x.shape):
        if order == 0:
            near = floor(c + 0.5)
            taps.append([(near, None)])
        else:
            low = floor(c)
            frac = c - low
            taps.append([(low, 1.0 - frac), (low + 1.0, frac)])
    out = None
    import itertools
    for combo in itertools.product(*taps):
        position, weight, inside = None, None, None
        for (i, wgt), n, stride in zip(combo, x.shape, strides):
            idx, ok = fix(i, n)
            term = idx * float(stride)
            position = term if position is None else position + term
            if wgt is not None:
                weight = wgt if weight is None else weight * wgt
            if ok is not None:
                inside = ok if inside is None else inside * ok
        value = reshape(take(flat, reshape(cast(position, "int32"), (-1,))), position.shape)
        if inside is not None:
            value = where(inside, value, float(fill_value))
        value = value if weight is None else value * weight
        out = value if out is None else out + value
    return out


def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear", fill_mode="reflect",
                      fill_value=0.0, seed=None, data_format=None):
    """images displaced by a smooth random field: uniform noise in [-1, 1] per pixel, blurred by a
    Gaussian of sigma, scaled by alpha; read with map_coordinates (order 1 for bilinear)."""
    from .. import random as minidl_random
    x, undo = _images(images, data_format, "elastic_transform")
    n, h, w, c = x.shape
    size = int(2 * math.ceil(3 * sigma) + 1)
    noise = minidl_random.uniform((n, h, w, 2), -1.0, 1.0, seed=seed)
    field = gaussian_blur(noise, (size, size), (sigma, sigma)) * float(alpha)
    rows = convert_to_tensor(np.arange(h, dtype=np.float32).reshape(1, h, 1, 1), backend=x.backend)
    cols = convert_to_tensor(np.arange(w, dtype=np.float32).reshape(1, 1, w, 1), backend=x.backend)
    batch = convert_to_tensor(np.arange(n, dtype=np.float32).reshape(n, 1, 1, 1), backend=x.backend)
    chans = convert_to_tensor(np.arange(c, dtype=np.float32).reshape(1, 1, 1, c), backend=x.backend)
    ones = x * 0.0
    coords = [batch + ones, rows + field[..., 0:1] + ones, cols + field[..., 1:2] + ones, chans + ones]
    mode = {"reflect": "mirror"}.get(fill_mode, fill_mode)
    out = map_coordinates(x, coords, 1 if interpolation == "bilinear" else 0, mode, fill_value)
    return undo(out)
