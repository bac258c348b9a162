"""Keras 3's colour augmentation layers: RandomGrayscale, RandomInvert, RandomPosterization,
Solarization, RandomColorDegeneration.

Like minidl's other random layers (preprocessing_random.py) they act only in training, draw
one set of numbers per image from the backend's counter-based generator keyed by the model's
step seed (the same draws on every backend; a run repeats and resumes exactly), and run as one
backend op, random_color_forward (csrc/image_color.c, kernels/image_color.cl). Their draws are
minidl's (Philox), so a given seed gives other images than Keras's; the distributions, the
formulas and the deterministic settings (probability 0 or 1, a factor (f, f)) match Keras 3.15.

Gradients pass straight through (dout unchanged), as minidl's RandomContrast and
RandomBrightness: Keras never differentiates these layers, which sit before trainable ones.
"""

import numbers

from .preprocessing import ImageLayer
from .preprocessing_random import RandomLayer, value_range_pair


def keras_factor(factor, bounds, owner, argument="factor"):
    """Keras's BaseImagePreprocessingLayer._set_factor: a number f in bounds is
    (max(-|f|, bounds[0]), |f|); a pair is sorted; anything else is refused."""
    message = (f"{owner}: {argument} must be a number (or a list of two numbers) in the range "
               f"[{bounds[0]}, {bounds[1]}], got {argument}={factor!r}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or not all(_is_number(v) for v in factor):
            raise ValueError(message)
        if factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(float(v) for v in factor))
    if not _is_number(factor) or factor < bounds[0] or factor > bounds[1]:
        raise ValueError(message)
    return (max(-abs(float(factor)), float(bounds[0])), abs(float(factor)))


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_data_format(data_format, owner):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{owner}: minidl's images are channels_last, got data_format={data_format!r}")
    return "channels_last"


class RandomColor(RandomLayer):
    """A layer that changes each image's colours by the backend's random_color_forward `kind`,
    params from self.params()."""

    kind = None
    rgb_only = False   # grayscale-based kinds need 1 or 3 channels, as Keras's rgb_to_grayscale

    def __init__(self, value_range=(0, 255), data_format=None, seed=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.value_range = value_range_pair(value_range, self.describe())
        self.data_format = check_data_format(data_format, self.describe())

    def build(self, input_shape):
        super().build(input_shape)
        if self.rgb_only and input_shape[2] not in (1, 3):
            raise ValueError(f"{self.describe()} expects 1 or 3 channels (RGB), got input shape "
                             f"(None, {', '.join(map(str, input_shape))})")

    def get_config(self):
        return dict(super().get_config(), value_range=list(self.value_range),
                    data_format=self.data_format)

    def params(self):
        raise NotImplementedError

    def augment(self, call, x):
        out = call.buffer("out", self.backend.shape(x))
        self.backend.random_color_forward(out, x, self.kind, self.params(), self.value_range,
                                          call.step_seed)
        return out


class RandomGrayscale(RandomColor):
    """Turn each image to grayscale (0.2989 R + 0.587 G + 0.114 B on every channel) with
    probability `factor` (Keras 3: a number in [0, 1], default 0.5)."""

    kind, rgb_only = "grayscale", True

    def __init__(self, factor=0.5, data_format=None, seed=None, name=None, trainable=True):
        super().__init__(data_format=data_format, seed=seed, name=name, trainable=trainable)
        if not _is_number(factor) or not 0 <= factor <= 1:
            raise ValueError(f"{self.describe()}: factor should be between 0 and 1, got factor={factor!r}")
        self.factor = factor

    def get_config(self):
        config = dict(super().get_config(), factor=self.factor)
        del config["value_range"]   # Keras's RandomGrayscale has none
        return config

    def params(self):
        return (self.factor,)


class RandomInvert(RandomColor):
    """Replace x by value_range[1] - x in an image with probability p, p itself drawn in
    [lower, upper] (Keras 3: factor f in [0, 1] means [0, f]; the default 1.0 inverts half the
    images)."""

    kind = "invert"

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, name=None,
                 trainable=True):
        super().__init__(value_range, data_format, seed, name, trainable)
        self.factor = keras_factor(factor, (0, 1), self.describe())

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor))

    def params(self):
        return self.factor


