"""Deterministic preprocessing layers (Keras 3): Rescaling, Normalization, Resizing, CenterCrop.

Each passes gradients (its exact adjoint), so it may sit anywhere in a trainable path.
Images are channels-last (N, H, W, C).
"""

import numbers

import numpy as np

from ..arguments import number
from ..backends.contract.images import INTERPOLATIONS
from .base import Layer, format_shape
from .image_steps import ImageSteps, smart_resize_steps

EPSILON = 1e-7   # Keras's backend.epsilon(): the smallest standard deviation Normalization divides by


def positive_int(value, argument, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{owner}: {argument} must be a positive int, got {value!r}")
    return int(value)


def choice(value, argument, owner, allowed):
    if value not in allowed:
        raise ValueError(f"{owner}: {argument} must be one of {list(allowed)}, got {value!r}")
    return value


class ChannelAffine(Layer):
    """out = x * scale + shift per channel, scale and shift (C,) held on the backend."""

    def _vectors(self):
        """(scale, shift) as host arrays of shape (C,)."""
        raise NotImplementedError

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        scale, shift = self._vectors()
        self._scale, self._shift = backend.from_numpy(scale), backend.from_numpy(shift)
        self._zero = backend.zeros(scale.shape)

    def _upload(self):
        if self.backend is not None:
            scale, shift = self._vectors()
            self.backend.copy_from_host(self._scale, scale)
            self.backend.copy_from_host(self._shift, shift)

    def forward(self, call, x, training):
        out = call.buffer("out", self.backend.shape(x))
        self.backend.channel_scale_shift(out, x, self._scale, self._shift)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", self.backend.shape(dout))
        self.backend.channel_scale_shift(dx, dout, self._scale, self._zero)
        return dx


def _per_channel(value, argument, owner, channels):
    array = np.asarray(value, np.float64).reshape(-1)
    if array.size == 1:
        array = np.full(channels, array[0])
    if array.size != channels or not np.all(np.isfinite(array)):
        raise ValueError(f"{owner}: {argument} must be a finite number or {channels} numbers "
                         f"(one per channel), got {value!r}")
    return array


class Rescaling(ChannelAffine):
    """x * scale + offset (Keras 3): e.g. Rescaling(1 / 255) maps pixels to [0, 1].
    scale and offset are numbers or one number per channel."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, scale, offset=0.0, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        for argument, value in (("scale", scale), ("offset", offset)):
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                _per_channel(value, argument, self.describe(), np.asarray(value).size)
            else:
                number(value, argument, self.describe())
        self.scale, self.offset = scale, offset

    def get_config(self):
        plain = lambda v: float(v) if isinstance(v, numbers.Real) else [float(a) for a in np.ravel(v)]
        return dict(super().get_config(), scale=plain(self.scale), offset=plain(self.offset))

    def build(self, input_shape):
        c = input_shape[-1] if input_shape else 1
        self._scale_values = _per_channel(self.scale, "scale", self.describe(), c)
        self._offset_values = _per_channel(self.offset, "offset", self.describe(), c)

    def _vectors(self):
        return self._scale_values.astype(np.float32), self._offset_values.astype(np.float32)


class Normalization(ChannelAffine):
    """(x - mean) / max(sqrt(variance), 1e-7) per feature of the last axis (Keras 3); invert=True
    maps back. mean and variance are given, or learned from data by adapt(data); until then
    they are 0 and 1 (the identity), as Keras 3's (EfficientNet's stem has such a layer).
    axis is -1 (or the last axis) or None (one mean and variance for every value)."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        if axis is not None and (isinstance(axis, bool) or not isinstance(axis, numbers.Integral)):
            raise ValueError(f"{self.describe()}: axis must be an int or None, got {axis!r}")
        if (mean is None) != (variance is None):
            raise ValueError(f"{self.describe()}: pass both mean and variance, or neither "
                             f"(and call adapt()), got mean={mean!r}, variance={variance!r}")
        self.axis, self.mean, self.variance, self.invert = axis, mean, variance, bool(invert)
        self._stats = None   # host (mean, variance), each (C,), once known

    def get_config(self):
        plain = lambda v: None if v is None else np.asarray(v, np.float64).tolist()
        return dict(super().get_config(), axis=self.axis, mean=plain(self.mean),
                    variance=plain(self.variance), invert=self.invert)

    def build(self, input_shape):
        rank = len(input_shape) + 1
        if self.axis is not None and self.axis not in (-1, rank - 1):
            raise ValueError(f"{self.describe()}: axis must be -1 (the last axis) or None for inputs "
                             f"of shape {format_shape(input_shape)}, got {self.axis}")
        c = input_shape[-1]
        if self.mean is not None:   # constants from the config, no weights (as Keras 3)
            self._stats = (_per_channel(self.mean, "mean", self.describe(), c),
                           _per_channel(self.variance, "variance", self.describe(), c))
            return
        # Keras 3's weights: mean and variance ((C,), or () with axis=None) and a count that
        # Keras keeps for older files and leaves at 0
        shape = () if self.axis is None else (c,)
        self.add_weight("mean", shape, "zeros", trainable=False)
        self.add_weight("variance", shape, "ones", trainable=False)
        self.add_weight("count", (), "zeros", trainable=False)

    def adapt(self, data, batch_size=None, steps=None):
        """Learn mean and variance from data: an array (N, ...) or an iterable of arrays or of
        (x, y) batches. Statistics are float64 sums over every axis but the feature axis."""
        batches = [data] if isinstance(data, np.ndarray) or hasattr(data, "__array__") else data
        count, total, squares = 0, 0.0, 0.0
        for step, batch in enumerate(batches):
            if steps is not None and step >= steps:
                break
            if isinstance(batch, (tuple, list)):
                batch = batch[0]
            batch = np.asarray(batch, np.float64)
            if batch.ndim < 2:
                raise ValueError(f"{self.describe()}: adapt() needs batches (N, ..., C), got shape "
                                 f"{batch.shape}")
            if not self.built:
                self.build_once(tuple(batch.shape[1:]))
            rows = batch.reshape(-1, 1 if self.axis is None else batch.shape[-1])
            count += rows.shape[0]
            total = total + rows.sum(axis=0)
            squares = squares + (rows * rows).sum(axis=0)
        if count == 0:
            raise ValueError(f"{self.describe()}: adapt() got no data")
        mean = total / count
        variance = np.maximum(squares / count - mean * mean, 0.0)
        c = self.input_shape[-1]
        self._stats = (np.broadcast_to(mean, (c,)).copy(), np.broadcast_to(variance, (c,)).copy())
        if self.backend is not None:
            self._store_stats()

    def _store_stats(self):
        """Write the host statistics into the weights (a layer with given mean has none)."""
        if self.weights:
            shape = self.weights[0].shape
            Layer.assign_weights(self, [s[:1].reshape(shape).astype(np.float32) if shape == ()
                                        else s.astype(np.float32) for s in self._stats]
                                 + [np.zeros((), np.float32)])
        self._upload()

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        if self._stats is not None:
            self._store_stats()

    def assign_weights(self, arrays):
        super().assign_weights(arrays)
        c = self.input_shape[-1]
        self._stats = tuple(np.broadcast_to(np.asarray(a, np.float64).reshape(-1), (c,)).copy()
                            for a in arrays[:2])
        self._upload()

    def _vectors(self):
        if self._stats is None:
            c = self.input_shape[-1]
            mean, variance = np.zeros(c), np.ones(c)
        else:
            mean, variance = self._stats
        std = np.maximum(np.sqrt(variance), EPSILON)
        if self.invert:
            return std.astype(np.float32), mean.astype(np.float32)
        return (1.0 / std).astype(np.float32), (-mean / std).astype(np.float32)



