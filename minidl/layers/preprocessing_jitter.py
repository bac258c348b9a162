"""Keras 3's RandomColorJitter: RandomBrightness, RandomContrast, RandomSaturation and RandomHue
applied in that order (those whose factor is given), each drawing from its own seed derived
from the step seed, so that the four draws of an image are independent. Training only; the
gradient passes straight through, as each of the four passes it."""

from ..seed_state import mix_seed
from .preprocessing_color import check_data_format
from .preprocessing_random import RandomBrightness, RandomContrast, RandomLayer, value_range_pair
from .preprocessing_color import RandomHue, RandomSaturation

_PARTS = (("brightness_factor", RandomBrightness), ("contrast_factor", RandomContrast),
          ("saturation_factor", RandomSaturation), ("hue_factor", RandomHue))


class RandomColorJitter(RandomLayer):
    """Random brightness, contrast, saturation and hue changes (Keras 3.15's arguments and
    order; a factor None leaves that part out)."""

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None,
                 saturation_factor=None, hue_factor=None, seed=None, data_format=None, name=None,
                 trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.value_range = value_range_pair(value_range, self.describe())
        self.data_format = check_data_format(data_format, self.describe())
        factors = dict(brightness_factor=brightness_factor, contrast_factor=contrast_factor,
                       saturation_factor=saturation_factor, hue_factor=hue_factor)
        for argument, value in factors.items():
            setattr(self, argument, value)
        # the parts are built, attached and run by this layer (they are not in the model)
        self._parts = [cls(factors[argument], value_range=value_range, seed=seed,
                           name=f"{self.name}_{argument[:-7]}")
                       for argument, cls in _PARTS if factors[argument] is not None]

    def build(self, input_shape):
        super().build(input_shape)
        for part in self._parts:
            part.build_once(tuple(input_shape))

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        for part in self._parts:
            part.attach(backend)

    def get_config(self):
        return dict(super().get_config(), value_range=list(self.value_range),
                    brightness_factor=self.brightness_factor, contrast_factor=self.contrast_factor,
                    saturation_factor=self.saturation_factor, hue_factor=self.hue_factor,
                    data_format=self.data_format)

    def augment(self, call, x):
        for index, part in enumerate(self._parts):
            # each part draws its own numbers from this call's seed (its context: ordinal 0,
            # so that the seed set here is the one it uses)
            part.step_seed = mix_seed(call.step_seed, index + 1) >> 2
            inner = call.child(("part", index), part)
            inner.ordinal = 0
            x = part.augment(inner, x)
        return x


__all__ = ["RandomColorJitter"]