class RandomPosterization(RandomColor):
    """Keep the top `bits` bits of each pixel (scaled to 0..255 as uint8), bits drawn per image
    as Keras's randint in [lower, upper) (factor f in [1, 8] means [1, f); a pair (b, b) keeps
    b bits)."""

    kind = "posterize"

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, name=None,
                 trainable=True):
        super().__init__(value_range, data_format, seed, name, trainable)
        self.factor = keras_factor(factor, (1, 8), self.describe())

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor))

    def params(self):
        return self.factor


class Solarization(RandomColor):
    """Add a random amount to each pixel (scaled to 0..255) and invert (255 - v) the pixels at
    or above a random threshold (Keras 3: addition_factor and threshold_factor, numbers f in
    [0, 1] meaning [0, f] or pairs, are drawn as Keras does in [lower, upper * 255]; the
    defaults 0, 0 invert every pixel)."""

    kind = "solarize"

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None,
                 data_format=None, name=None, trainable=True):
        super().__init__(value_range, data_format, seed, name, trainable)
        self.addition_factor = keras_factor(addition_factor, (0, 1), self.describe(),
                                            "addition_factor")
        self.threshold_factor = keras_factor(threshold_factor, (0, 1), self.describe(),
                                             "threshold_factor")

    def get_config(self):
        return dict(super().get_config(), addition_factor=list(self.addition_factor),
                    threshold_factor=list(self.threshold_factor))

    def params(self):
        return self.addition_factor + self.threshold_factor


class RandomColorDegeneration(RandomColor):
    """Blend each image towards its grayscale version by a random factor f in [lower, upper]
    (x + f (gray - x), clipped to value_range; Keras 3: factor f in [-1, 1] means [-f, f], a
    negative f pushing colours away from gray)."""

    kind, rgb_only = "degenerate", True

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, name=None,
                 trainable=True):
        super().__init__(value_range, data_format, seed, name, trainable)
        self.factor = keras_factor(factor, (-1, 1), self.describe())

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor))

    def params(self):
        return self.factor


class RandomSaturation(RandomColor):
    """Scale each image's HSV saturation by f / (1 - f), f drawn in [lower, upper] (Keras 3:
    factor f in [-1, 1] means [-f, f]; (0.5, 0.5) leaves images as they are, 0 makes them gray;
    as Keras, the scaled saturation is clipped to value_range, not to [0, 1])."""

    kind, rgb_only = "saturation", True

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, name=None,
                 trainable=True):
        super().__init__(value_range, data_format, seed, name, trainable)
        self.factor = keras_factor(factor, (-1, 1), self.describe())

    def build(self, input_shape):
        super().build(input_shape)
        if input_shape[2] != 3:
            raise ValueError(f"{self.describe()} expects 3 channels (RGB), got input shape "
                             f"(None, {', '.join(map(str, input_shape))})")

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor))

    def params(self):
        return self.factor


class RandomHue(RandomSaturation):
    """Shift each image's HSV hue by +-f / 2 of a turn, f drawn in [lower, upper] and the sign
    by a coin (Keras 3: factor f in [0, 1] means [0, f])."""

    kind = "hue"

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, name=None,
                 trainable=True):
        RandomColor.__init__(self, value_range, data_format, seed, name, trainable)
        self.factor = keras_factor(factor, (0, 1), self.describe())


class AutoContrast(ImageLayer):
    """Stretch each image's channels from their [min, max] to value_range (Keras 3; not random,
    and applied in inference too, as Keras applies it). The gradient passes straight through."""

    def __init__(self, value_range=(0, 255), data_format=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.value_range = value_range_pair(value_range, self.describe())
        self.data_format = check_data_format(data_format, self.describe())

    def get_config(self):
        return dict(super().get_config(), value_range=list(self.value_range),
                    data_format=self.data_format)

    def forward(self, call, x, training):
        out = call.buffer("out", self.backend.shape(x))
        self.backend.auto_contrast_forward(out, x, self.value_range)
        return out

    def backward(self, call, dout):
        return dout


__all__ = ["AutoContrast", "RandomColorDegeneration", "RandomGrayscale", "RandomHue", "RandomInvert",
           "RandomPosterization", "RandomSaturation", "Solarization"]
