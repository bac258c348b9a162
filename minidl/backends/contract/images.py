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
    # input point (i + field[n, i, j, 0], j + field[n, i, j, 1]) (image_displace_args.py)
    def image_displace_forward(self, out, x, field, interpolation, fill_mode, fill_value,
                               clip=(-math.inf, math.inf)):
        """out (N, H, W, C) = x (N, H, W, C) read at each pixel's displaced point, clipped to
        clip, as Keras's map_coordinates reads it: "nearest" (the point rounded half to even)
        or "bilinear" (taps (y0, x0), (y0, x1), (y1, x0), (y1, x1)); a tap outside the image
        by fill_mode: "constant" (fill_value), "nearest", "wrap", "reflect" (d c b a | a b c d)
        or "mirror" (c d c b | a b c d). Taps of weight 0 are skipped (a zero field gives x
        exactly); a NaN coordinate gives NaN. out must not alias x."""
        from ..image_displace_args import check_displace   # it imports this module's codes
        op = "image_displace_forward"
        interp, fill, low, high = check_displace(op, "out", out, "x", x, field, interpolation,
                                                 fill_mode, clip)
        self._image_displace_forward(out, x, field, interp, fill, float(fill_value), low, high)

    def image_displace_backward(self, dx, dout, field, interpolation, fill_mode):
        """dx (N, H, W, C) = the adjoint of image_displace_forward (without its clip) applied to
        dout (taps that read the constant fill contribute nothing). dx must not alias dout."""
        from ..image_displace_args import check_displace
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
