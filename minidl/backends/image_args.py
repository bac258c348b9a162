"""Argument codes and checks shared by every backend's image ops (see base.Backend, "images").

The C and OpenCL kernels take small integer codes; this module is the one table of them, and
the one place the op arguments are checked, so every backend refuses the same bad input with
the same message.
"""

from .checks import check_shape

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
TRANSFORM_KINDS = ("flip", "rotation", "translation", "zoom", "zoom_tied", "crop")
TRANSFORM_SIZE = 8   # Keras's projective transform [a0, a1, a2, b0, b1, b2, c0, c1]


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
        check_shape(op, "transforms", transforms, (transforms.shape[0], TRANSFORM_SIZE))
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
    check_shape(op, "out", out, x.shape)


def split_seed(seed):
    seed = int(seed) % 2 ** 64
    return seed & 0xFFFFFFFF, seed >> 32
