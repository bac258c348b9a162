"""UpSampling1D, ZeroPadding1D, Cropping1D and SpatialDropout1D (channels_last): their 2-D
counterparts on (N, 1, L, C) views (conv1d.Lifted1D), and Dropout shared along the steps."""

from .base import format_shape
from .conv1d import Lifted1D, check_channels_last, normalize_single
from .core import Dropout
from .reshaping import Cropping2D
from .conv import ZeroPadding2D
from .upsampling import UpSampling2D


def _pair(value, what, owner):
    """An int or (before, after) ints >= 0 -> (before, after)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return (value, value)
    try:
        a, b = value
        if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (a, b)):
            return (a, b)
    except (TypeError, ValueError):
        pass
    raise ValueError(f"{owner}: {what} must be an int >= 0 or a pair (before, after) of them, "
                     f"got {value!r}")


class UpSampling1D(Lifted1D, UpSampling2D):
    """Repeats each step `size` times."""

    def __init__(self, size=2, name=None, trainable=True):
        self.name = name or "up_sampling1d"
        super().__init__((1, normalize_single(size, "size", self.name)), name=name, trainable=trainable)

    def get_config(self):
        config = super().get_config()
        del config["interpolation"]
        return dict(config, size=self.size[1])


class ZeroPadding1D(Lifted1D, ZeroPadding2D):
    """Pads the steps with zeros: padding = int or (before, after)."""

    def __init__(self, padding=1, data_format=None, name=None, trainable=True):
        self.name = name or "zero_padding1d"
        check_channels_last(data_format, self.name)
        super().__init__(((0, 0), _pair(padding, "padding", self.name)), name=name, trainable=trainable)

    def get_config(self):
        return dict(super().get_config(), padding=list(self.padding[1]), data_format="channels_last")


class Cropping1D(Lifted1D, Cropping2D):
    """Removes steps at the start and end: cropping = int or (before, after)."""

    def __init__(self, cropping=(1, 1), name=None, trainable=True):
        self.name = name or "cropping1d"
        super().__init__(((0, 0), _pair(cropping, "cropping", self.name)), name=name, trainable=trainable)

    def get_config(self):
        return dict(super().get_config(), cropping=list(self.cropping[1]))

    def compute_output_shape(self, input_shape):
        if len(input_shape) == 2:
            steps, before, after = input_shape[0], *self.cropping[1]
            if steps is not None and before + after >= steps:
                raise ValueError(f"{self.describe()}: cropping {self.cropping[1]} leaves nothing of "
                                 f"input shape {format_shape(input_shape)} (crop fewer steps)")
        return super().compute_output_shape(input_shape)


class SpatialDropout1D(Dropout):
    """Dropout of whole channels (Keras SpatialDropout1D): in training each sample drops each
    channel with probability `rate` at every step and scales the kept ones by 1 / (1 - rate):
    Dropout with noise_shape (None, 1, channels)."""

    def __init__(self, rate, seed=None, name=None, trainable=True):
        super().__init__(rate, seed=seed, name=name, trainable=trainable)

    def get_config(self):
        config = super().get_config()
        del config["noise_shape"]
        return config

    def build(self, input_shape):
        self.expect_rank(input_shape, 2, "(steps, channels)")
        self._shared = (0,)   # the steps


__all__ = ["UpSampling1D", "ZeroPadding1D", "Cropping1D", "SpatialDropout1D"]
