"""The images section of the contract: sampling images under per-image projective transforms,
the random transforms, contrast, brightness and colour changes of the augmentation layers,
upsampling, and a per-channel scale and shift. Images are (N, H, W, C).

The C and OpenCL kernels take small integer codes; this module is the one table of them
(INTERPOLATIONS, FILL_MODES, TRANSFORM_KINDS, COLOR_KINDS), and the public ops below are the
one place the arguments are checked, so every backend refuses the same bad input with the same
message. They pass the checked names on, the value range as two floats, upsampling's factors
and the seed reduced to 64 bits; a backend implements the underscore names (numpy_ops/images.py,
cpu/images.py, opencl/images.py).

Random draws: sample n's uniforms u0..u3 = (word >> 8) / 2**24 of the four Philox4x32-10 words
of counter (n, 0) under key `seed`: the same numbers on every backend.
"""

import math


from ..checks import check_shape
from .checks import same_shape

INTERPOLATIONS = ("nearest", "bilinear")
FILL_MODES = ("constant", "nearest", "wrap", "reflect")
# How image_random_transforms turns a sample's four uniforms u0..u3 into its transform:
#   flip:        ranges (horizontal 0/1, vertical 0/1, -, -): mirror x when u0 < 0.5, y when u1 < 0.5
#   rotation:    (lower, upper, -, -) fractions of 2 pi: angle = 2 pi (lower + (upper - lower) u0)
#   translation: (h_lower, h_upper, w_lower, w_upper) fractions of the size, u0 for h, u1 for w
#   zoom:        (h_lower, h_upper, w_lower, w_upper): zoom = 1 + lower + (upper - lower) u
#   zoom_tied:   zoom with one draw (u0) for both axes (Keras's width_factor=None)
#   crop:        (h_room, w_room, -, -): one corner for the whole batch from sample 0's u0, u1:
#                start = min(floor(u (room + 1)), room)
#   shear:       (x_lower, x_upper, y_lower, y_upper): row [1, s sx, 0, s sy, 1, 0, 0, 0] with
#                sx, sy from u1, u2 and one sign s = -1 when u0 > 0.5 (Keras's RandomShear)
TRANSFORM_KINDS = ("flip", "rotation", "translation", "zoom", "zoom_tied", "crop", "shear")
TRANSFORM_SIZE = 8   # Keras's projective transform [a0, a1, a2, b0, b1, b2, c0, c1]
# random_color_forward's per-pixel colour changes: kind -> its code in csrc/image_color.c and
# kernels/image_color.cl, and (comment) what its four params mean; u0, u1 are the sample's first
# two uniforms.
COLOR_KINDS = {
    "grayscale": 0,    # (p, -, -, -): if u0 < p, every channel = 0.2989 r + 0.587 g + 0.114 b
    "invert": 1,       # (lo, hi, -, -): if u1 < lo + (hi - lo) u0, out = high - x
    "posterize": 2,    # (lo, hi, -, -): keep the top `bits` bits of x scaled to 0..255 (uint8)
    "solarize": 3,     # (add_lo, add_hi, thr_lo, thr_hi): 255 - v where v + add >= threshold
    "degenerate": 4,   # (lo, hi, -, -): x + f (gray - x), f = lo + (hi - lo) u0, clipped
    "saturation": 5,   # (lo, hi, -, -): HSV s times f / (1 - f + 1e-7), f = lo + (hi - lo) u0
    "hue": 6,          # (lo, hi, -, -): HSV h plus +-(lo + (hi - lo) u1) / 2, sign by u0
}


def code(op, name, value, table):
    if value not in table:
        raise ValueError(f"{op}: {name} must be one of {list(table)}, got {value!r}")
    return table.index(value)


