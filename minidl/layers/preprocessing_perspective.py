"""Keras 3's RandomPerspective: each image, with a random probability, resampled under the
homography that moves its four corners by random fractions of their coordinates, with the
constant fill outside. The transforms come from the backend's image_perspective_transforms
(Philox draws keyed by the step seed: the same on every backend, a run repeats and resumes
exactly); the resampling and its exact adjoint (the gradient) are image_transform_forward /
_backward, as for the other random affine layers (preprocessing_random.py). Training only."""

import numbers

from .image_unbatched import UnbatchedImages
from .preprocessing_color import check_data_format, keras_factor
from .preprocessing_random import RandomAffine


class RandomPerspective(UnbatchedImages, RandomAffine):
    """Keras 3's RandomPerspective. factor (a number f in [0, 1] means (0, f), or a pair):
    each image is transformed when a uniform threshold falls below a probability drawn in
    factor (the default 1.0 transforms half the images); scale in [0, 1]: corner (x, y) moves
    to (x (1 + a), y (1 + b)), a, b uniform in [-scale / 2, scale / 2] (Keras's draw, which
    leaves the top-left corner in place)."""

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0, seed=None,
                 data_format=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        owner = self.describe()
        self.factor = keras_factor(factor, (0, 1), owner)
        if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not 0 <= scale <= 1:
            raise ValueError(f"{owner}: the `scale` argument should be a number in the range "
                             f"[0,1], got scale={scale!r}")
        self.scale = float(scale)
        self.data_format = check_data_format(data_format, owner)
        self._fill_arguments("constant", interpolation, fill_value)   # Keras's fill: constant

    def get_config(self):
        return dict(super().get_config(), data_format=self.data_format, factor=list(self.factor),
                    scale=self.scale, interpolation=self.interpolation,
                    fill_value=self.fill_value)

    def augment(self, call, x):
        b = self.backend
        shape = b.shape(x)
        call.transforms = call.buffer("transforms", (shape[0], 8))
        b.image_perspective_transforms(call.transforms, self.factor, self.scale, shape[1], shape[2],
                                       call.step_seed)
        out = call.buffer("out", shape)
        b.image_transform_forward(out, x, call.transforms, self.interpolation, "constant",
                                  self.fill_value)
        return out


__all__ = ["RandomPerspective"]
