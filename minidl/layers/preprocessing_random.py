"""Random augmentation layers (Keras 3): RandomCrop, RandomFlip, RandomTranslation,
RandomRotation, RandomZoom, RandomContrast, RandomBrightness.

They change images only in training (fit); evaluate and predict pass them through (RandomCrop
then center-crops and resizes, as Keras). Their random numbers come from the backend's
counter-based generator keyed by `step_seed`, which the model sets before every training step
as it does for Dropout, so a run repeats, and resumes, exactly; the draws are the same on every
backend (base.Backend, "images"). Everything runs on the backend.

Gradients: the affine layers (crop, flip, translation, rotation, zoom) pass the exact adjoint
of the resampling they did; RandomContrast and RandomBrightness pass dout unchanged (a
straight-through gradient: Keras never differentiates them, they sit before trainable layers).
"""

import numbers

import numpy as np

from ..arguments import number
from ..seed_state import mix_seed, new_seed
from ..backends.contract.images import FILL_MODES, INTERPOLATIONS
from .image_steps import smart_resize_steps
from .nodes import KerasTensor
from .preprocessing import ImageLayer, ResampledImage, choice, positive_int


def factor_range(factor, argument, owner, low=-1.0, high=1.0, symmetric=True):
    """(lower, upper) of a Keras factor: a number f is (-f, f) (or (f, f) when not symmetric),
    a pair is itself; each within [low, high], lower <= upper."""
    if isinstance(factor, numbers.Real) and not isinstance(factor, bool):
        f = number(factor, argument, owner)
        pair = (-abs(f), abs(f)) if symmetric else (f, f)
    elif isinstance(factor, (tuple, list)) and len(factor) == 2:
        pair = tuple(number(v, argument, owner) for v in factor)
    else:
        raise ValueError(f"{owner}: {argument} must be a number or a (lower, upper) pair, got {factor!r}")
    if pair[0] > pair[1] or any(v < low or v > high for v in pair):
        raise ValueError(f"{owner}: {argument} must be within [{low}, {high}] with lower <= upper, "
                         f"got {factor!r}")
    return pair


def value_range_pair(value_range, owner):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(f"{owner}: value_range must be a (low, high) pair, got {value_range!r}")
    low, high = (number(v, "value_range", owner) for v in value_range)
    if not low < high:
        raise ValueError(f"{owner}: value_range must have low < high, got {value_range!r}")
    return (low, high)


def next_data_seed(layer):
    """Give `layer` the step seed of its next call on data: its `seed` (or, without one, a
    seed drawn once from minidl's global generator) mixed with the count of such calls."""
    if getattr(layer, "_data_seed", None) is None:
        layer._data_seed = layer.seed if layer.seed is not None else new_seed()
    layer._data_calls = getattr(layer, "_data_calls", 0) + 1
    layer.step_seed = mix_seed(layer._data_seed, layer._data_calls) >> 2


def _is_data(inputs):
    """True for a host array called on, as opposed to a model's or an op's tensor."""
    from . import custom_call
    if isinstance(inputs, (KerasTensor, list, tuple, dict)) or custom_call.is_eager(inputs):
        return False
    return isinstance(inputs, np.ndarray) or hasattr(inputs, "__array__")



class RandomLayer(ImageLayer):
    """Base of the random layers: the seed, and identity outside training."""

    needs_step_seed = True

    def __init__(self, seed=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"{self.describe()}: seed must be None or an int >= 0, got {seed!r}")
        self.seed = seed
        self.step_seed = 0

    def get_config(self):
        return dict(super().get_config(), seed=self.seed)

    def __call__(self, inputs, training=None, **options):
        """Called on data (arrays, as in a tf.data map) the layer augments unless told
        training=False, with new numbers each call, as Keras's random layers do; in a model it
        follows the model's mode."""
        if _is_data(inputs):
            next_data_seed(self)
            if training is None:
                training = True
        return super().__call__(inputs, training=training, **options)

    def forward(self, call, x, training):
        call.applied = bool(training)
        return self.augment(call, x) if call.applied else x

    def backward(self, call, dout):
        return self.augment_backward(call, dout) if call.applied else dout

    def augment_backward(self, call, dout):
        return dout


