"""What Keras 3's MixUp, CutMix, RandomErasing, RandomGaussianBlur and RandomSharpness share in
minidl: per-sample numbers drawn on the host, and Keras's ways of calling them on data.

Draws: each training step the layer draws its per-sample numbers (boxes, weights, an order of
the batch) from a numpy Generator keyed by the call's step seed (the model sets it every step,
as for Dropout: a run repeats and resumes exactly, and every backend sees the same numbers),
writes them into a small table and hands the table to one backend op (contract/images.py)
that does the pixel work. Gradients pass straight through (dout unchanged), as minidl's other
colour layers: Keras never differentiates these layers, which sit before trainable ones.

Calls on data (`layer(x)` on arrays, as in a tf.data map), as Keras 3's image preprocessing
layers allow: training defaults to True (Keras's call(data, training=True)); an unbatched
image (H, W, C) is a batch of one; a dict {"images": ..., "labels": ...} returns the same
keys with the images changed and the labels as the layer's transform_labels makes them (mixed
by MixUp and CutMix, unchanged by the others). Each such call draws new numbers (Keras's
SeedGenerator advances): from `seed` when given, from minidl's global generator otherwise.
"""

import numbers

import numpy as np

from .preprocessing_color import check_data_format
from .preprocessing_random import RandomLayer, _is_data, next_data_seed  # noqa: F401 (re-exported)

DATA_KEYS = ("images", "labels")


class HostDrawnAugment(RandomLayer):
    """A random image layer whose per-sample numbers are drawn on the host (module doc)."""

    def __init__(self, seed=None, data_format=None, name=None, trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        self.data_format = check_data_format(data_format, self.describe())

    def get_config(self):
        return dict(super().get_config(), data_format=self.data_format)

    def generator(self, call):
        """The numpy Generator of this call's draws."""
        return np.random.default_rng(call.step_seed % 2 ** 64)

    def upload(self, call, role, table):
        """The host table as the call's backend tensor `role` (its buffer kept from step to step)."""
        table = np.ascontiguousarray(table, np.float32)
        tensor = call.buffer(role, table.shape)
        self.backend.copy_from_host(tensor, table)
        return tensor

    # ------------------------------------------------------------- calls on data
    def __call__(self, inputs, training=None):
        if isinstance(inputs, dict):
            return self._call_on_dict(inputs, training)
        if _is_data(inputs):
            images = np.asarray(inputs, np.float32)
            return self._call_on_images(images, training)[0]
        return super().__call__(inputs, training)

    def _call_on_images(self, images, training):
        """(output images, the call's context) of a call on a host array."""
        if images.ndim not in (3, 4):
            raise ValueError(f"{self.describe()} expects images (H, W, C) or a batch (N, H, W, C), "
                             f"got an array of shape {images.shape}")
        unbatched = images.ndim == 3
        batch = images[None] if unbatched else images
        next_data_seed(self)
        from . import eager_calls
        from .base import eager_call
        training = True if training is None else bool(training)
        out = eager_call(self, batch, training)
        call = eager_calls.context(self, self.backend, 0)
        return (out[0] if unbatched else out), call

    def _call_on_dict(self, data, training):
        unknown = sorted(set(data) - set(DATA_KEYS))
        if "images" not in data or unknown:
            raise ValueError(f"{self.describe()}: a dict input holds 'images' and optionally "
                             f"'labels' (minidl has no bounding boxes or segmentation masks), "
                             f"got keys {sorted(data)}")
        images = np.asarray(data["images"], np.float32)
        out, call = self._call_on_images(images, training)
        result = dict(data, images=out)
        if "labels" in data:
            result["labels"] = self._labels(call, np.asarray(data["labels"]), images.ndim == 3)
        return result

    def _labels(self, call, labels, unbatched):
        """The labels of a dict call whose images ran on `call` (Keras's transform_labels)."""
        return labels

    def mix_labels(self, call, labels, unbatched):
        """labels mixed by the call's table call.label_mix (N, 3), as its images were."""
        if not call.applied or unbatched or getattr(call, "label_mix", None) is None:
            return labels
        labels = np.asarray(labels, np.float32)
        if labels.ndim < 1 or labels.shape[0] != self.backend.shape(call.label_mix)[0]:
            raise ValueError(f"{self.describe()}: labels must have one row per image, got labels "
                             f"of shape {labels.shape} for {self.backend.shape(call.label_mix)[0]} images")
        b = self.backend
        source = b.from_numpy(np.ascontiguousarray(labels))
        mixed = b.zeros(labels.shape)
        b.batch_mix_forward(mixed, source, call.label_mix)
        return b.to_numpy(mixed)


def keras_pair(value, bounds, owner, argument):
    """Keras's _set_factor / _set_factor_by_name: a number f in bounds is (max(-|f|, low), |f|),
    a pair (not wholly outside bounds) is sorted."""
    message = (f"{owner}: the `{argument}` argument should be a number (or a list of two numbers) "
               f"in the range [{bounds[0]}, {bounds[1]}]; received {argument}={value!r}")
    if isinstance(value, (tuple, list)):
        if len(value) != 2 or not all(_number(v) for v in value):
            raise ValueError(message)
        if value[0] > bounds[1] or value[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(float(v) for v in value))
    if not _number(value) or value < bounds[0] or value > bounds[1]:
        raise ValueError(message)
    return (max(-abs(float(value)), float(bounds[0])), abs(float(value)))


def _number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def box_bounds(generator, ratio, length):
    """Keras's _compute_crop_bounds: (start, end) of boxes of length ratio * length placed
    uniformly, in float32."""
    crop = (ratio * np.float32(length)).astype(np.float32)
    start = generator.random(len(ratio), np.float32) * (np.float32(length) - crop)
    return start, start + crop


__all__ = ["HostDrawnAugment", "box_bounds", "keras_pair", "next_data_seed"]
