"""Keras 3's RandomErasing: with a random probability, a random box of each training image
replaced by a constant or by noise, on the backend op image_paste_forward (augment_base.py
says how the numbers are drawn). Training only; the gradient passes straight through."""

import numbers

import numpy as np

from .augment_base import HostDrawnAugment, box_bounds, keras_pair
from .preprocessing_random import value_range_pair

f32 = np.float32


class RandomErasing(HostDrawnAugment):
    """Erase a box of each image with probability p, p drawn per image in `factor` (Keras 3:
    a number f in [0, 1] means [0, f]; the default 1.0 erases half the images). The box's
    width and height are sqrt(s) of the image's, s drawn in `scale` for each; it is filled
    with fill_value (a number, or one per channel of an RGB image) or, with None, with
    normal noise times value_range[1]; the fill is clipped to value_range."""

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
                 seed=None, data_format=None, name=None, trainable=True):
        super().__init__(seed=seed, data_format=data_format, name=name, trainable=trainable)
        self.factor = keras_pair(factor, (0, 1), self.describe(), "factor")
        self.scale = keras_pair(scale, (0, 1), self.describe(), "scale")
        message = (f"{self.describe()}: the `fill_value` argument should be a number (or a list "
                   f"of three numbers) or None, got fill_value={fill_value!r}")
        if fill_value is not None:
            values = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value]
            if len(values) not in (1, 3) or not all(
                    isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values) or (
                    isinstance(fill_value, (tuple, list)) and len(values) != 3):
                raise ValueError(message)
        self.fill_value = fill_value
        self.value_range = value_range_pair(value_range, self.describe())

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor), scale=list(self.scale),
                    fill_value=self.fill_value, value_range=list(self.value_range))

    def build(self, input_shape):
        super().build(input_shape)
        if isinstance(self.fill_value, (tuple, list)) and input_shape[2] != 3:
            raise ValueError(f"{self.describe()}: a fill_value of three numbers needs 3 channels, "
                             f"got input shape (None, {', '.join(map(str, input_shape))})")

    def augment(self, call, x):
        b = self.backend
        n, h, w, c = b.shape(x)
        rng = self.generator(call)
        size = np.sqrt(rng.uniform(self.scale[0], self.scale[1], (n, 2)).astype(f32))
        x0, x1 = box_bounds(rng, size[:, 0], w)
        y0, y1 = box_bounds(rng, size[:, 1], h)
        probability = rng.uniform(self.factor[0], self.factor[1], n)
        erase = rng.random(n) < probability
        x1, y1 = np.where(erase, x1, x0), np.where(erase, y1, y0)   # an empty box: no erasing
        # each box reads its fill from the fill's corner (0, 0): the first pixel column j0 >= x0
        # and row i0 >= y0 of the box, as the op compares them
        dx, dy = -np.clip(np.ceil(x0), 0, w), -np.clip(np.ceil(y0), 0, h)
        if self.fill_value is None:
            fill = self._noise(call, n, h, w, c, erase)
            sources = np.arange(n)
        else:
            fill = self._constant(call, c)
            sources = np.zeros(n)
        boxes = self.upload(call, "boxes", np.stack([x0, x1, y0, y1, sources, dx, dy], 1))
        out = call.buffer("out", (n, h, w, c))
        b.image_paste_forward(out, x, boxes, fill, self.value_range)
        return out

    def _noise(self, call, n, h, w, c, erase):
        """(N, BH, BW, C) normal noise times value_range[1], BH x BW the largest box `scale`
        allows: only what the boxes read is drawn (the noise is most of this layer's cost)."""
        side = np.sqrt(np.float32(self.scale[1]))
        rows, cols = (min(length, int(np.ceil(side * length)) + 1) for length in (h, w))
        fill = call.buffer("noise", (n, rows, cols, c))
        if erase.any():
            self.backend.fill(fill, 0.0)
            self.backend.gaussian_noise(fill, fill, self.value_range[1], call.step_seed)
        return fill

    def _constant(self, call, channels):
        """(1, 1, 1, C) of fill_value: every box pixel reads it (source coordinates are clamped)."""
        held = getattr(call, "constant_fill", None)
        if held is None or self.backend.shape(held)[3] != channels:
            value = np.broadcast_to(np.asarray(self.fill_value, f32), (1, 1, 1, channels))
            held = call.constant_fill = self.backend.from_numpy(np.ascontiguousarray(value))
        return held


__all__ = ["RandomErasing"]