class ImageLayer(Layer):
    """A layer on images (N, H, W, C)."""

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "image (H, W, C)")


class ResampledImage(ImageLayer):
    """An image layer whose output is (height, width, C), made by the fixed steps self._steps,
    planned for the input's height and width (self._hw) at build when they are known, else
    for each call's batch (kept on the call while its images keep their size)."""

    _steps_role = "resized"
    fill_value = 0.0   # what "constant" steps (Resizing's padding) read outside the image

    def build(self, input_shape):
        super().build(input_shape)
        self._steps = None
        if None not in input_shape[:2]:
            self._plan_steps(tuple(input_shape[:2]))

    def _plan_steps(self, hw):
        self._hw = hw
        self._steps = self._make_steps(hw)

    def _make_steps(self, hw):
        if min(hw) < 1:
            raise ValueError(f"{self.describe()}: images need at least 1 row and 1 column, got "
                             f"{hw[0]}x{hw[1]} (to {self.height}x{self.width})")
        return ImageSteps(self._steps_list(hw), self._steps_role, self.fill_value)

    def _steps_for(self, call, x):
        """(steps, input hw) of the call's batch: the built ones, or with unknown (None) image
        dims those of the batch's size, kept on the call until the size changes."""
        if not self._unknown_dims:
            return self._steps, self._hw
        hw = tuple(self.backend.shape(x)[1:3])
        held = getattr(call, "image_steps", None)
        if held is None or held[1] != hw or held[2] is not self.backend:
            steps = self._make_steps(hw)
            steps.attach(self.backend)
            held = call.image_steps = (steps, hw, self.backend)
        return held[0], held[1]

    def compute_output_shape(self, input_shape):
        return (self.height, self.width, input_shape[2])

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        if self._steps is not None:
            self._steps.attach(backend)


