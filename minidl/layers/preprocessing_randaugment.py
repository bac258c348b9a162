"""Keras 3's RandAugment: at each training call, `num_ops` augmentations chosen at random
among eleven (Keras's list and order) and applied one after the other to the whole batch, as
Keras applies them. Each augmentation is the layer minidl has for it (built and attached by
this layer, not in the model), with Keras's arguments: RandomShear, RandomTranslation,
RandomRotation, RandomBrightness, RandomColorDegeneration, RandomContrast, RandomSharpness,
RandomPosterization, Solarization, AutoContrast, Equalization.

The choice is drawn on the host from the call's step seed (the same on every backend; a run
repeats and resumes exactly); each chosen layer then draws its own numbers from a seed derived
from it, and runs its backend ops. The gradient runs back through the chosen layers in
reverse (the adjoint of the resampling ones, straight through the colour ones). Training
only, as Keras.
"""

import numbers
import random

from ..backends.contract.images import INTERPOLATIONS
from ..seed_state import mix_seed
from .calls import run_backward, run_forward
from .image_unbatched import UnbatchedImages
from .preprocessing import choice
from .preprocessing_color import (AutoContrast, RandomColorDegeneration, RandomPosterization,
                                  Solarization, check_data_format, keras_factor)
from .preprocessing_equalize import Equalization
from .preprocessing_random import (RandomBrightness, RandomContrast, RandomLayer, RandomRotation,
                                   RandomTranslation, value_range_pair)
from .preprocessing_shear import RandomShear


def _sharpness():
    # RandomSharpness lives with the blur filters (augment_filters.py)
    from .augment_filters import RandomSharpness
    return RandomSharpness


def augmentation_layers(ops, factor, value_range, interpolation, prefix):
    """The minidl layers of Keras's augmentation names `ops`, with the arguments Keras's
    RandAugment and AugMix give them (factor a (lower, upper) pair), named prefix_<op>."""
    f, vr = factor, value_range
    made = {   # op -> (class, arguments), Keras's
        "random_shear": (RandomShear, dict(x_factor=f, y_factor=f, interpolation=interpolation)),
        "random_translation": (RandomTranslation, dict(height_factor=f, width_factor=f,
                                                       interpolation=interpolation)),
        "random_rotation": (RandomRotation, dict(factor=f, interpolation=interpolation)),
        "random_brightness": (RandomBrightness, dict(factor=f, value_range=vr)),
        "random_color_degeneration": (RandomColorDegeneration, dict(factor=f, value_range=vr)),
        "random_contrast": (RandomContrast, dict(factor=f, value_range=vr)),
        "random_sharpness": (None, dict(factor=f, value_range=vr)),
        "random_posterization": (RandomPosterization, dict(factor=max(1, int(8 * f[1])),
                                                           value_range=vr)),
        "solarization": (Solarization, dict(addition_factor=f, threshold_factor=f, value_range=vr)),
        "auto_contrast": (AutoContrast, dict(value_range=vr)),
        "equalization": (Equalization, dict(value_range=vr)),
    }
    layers = []
    for op in ops:
        cls, kwargs = made[op]
        layers.append((cls or _sharpness())(name=f"{prefix}_{op}", **kwargs))
    return layers


class ComposedAugmentation(UnbatchedImages, RandomLayer):
    """A random layer that runs augmentation layers of its own (self._parts), built and
    attached with it (they are not in the model)."""

    def _check_common(self, value_range, factor, interpolation, data_format):
        owner = self.describe()
        self.value_range = value_range_pair(value_range, owner)
        self.factor = keras_factor(factor, (0, 1), owner)
        self.interpolation = choice(interpolation, "interpolation", owner, INTERPOLATIONS)
        self.data_format = check_data_format(data_format, owner)

    def build(self, input_shape):
        super().build(input_shape)
        for part in self._parts:
            part.build_once(tuple(input_shape))

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        for part in self._parts:
            part.attach(backend)

    def run_part(self, call, key, part, seed, x):
        """x through `part` as this call's inner call `key`, its draws keyed by `seed`."""
        part.step_seed = seed
        inner = call.child(key, part)
        inner.ordinal = 0   # the part's own seed, set above, is the one it uses
        return run_forward(part, inner, x, True), inner


class RandAugment(ComposedAugmentation):
    """Keras 3's RandAugment(value_range=(0, 255), num_ops=2, factor=0.5,
    interpolation="bilinear"): factor (a number f in [0, 1] means (0, f), or a pair) is the
    strength every augmentation is given (RandomPosterization keeps max(1, int(8 upper))
    bits)."""

    OPS = ("random_shear", "random_translation", "random_rotation", "random_brightness",
           "random_color_degeneration", "random_contrast", "random_sharpness",
           "random_posterization", "solarization", "auto_contrast", "equalization")

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear",
                 seed=None, data_format=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        if isinstance(num_ops, bool) or not isinstance(num_ops, numbers.Integral) or num_ops < 0:
            raise ValueError(f"{self.describe()}: num_ops must be an int >= 0, got "
                             f"num_ops={num_ops!r}")
        self.num_ops = int(num_ops)
        self._check_common(value_range, factor, interpolation, data_format)
        self._parts = augmentation_layers(self.OPS, self.factor, self.value_range,
                                          self.interpolation, self.name)

    def get_config(self):
        return dict(super().get_config(), value_range=list(self.value_range),
                    num_ops=self.num_ops, factor=list(self.factor),
                    interpolation=self.interpolation, data_format=self.data_format)

    def chosen_ops(self, step_seed):
        """Indices into OPS of the num_ops augmentations of the call with this step seed
        (Keras's randint over the list: one choice per op for the whole batch)."""
        draws = random.Random(mix_seed(step_seed, 0))
        return [draws.randrange(len(self.OPS)) for _ in range(self.num_ops)]

    def augment(self, call, x):
        call.ran = []
        for position, index in enumerate(self.chosen_ops(call.step_seed)):
            x, inner = self.run_part(call, ("op", position), self._parts[index],
                                     mix_seed(call.step_seed, position + 1) >> 2, x)
            call.ran.append((self._parts[index], inner))
        return x

    def augment_backward(self, call, dout):
        for part, inner in reversed(call.ran):
            dout = run_backward(part, inner, dout, accumulate=False)
        return dout


__all__ = ["RandAugment", "augmentation_layers", "ComposedAugmentation"]
