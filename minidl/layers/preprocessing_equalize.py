"""Keras 3's histogram equalization layers: Equalization and
ContrastLimitedAdaptiveHistogramEqualization (CLAHE).

Both are deterministic and run as one backend op each (equalize_forward, clahe_forward:
csrc/image_equalize.c, kernels/image_equalize.cl), matching Keras 3.15 (torch backend)
exactly. As in Keras, Equalization changes images only in training (one histogram per
channel over the whole batch, Keras's `images[..., i]`), while CLAHE runs in inference too.
Gradients pass straight through (dout unchanged): Keras never differentiates these layers,
which sit before trainable ones.
"""

import numbers

from .image_unbatched import UnbatchedImages
from .preprocessing import ImageLayer
from .preprocessing_color import check_data_format
from .preprocessing_random import value_range_pair


class Equalization(UnbatchedImages, ImageLayer):
    """Histogram-equalize each channel of the batch (Keras 3): values scaled from value_range
    to 0..255, counted in `bins` bins, mapped through the rounded CDF and scaled back; a
    channel whose values all fall in one bin is left as it is. Training only."""

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, name=None,
                 trainable=True):
        super().__init__(name=name, trainable=trainable)
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(f"{self.describe()}: value_range must be a (low, high) pair, got "
                             f"value_range={value_range!r}")
        self.value_range = value_range_pair(sorted(value_range), self.describe())
        if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
            raise ValueError(f"{self.describe()}: bins must be an int >= 1, got bins={bins!r}")
        self.bins = int(bins)
        self.data_format = check_data_format(data_format, self.describe())

    def get_config(self):
        return dict(super().get_config(), data_format=self.data_format, bins=self.bins,
                    value_range=list(self.value_range))

    def forward(self, call, x, training):
        call.applied = bool(training)
        if not call.applied:
            return x
        out = call.buffer("out", self.backend.shape(x))
        self.backend.equalize_forward(out, x, self.value_range, self.bins)
        return out

    def backward(self, call, dout):
        return dout


class ContrastLimitedAdaptiveHistogramEqualization(UnbatchedImages, ImageLayer):
    """CLAHE (Keras 3): per image and channel, the image cut into a tile_grid_size grid of
    tiles (padded by its edge pixels to whole tiles), each tile's 256-level histogram clipped
    at clip_limit * tile pixels / 256 (truncated to an integer, as Keras's torch backend
    counts) with the excess spread evenly, and each pixel mapped through its four nearest
    tiles' CDFs, interpolated bilinearly. clip_limit <= 0 clips nothing. Applied in
    inference too, as Keras applies it."""

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8),
                 data_format=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        owner = self.describe()
        value_range_pair(value_range, owner)
        self.value_range = value_range
        if isinstance(clip_limit, bool) or not isinstance(clip_limit, numbers.Real):
            raise ValueError(f"{owner}: clip_limit must be a number, got clip_limit={clip_limit!r}")
        self.clip_limit = clip_limit
        if not isinstance(tile_grid_size, (tuple, list)) or len(tile_grid_size) != 2 or not all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1
                for v in tile_grid_size):
            raise ValueError(f"{owner}: tile_grid_size must be a pair of ints >= 1, got "
                             f"tile_grid_size={tile_grid_size!r}")
        self.tile_grid_size = tile_grid_size
        self.data_format = check_data_format(data_format, owner)

    def get_config(self):
        return dict(super().get_config(), data_format=self.data_format,
                    value_range=list(self.value_range), clip_limit=self.clip_limit,
                    tile_grid_size=list(self.tile_grid_size))   # lists: as JSON gives them back

    def forward(self, call, x, training):
        out = call.buffer("out", self.backend.shape(x))
        self.backend.clahe_forward(out, x, tuple(self.value_range), float(self.clip_limit),
                                   tuple(self.tile_grid_size))
        return out

    def backward(self, call, dout):
        return dout


__all__ = ["ContrastLimitedAdaptiveHistogramEqualization", "Equalization"]
