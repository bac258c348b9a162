"""Keras 3's RandomShear: each image resampled under a random shear, on the backend's
image_random_transforms (kind "shear") and image_transform ops like the other random affine
layers (preprocessing_random.py): training only, the same draws on every backend, and the
exact adjoint of the resampling as gradient."""

import numbers

from .preprocessing_color import check_data_format
from .preprocessing_random import RandomAffine


def shear_factor(factor, argument, owner):
    """Keras's RandomShear factor: a number f in [0, 1] is (-f, f), a pair (each in [0, 1]) is
    sorted."""
    message = f"{owner}: {argument} must be a number or a pair of numbers in [0, 1], got {factor!r}"
    values = factor if isinstance(factor, (tuple, list)) else (factor,)
    if len(values) not in (1, 2) or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                            and 0 <= v <= 1 for v in values):
        raise ValueError(message)
    if len(values) == 1:
        return (-float(factor), float(factor))
    return tuple(sorted(float(v) for v in values))


class RandomShear(RandomAffine):
    """Shear each image by x_factor and y_factor (fractions, Keras 3: a number f means a shear
    in [-f, f], a pair is (lower, upper); both shears of an image share one random sign)."""

    kind = "shear"

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, data_format=None, seed=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        # the arguments as given (Keras's config of (-f, f) would not pass its own check)
        self.x_factor, self.y_factor = x_factor, y_factor
        self._x = shear_factor(x_factor, "x_factor", self.describe())
        self._y = shear_factor(y_factor, "y_factor", self.describe())
        self.data_format = check_data_format(data_format, self.describe())
        self._fill_arguments(fill_mode, interpolation, fill_value)

    def get_config(self):
        return dict(super().get_config(), x_factor=self.x_factor, y_factor=self.y_factor,
                    data_format=self.data_format, **self.fill_config())

    def ranges(self):
        return self._x + self._y


__all__ = ["RandomShear"]