class RandomAffine(RandomLayer):
    """A layer that resamples each image under a random transform of `kind`."""

    kind = None
    interpolation, fill_mode, fill_value = "bilinear", "reflect", 0.0

    def _fill_arguments(self, fill_mode, interpolation, fill_value):
        self.fill_mode = choice(fill_mode, "fill_mode", self.describe(), FILL_MODES)
        self.interpolation = choice(interpolation, "interpolation", self.describe(), INTERPOLATIONS)
        self.fill_value = number(fill_value, "fill_value", self.describe())

    def fill_config(self):
        return dict(fill_mode=self.fill_mode, interpolation=self.interpolation,
                    fill_value=self.fill_value)

    def ranges(self):
        raise NotImplementedError

    def augment(self, call, x):
        b = self.backend
        shape = b.shape(x)
        call.transforms = call.buffer("transforms", (shape[0], 8))
        b.image_random_transforms(call.transforms, self.kind, self.ranges(), shape[1], shape[2],
                                  call.step_seed)
        out = call.buffer("out", shape)
        b.image_transform_forward(out, x, call.transforms, self.interpolation, self.fill_mode,
                                  self.fill_value)
        return out

    def augment_backward(self, call, dout):
        dx = call.buffer("dx", self.backend.shape(dout))
        self.backend.image_transform_backward(dx, dout, call.transforms, self.interpolation,
                                              self.fill_mode)
        return dx


class RandomFlip(RandomAffine):
    """Mirror each image with probability 1/2 along the chosen axes (Keras 3): mode
    "horizontal" (left-right), "vertical" (up-down) or "horizontal_and_vertical"."""

    kind = "flip"
    MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode="horizontal_and_vertical", seed=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.mode = choice(mode, "mode", self.describe(), self.MODES)
        self.interpolation, self.fill_mode = "nearest", "nearest"   # an exact copy of pixels

    def get_config(self):
        return dict(super().get_config(), mode=self.mode)

    def ranges(self):
        return (float(self.mode != "vertical"), float(self.mode != "horizontal"), 0.0, 0.0)


class RandomTwoAxes(RandomAffine):
    """A random affine layer with a height_factor and a width_factor."""

    def get_config(self):
        return dict(super().get_config(), height_factor=self.height_factor,
                    width_factor=self.width_factor, **self.fill_config())

    def ranges(self):
        return self._h + self._w


class RandomTranslation(RandomTwoAxes):
    """Shift each image by a random fraction of its height and width (Keras 3): factors are a
    number f (a shift in [-f, f]) or (lower, upper), within [-1, 1]."""

    kind = "translation"

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear",
                 seed=None, fill_value=0.0, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._h = factor_range(height_factor, "height_factor", self.describe())
        self._w = factor_range(width_factor, "width_factor", self.describe())
        self._fill_arguments(fill_mode, interpolation, fill_value)


class RandomRotation(RandomAffine):
    """Rotate each image by a random angle (Keras 3): factor, a fraction of 2 pi, is a number
    f (an angle in [-f 2pi, f 2pi]) or (lower, upper)."""

    kind = "rotation"

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.factor = factor
        self._range = factor_range(factor, "factor", self.describe(), low=-float("inf"),
                                   high=float("inf"))
        self._fill_arguments(fill_mode, interpolation, fill_value)

    def get_config(self):
        return dict(super().get_config(), factor=self.factor, **self.fill_config())

    def ranges(self):
        return self._range + (0.0, 0.0)