def check_transform(op, out_shape, x_shape, transforms_shape, interpolation, fill_mode):
    """Codes (interpolation, fill_mode) after checking image_transform_* arguments."""
    if len(x_shape) != 4 or len(out_shape) != 4:
        raise ValueError(f"{op}: expects images (N, H, W, C), got input {tuple(x_shape)} and "
                         f"output {tuple(out_shape)}")
    if out_shape[0] != x_shape[0] or out_shape[3] != x_shape[3]:
        raise ValueError(f"{op}: output {tuple(out_shape)} must have the batch and channels of "
                         f"the input {tuple(x_shape)}")
    if min(x_shape[1], x_shape[2], out_shape[1], out_shape[2]) < 1:
        # every tap is read inside the input (fill modes map outside taps in): none in 0 pixels
        raise ValueError(f"{op}: input and output images need at least 1 row and 1 column, got "
                         f"input {tuple(x_shape)} and output {tuple(out_shape)}")
    if len(transforms_shape) != 2 or transforms_shape[1] != TRANSFORM_SIZE or \
            transforms_shape[0] not in (1, x_shape[0]):
        raise ValueError(f"{op}: transforms must be ({x_shape[0]}, 8) or (1, 8), got "
                         f"{tuple(transforms_shape)}")
    return (code(op, "interpolation", interpolation, INTERPOLATIONS),
            code(op, "fill_mode", fill_mode, FILL_MODES))


def check_upsample(op, small_shape, large_shape, size, interpolation):
    """(sh, sw, bilinear 0/1) after checking an upsample2d_* call: images (N, H, W, C) and
    (N, H * sh, W * sw, C), interpolation "nearest" or "bilinear"."""
    try:
        sh, sw = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: size must be a pair of ints >= 1, got {size!r}") from None
    if sh < 1 or sw < 1 or len(small_shape) != 4:
        raise ValueError(f"{op}: size must be a pair of ints >= 1 and images (N, H, W, C), got size "
                         f"{size!r} and images {tuple(small_shape)}")
    n, h, w, c = small_shape
    if tuple(large_shape) != (n, h * sh, w * sw, c):
        raise ValueError(f"{op}: images {tuple(small_shape)} upsampled by {(sh, sw)} are "
                         f"{(n, h * sh, w * sw, c)}, got {tuple(large_shape)}")
    return sh, sw, code(op, "interpolation", interpolation, INTERPOLATIONS)


def check_random_transforms(op, transforms, kind, ranges, height, width):
    if len(transforms.shape) != 2 or transforms.shape[1] != TRANSFORM_SIZE:
        same_shape(op, "transforms", transforms, (transforms.shape[0], TRANSFORM_SIZE))
    if len(ranges) != 4:
        raise ValueError(f"{op}: ranges must hold 4 numbers, got {ranges!r}")
    if height < 1 or width < 1:
        raise ValueError(f"{op}: height and width must be >= 1, got {height}x{width}")
    return code(op, "kind", kind, TRANSFORM_KINDS)


def check_value_range(op, value_range):
    low, high = value_range
    if not low < high:
        raise ValueError(f"{op}: value_range must be (low, high) with low < high, got {value_range!r}")
    return float(low), float(high)


def check_images(op, out, x):
    if len(x.shape) != 4:
        raise ValueError(f"{op}: expects images (N, H, W, C), got shape {tuple(x.shape)}")
    same_shape(op, "out", out, x.shape)


def split_seed(seed):
    seed = int(seed) % 2 ** 64
    return seed & 0xFFFFFFFF, seed >> 32


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


def _seed(seed):
    """The seed as the 64-bit Philox key every backend uses."""
    return int(seed) % 2 ** 64



# ---- image_mix: Arguments of the backend ops of Keras 3's mixing augmentation layers (base.Backend,
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

# ---- equalize: Arguments of the histogram and perspective image ops (base.Backend, "images"):
MAX_BINS = 1 << 16        # equalize_forward's histogram: bins * channels int64 counts on the host
MAX_TILES = 1 << 12       # clahe_forward's grid: tiles * channels * 256 floats of scratch per image


def check_equalize(op, out, x, value_range, bins):
    """(low, high, bins) of an equalize_forward call."""
    check_images(op, out, x)
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_BINS:
        raise ValueError(f"{op}: bins must be an int in [1, {MAX_BINS}], got {bins!r}")
    return (*check_value_range(op, value_range), bins)


