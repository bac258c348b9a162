"""Arguments of the histogram and perspective image ops (base.Backend, "images"):
equalize_forward (Keras 3's Equalization), clahe_forward (Keras 3's
ContrastLimitedAdaptiveHistogramEqualization) and image_perspective_transforms (Keras 3's
RandomPerspective). The one place they are checked, so every backend refuses the same bad
input with the same message."""

from .checks import check_shape
from .contract.images import TRANSFORM_SIZE, check_images, check_value_range

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
