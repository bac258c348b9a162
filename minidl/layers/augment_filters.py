"""Keras 3's RandomGaussianBlur and RandomSharpness: each training image blended with a
filtered copy of itself, on the backend op image_filter_blend_forward (augment_base.py says
how the numbers are drawn). Training only; the gradient passes straight through."""

import numbers

import numpy as np

from .augment_base import HostDrawnAugment, keras_pair
from .preprocessing_random import value_range_pair

f32 = np.float32


def gaussian_kernel(size, sigma):
    """Keras's 1-D Gaussian taps of `size` (odd) and `sigma`, normalized, in float32."""
    t = np.arange(size, dtype=f32) - f32((size - 1) / 2)
    taps = np.exp(f32(-0.5) * (t / f32(sigma)) ** 2).astype(f32)
    return taps / taps.sum(dtype=f32)


class FilterBlend(HostDrawnAugment):
    """Images clipped to value_range after x + weight (filter(x) - x), per-image weights."""

    def __init__(self, value_range, seed, data_format, name, trainable):
        super().__init__(seed=seed, data_format=data_format, name=name, trainable=trainable)
        self.value_range = value_range_pair(value_range, self.describe())

    def get_config(self):
        return dict(super().get_config(), value_range=list(self.value_range))

    def draw(self, call, n):
        """(kernel (KH, KW), weights (N,)) of this call, as host arrays."""
        raise NotImplementedError

    def augment(self, call, x):
        b = self.backend
        kernel, weights = self.draw(call, b.shape(x)[0])
        out = call.buffer("out", b.shape(x))
        b.image_filter_blend_forward(out, x, self.upload(call, "kernel", kernel),
                                     self.upload(call, "weights", weights), self.value_range)
        return out


class RandomGaussianBlur(FilterBlend):
    """Blur each image with probability p, p drawn per image in `factor` (Keras 3: a number f
    in [0, 1] means [0, f]), by a Gaussian of kernel_size (odd; a number or (width, height)
    pair) whose horizontal and vertical sigmas are drawn once per batch in `sigma` (a number s
    means [0, s]); every image is then clipped to value_range."""

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, name=None, trainable=True):
        super().__init__(value_range, seed, data_format, name, trainable)
        self.factor = keras_pair(factor, (0, 1), self.describe(), "factor")
        sizes = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
        if len(sizes) != 2 or not all(isinstance(k, numbers.Integral) and not isinstance(k, bool)
                                      and k > 0 and k % 2 == 1 for k in sizes):
            raise ValueError(f"{self.describe()}: kernel_size must be an odd number (or a pair of "
                             f"odd numbers), got kernel_size={kernel_size!r}")
        self.kernel_size = tuple(int(k) for k in sizes)
        self.sigma = keras_pair(sigma, (0, 1), self.describe(), "sigma")

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor),
                    kernel_size=list(self.kernel_size), sigma=list(self.sigma))

    def draw(self, call, n):
        rng = self.generator(call)
        probability = rng.uniform(self.factor[0], self.factor[1], n)
        blur = (rng.random(n) < probability).astype(f32)
        sigma = rng.uniform(self.sigma[0], self.sigma[1], 2).astype(f32) + f32(1e-6)
        # Keras's outer(taps_y, taps_x): rows by kernel_size[1] and sigma[1]
        kernel = np.outer(gaussian_kernel(self.kernel_size[1], sigma[1]),
                          gaussian_kernel(self.kernel_size[0], sigma[0])).astype(f32)
        return kernel, blur


class RandomSharpness(FilterBlend):
    """Sharpen or soften each image: x + (1 - 2 f) (smooth(x) - x), clipped to value_range,
    f drawn per image in `factor` (Keras 3: a number f in [0, 1] means [0, f]; 0.5 leaves the
    image as it is, 0 gives the smoothed image, 1 sharpens), smooth the 3x3 filter
    [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 over the zero-padded image."""

    KERNEL = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], f32) / f32(13)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, name=None,
                 trainable=True):
        super().__init__(value_range, seed, data_format, name, trainable)
        self.factor = keras_pair(factor, (0, 1), self.describe(), "factor")

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor))

    def draw(self, call, n):
        factor = self.generator(call).uniform(self.factor[0], self.factor[1], n).astype(f32)
        return self.KERNEL, f32(1) - factor * f32(2)


__all__ = ["RandomGaussianBlur", "RandomSharpness"]