def check_clahe(op, out, x, value_range, clip_limit, tile_grid_size):
    """(low, high, clip_limit, grid_h, grid_w) of a clahe_forward call."""
    check_images(op, out, x)
    try:
        grid_h, grid_w = (int(v) for v in tile_grid_size)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: tile_grid_size must be a pair of ints >= 1, got "
                         f"{tile_grid_size!r}") from None
    if grid_h < 1 or grid_w < 1 or grid_h * grid_w > MAX_TILES:
        raise ValueError(f"{op}: tile_grid_size must be a pair of ints >= 1 with at most "
                         f"{MAX_TILES} tiles, got {tile_grid_size!r}")
    if min(x.shape[1], x.shape[2]) < 1:
        raise ValueError(f"{op}: images need at least 1 row and 1 column, got {tuple(x.shape)}")
    return (*check_value_range(op, value_range), float(clip_limit), grid_h, grid_w)


def check_perspective(op, transforms, probability, scale, height, width):
    """(lower, upper, scale) of an image_perspective_transforms call."""
    if len(transforms.shape) != 2 or transforms.shape[1] != TRANSFORM_SIZE:
        check_shape(op, "transforms", transforms, (transforms.shape[0], TRANSFORM_SIZE))
    if len(probability) != 2:
        raise ValueError(f"{op}: probability must be a (lower, upper) pair, got {probability!r}")
    if height < 1 or width < 1:
        raise ValueError(f"{op}: height and width must be >= 1, got {height}x{width}")
    return float(probability[0]), float(probability[1]), float(scale)