class Resizing(ResampledImage):
    """Resize images to (height, width) (Keras 3): interpolation "bilinear" or "nearest",
    TensorFlow's half-pixel centres; crop_to_aspect_ratio first crops the largest centred
    window of the target's aspect ratio, pad_to_aspect_ratio instead centres the image in a
    frame of that ratio filled with fill_value (fill_mode "constant", the one Keras has)."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, name=None,
                 trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.height = positive_int(height, "height", self.describe())
        self.width = positive_int(width, "width", self.describe())
        self.interpolation = choice(interpolation, "interpolation", self.describe(), INTERPOLATIONS)
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        if self.crop_to_aspect_ratio and self.pad_to_aspect_ratio:
            raise ValueError(f"{self.describe()}: only one of pad_to_aspect_ratio and "
                             "crop_to_aspect_ratio can be True")
        self.fill_mode = choice(fill_mode, "fill_mode", self.describe(), ("constant",))
        self.fill_value = number(fill_value, "fill_value", self.describe())

    def get_config(self):
        return dict(super().get_config(), height=self.height, width=self.width,
                    interpolation=self.interpolation, crop_to_aspect_ratio=self.crop_to_aspect_ratio,
                    pad_to_aspect_ratio=self.pad_to_aspect_ratio, fill_mode=self.fill_mode,
                    fill_value=self.fill_value)

    def _steps_list(self, hw):
        return smart_resize_steps(hw, (self.height, self.width), self.interpolation,
                                  self.crop_to_aspect_ratio, self.pad_to_aspect_ratio)

    def forward(self, call, x, training):
        call.steps, _ = self._steps_for(call, x)
        return call.steps.forward(call, x)

    def backward(self, call, dout):
        return call.steps.backward(call, dout)


class CenterCrop(Resizing):
    """The central (height, width) window of each image (Keras 3); an image smaller than that
    along an axis is instead cropped to the target's aspect ratio and resized (bilinear)."""

    def __init__(self, height, width, name=None, trainable=True):
        super().__init__(height, width, name=name, trainable=trainable)

    def get_config(self):
        return dict(Layer.get_config(self), height=self.height, width=self.width)

    _steps_role = "cropped"

    def _steps_list(self, hw):
        return center_crop_steps(hw, (self.height, self.width))


def center_crop_steps(in_hw, out_hw):
    (h, w), (th, tw) = in_hw, out_hw
    if h >= th and w >= tw:
        if (h, w) == (th, tw):
            return []
        return [([1, 0, int((w - tw) / 2), 0, 1, int((h - th) / 2), 0, 0], out_hw, "nearest", "nearest")]
    return smart_resize_steps(in_hw, out_hw, "bilinear", True)