class RandomZoom(RandomTwoAxes):
    """Zoom each image by a random factor (Keras 3): a positive factor zooms out, a negative
    one in; height_factor is a number f ([-f, f]) or (lower, upper), each >= -1; width_factor
    None zooms both axes by the same draw."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._h = factor_range(height_factor, "height_factor", self.describe(), high=float("inf"))
        self._w = self._h if width_factor is None else factor_range(
            width_factor, "width_factor", self.describe(), high=float("inf"))
        self.kind = "zoom_tied" if width_factor is None else "zoom"
        self._fill_arguments(fill_mode, interpolation, fill_value)


class RandomCrop(RandomLayer, ResampledImage):
    """A random (height, width) window of the images, one corner per batch (Keras 3); in
    inference, and for images smaller than the window, a centred crop to the target's aspect
    ratio resized (bilinear) to (height, width)."""

    def __init__(self, height, width, seed=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.height = positive_int(height, "height", self.describe())
        self.width = positive_int(width, "width", self.describe())

    def get_config(self):
        return dict(super().get_config(), height=self.height, width=self.width)

    def _steps_list(self, hw):
        return smart_resize_steps(hw, (self.height, self.width), "bilinear", True)

    def forward(self, call, x, training):
        call.steps, call.hw = self._steps_for(call, x)
        room = (call.hw[0] - self.height, call.hw[1] - self.width)   # the crop's free rows, cols
        call.applied = bool(training) and min(room) >= 0
        return self.augment(call, x, room) if call.applied else call.steps.forward(call, x)

    def backward(self, call, dout):
        if call.applied:
            return self.augment_backward(call, dout)
        return call.steps.backward(call, dout)

    def augment(self, call, x, room):
        b = self.backend
        n, _, _, c = b.shape(x)
        call.transforms = call.buffer("transforms", (n, 8))
        b.image_random_transforms(call.transforms, "crop", (*map(float, room), 0.0, 0.0),
                                  call.hw[0], call.hw[1], call.step_seed)
        out = call.buffer("out", (n, self.height, self.width, c))
        b.image_transform_forward(out, x, call.transforms, "nearest", "nearest", 0.0)
        return out

    def augment_backward(self, call, dout):
        dx = call.buffer("dx", (self.backend.shape(dout)[0],) + tuple(call.hw) +
                         (self.input_shape[2],))
        self.backend.image_transform_backward(dx, dout, call.transforms, "nearest", "nearest")
        return dx


class RandomAdjust(RandomLayer):
    """A layer that changes pixel values by one random number per image (backend op `op`)."""

    op = None

    def _factor_arguments(self, factor, value_range, **bounds):
        self.factor = factor
        self._range = factor_range(factor, "factor", self.describe(), **bounds)
        self.value_range = value_range_pair(value_range, self.describe())

    def get_config(self):
        return dict(super().get_config(), factor=self.factor, value_range=list(self.value_range))

    def augment(self, call, x):
        out = call.buffer("out", self.backend.shape(x))
        getattr(self.backend, self.op)(out, x, *self._range, self.value_range, call.step_seed)
        return out


class RandomContrast(RandomAdjust):
    """Scale each image's deviation from its per-channel mean by a random factor in
    [1 - lower, 1 + upper] (Keras 3: factor f means lower = upper = f, each in [0, 1]), then clip
    to value_range."""

    op = "random_contrast_forward"

    def __init__(self, factor, value_range=(0, 255), seed=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self._factor_arguments(factor, value_range, low=0.0, symmetric=False)


class RandomBrightness(RandomAdjust):
    """Add a random delta, a fraction in [lower, upper] of value_range's width, to each image
    (Keras 3: factor f means [-f, f], within [-1, 1]), then clip to value_range."""

    op = "random_brightness_forward"

    def __init__(self, factor, value_range=(0, 255), seed=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self._factor_arguments(factor, value_range)


__all__ = ["RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip", "RandomRotation",
           "RandomTranslation", "RandomZoom"]