def clahe_tiles(height, width, grid_h, grid_w):
    """(tile_h, tile_w) of Keras's CLAHE: the image padded (symmetric) to whole tiles."""
    return -(-height // grid_h), -(-width // grid_w)

# ---- image_displace: Arguments of image_displace_forward / _backward (the contract's images section): resampling
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


class ImagesSection:
    """The contract's image ops; a backend implements the underscore names."""

    # transforms (N, 8) or (1, 8) (one row for every image), Keras's projective layout: row
    # [a0, a1, a2, b0, b1, b2, c0, c1] maps output pixel (x, y) (column, row) to the input point
    # ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
    def image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        """out (N, OH, OW, C) = x (N, H, W, C) read at each output pixel's input point.
        interpolation "nearest" (the pixel floor(p + 0.5)) or "bilinear" (four taps); a tap
        outside the image is read by fill_mode: "reflect" (d c b a | a b c d | d c b a), "wrap"
        (a b c d | a b c d), "nearest" (a a | a b c d | d d) or "constant" (fill_value)."""
        check_transform("image_transform_forward", out.shape, x.shape, transforms.shape, interpolation,
                        fill_mode)
        self._image_transform_forward(out, x, transforms, interpolation, fill_mode, float(fill_value))

    def image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        """dx (N, H, W, C) = the adjoint of image_transform_forward applied to dout (taps that
        read the constant fill contribute nothing)."""
        check_transform("image_transform_backward", dout.shape, dx.shape, transforms.shape, interpolation,
                        fill_mode)
        self._image_transform_backward(dx, dout, transforms, interpolation, fill_mode)

    # field (N, H, W, 2): Keras 3's RandomElasticTransform reads output pixel (i, j) at the
    # input point (i + field[n, i, j, 0], j + field[n, i, j, 1]) (check_displace above)
    def image_displace_forward(self, out, x, field, interpolation, fill_mode, fill_value,
                               clip=(-math.inf, math.inf)):
        """out (N, H, W, C) = x (N, H, W, C) read at each pixel's displaced point, clipped to
        clip, as Keras's map_coordinates reads it: "nearest" (the point rounded half to even)
        or "bilinear" (taps (y0, x0), (y0, x1), (y1, x0), (y1, x1)); a tap outside the image
        by fill_mode: "constant" (fill_value), "nearest", "wrap", "reflect" (d c b a | a b c d)
        or "mirror" (c d c b | a b c d). Taps of weight 0 are skipped (a zero field gives x
        exactly); a NaN coordinate gives NaN. out must not alias x."""
        op = "image_displace_forward"
        interp, fill, low, high = check_displace(op, "out", out, "x", x, field, interpolation,
                                                 fill_mode, clip)
        self._image_displace_forward(out, x, field, interp, fill, float(fill_value), low, high)

    def image_displace_backward(self, dx, dout, field, interpolation, fill_mode):
        """dx (N, H, W, C) = the adjoint of image_displace_forward (without its clip) applied to
        dout (taps that read the constant fill contribute nothing). dx must not alias dout."""
        op = "image_displace_backward"
        interp, fill, _, _ = check_displace(op, "dx", dx, "dout", dout, field, interpolation,
                                            fill_mode)
        self._image_displace_backward(dx, dout, field, interp, fill)

    def image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        """transforms (N, 8) = the random transform of each sample for images of height x width:
        kind and ranges (4 numbers) as TRANSFORM_KINDS describes."""
        check_random_transforms("image_random_transforms", transforms, kind, ranges, height, width)
        self._image_random_transforms(transforms, kind, tuple(float(r) for r in ranges), int(height),
                                      int(width), _seed(seed))

    def random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        """out = clip((x - mean) * f + mean, value_range), mean (N, 1, 1, C) over each image's
        pixels, f = 1 - lower + (upper + lower) * u0 of each sample (Keras RandomContrast)."""
        op = "random_contrast_forward"
        check_images(op, out, x)
        self._random_contrast_forward(out, x, float(lower), float(upper), check_value_range(op, value_range),
                                      _seed(seed))

    def random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        """out = clip(x + delta, value_range), delta = (lower + (upper - lower) * u0) *
        (high - low) of each sample (Keras RandomBrightness)."""
        op = "random_brightness_forward"
        check_images(op, out, x)
        self._random_brightness_forward(out, x, float(lower), float(upper), check_value_range(op, value_range),
                                        _seed(seed))

    def random_color_forward(self, out, x, kind, params, value_range, seed):
        """out (N, H, W, C) = the per-pixel colour change `kind` of x with one draw per sample
        (u0, u1 as above), pixel values in value_range: kind and params (up to 4 numbers, passed
        on as 4) as COLOR_KINDS describes (Keras 3's RandomGrayscale, RandomInvert,
        RandomPosterization, Solarization, RandomColorDegeneration). out may alias x."""
        op = "random_color_forward"
        _, params = check_random_color(op, out, x, kind, params)
        self._random_color_forward(out, x, kind, params, check_value_range(op, value_range), _seed(seed))

    def auto_contrast_forward(self, out, x, value_range):
        """out (N, H, W, C) = Keras's AutoContrast: each image's channels stretched from their
        [min, max] to value_range (computed through 0..255 as Keras does); a constant channel
        stays as it is. out may alias x."""
        op = "auto_contrast_forward"
        check_images(op, out, x)
        self._auto_contrast_forward(out, x, check_value_range(op, value_range))

    def upsample2d_forward(self, out, x, size, interpolation):
        """out (N, H*sh, W*sw, C) = x (N, H, W, C) upsampled by size (sh, sw): "nearest" repeats
        pixels, "bilinear" interpolates with half-pixel centers (Keras's image.resize). The
        implementation gets sh, sw and bilinear (0 or 1)."""
        sh, sw, bilinear = check_upsample("upsample2d_forward", x.shape, out.shape, size, interpolation)
        self._upsample2d_forward(out, x, sh, sw, bilinear)

    def upsample2d_backward(self, dx, dout, size, interpolation):
        """dx (N, H, W, C) = gradient of upsample2d_forward from dout (N, H*sh, W*sw, C)."""
        sh, sw, bilinear = check_upsample("upsample2d_backward", dx.shape, dout.shape, size, interpolation)
        self._upsample2d_backward(dx, dout, sh, sw, bilinear)

    def channel_scale_shift(self, out, x, scale, shift):
        """out = x * scale + shift, scale and shift (C,) broadcast over the last axis.
        out may alias x."""
        op = "channel_scale_shift"
        if not x.shape:
            raise ValueError(f"{op}: x must have a channel axis (..., C), got a scalar")
        channels = x.shape[-1:]
        same_shape(op, "scale", scale, channels)
        same_shape(op, "shift", shift, channels)
        same_shape(op, "out", out, x.shape)
        self._channel_scale_shift(out, x, scale, shift)

    # The mixing layers (MixUp, CutMix, RandomErasing, RandomGaussianBlur, RandomSharpness)
    # draw their per-sample numbers on the host and pass them as small float32 tables
    # (check_batch_mix, check_paste, check_filter_blend above); a source index in a table is
    # clamped to the valid range.
    # Equalization, CLAHE and RandomPerspective: check_equalize, check_clahe, check_perspective. The implementations get
    # what the check found (`sizes`: the numbers and bounds they need).
    def batch_mix_forward(self, out, x, mix):
        """out[n] = mix[n, 0] * x[n] + mix[n, 1] * x[int(mix[n, 2])] for x (N, ...) of any
        shape, mix (N, 3) (MixUp's images and labels, CutMix's labels). out must not alias x."""
        op = "batch_mix_forward"
        self._batch_mix_forward(out, x, mix, sizes=check_batch_mix(op, out, x, mix))

    def image_paste_forward(self, out, x, boxes, source, clip=(-math.inf, math.inf)):
        """out (N, H, W, C) = x, except the pixels (row i, column j) of image n inside its box
        boxes[n] = (x0, x1, y0, y1, k, dx, dy) (x0 <= j < x1 and y0 <= i < y1, compared as
        floats), which get source[k, i + dy, j + dx, :] clipped to clip; source (M, SH, SW, C)
        (CutMix: x itself, offsets 0; RandomErasing: its fill, each box read from a corner).
        A source coordinate is clamped into the source. out must not alias x or source."""
        op = "image_paste_forward"
        self._image_paste_forward(out, x, boxes, source, clip, sizes=check_paste(op, out, x, boxes, source, clip))

    def image_filter_blend_forward(self, out, x, kernel, weights, value_range):
        """out (N, H, W, C) = clip(x + weights[n] * (f - x), value_range), f the 2-D filter of
        each channel of x by kernel (KH, KW) (odd sizes; a correlation over the zero-padded
        image, as a "same" depthwise convolution), weights (N,) (RandomGaussianBlur: 1 or 0;
        RandomSharpness: 1 - 2 factor). out must not alias x."""
        op = "image_filter_blend_forward"
        self._image_filter_blend_forward(out, x, kernel, weights, value_range, sizes=check_filter_blend(op, out, x, kernel, weights, value_range))

    def equalize_forward(self, out, x, value_range, bins):
        """out (N, H, W, C) = Keras's Equalization of x: one histogram of `bins` bins per
        channel over the whole batch (through 0..255), its CDF as a look-up table rounded to
        whole levels; a channel whose values fill at most one bin stays as it is. out may
        alias x. numpy_ops/equalize.py holds the reference."""
        op = "equalize_forward"
        self._equalize_forward(out, x, value_range, bins, sizes=check_equalize(op, out, x, value_range, bins))

    def clahe_forward(self, out, x, value_range, clip_limit, tile_grid_size):
        """out (N, H, W, C) = Keras's ContrastLimitedAdaptiveHistogramEqualization of x: per
        image and channel, a clipped 256-bin CDF for each tile of a (grid_h, grid_w) grid (the
        image padded by its edge pixels to whole tiles), each pixel's level looked up in its
        four nearest tiles and interpolated bilinearly. out must not alias x."""
        op = "clahe_forward"
        self._clahe_forward(out, x, value_range, clip_limit, tile_grid_size, sizes=check_clahe(op, out, x, value_range, clip_limit, tile_grid_size))

    def image_perspective_transforms(self, transforms, probability, scale, height, width, seed):
        """transforms (N, 8) = Keras's RandomPerspective rows for images of height x width:
        sample s transformed when u0 < lower + (upper - lower) u1 of counter (s, 0), its
        corners (x, y) moved to (x (1 + f), y (1 + f')), the eight f in [-scale/2, scale/2]
        from counters (s, 1) and (s, 2); other samples get the identity."""
        op = "image_perspective_transforms"
        self._image_perspective_transforms(transforms, probability, scale, height, width, seed, sizes=check_perspective(op, transforms, probability, scale, height, width))
