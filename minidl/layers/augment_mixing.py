"""Keras 3's MixUp and CutMix: each image of a training batch mixed with another image of the
same batch (a random order of the batch), on the backend ops batch_mix_forward and
image_paste_forward; called on a dict {"images", "labels"} they mix the labels the same way
(augment_base.py). Training only; the gradient passes straight through."""

import numpy as np

from .augment_base import HostDrawnAugment, box_bounds, keras_pair

f32 = np.float32


class MixUp(HostDrawnAugment):
    """images[n] = w images[n] + (1 - w) images[p(n)], w ~ Beta(alpha, alpha) per image and p a
    random order of the batch (Keras 3: alpha default 0.2); labels likewise."""

    def __init__(self, alpha=0.2, data_format=None, seed=None, name=None, trainable=True):
        super().__init__(seed=seed, data_format=data_format, name=name, trainable=trainable)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
            raise ValueError(f"{self.describe()}: alpha must be a number > 0 (the Beta "
                             f"distribution's parameter), got alpha={alpha!r}")
        self.alpha = alpha

    def get_config(self):
        return dict(super().get_config(), alpha=self.alpha)

    def augment(self, call, x):
        n = self.backend.shape(x)[0]
        rng = self.generator(call)
        order = rng.permutation(n)
        weight = rng.beta(self.alpha, self.alpha, n).astype(f32)
        call.label_mix = self.upload(call, "mix", np.stack([weight, f32(1) - weight, order], 1))
        out = call.buffer("out", self.backend.shape(x))
        self.backend.batch_mix_forward(out, x, call.label_mix)
        return out

    def _labels(self, call, labels, unbatched):
        return self.mix_labels(call, labels, unbatched)


class CutMix(HostDrawnAugment):
    """Paste into each image a box of another image of the batch (a random order p): the box
    covers a fraction 1 - w of the image, w ~ Beta(a, a) with a drawn once per batch in
    `factor` (Keras 3: a number f in [0, 1] means [0, f]); labels become w labels[n] +
    (1 - w') labels[p(n)], w' the fraction actually left. An unbatched image is left as it is
    (Keras's CutMix needs a batch)."""

    def __init__(self, factor=1.0, seed=None, data_format=None, name=None, trainable=True):
        super().__init__(seed=seed, data_format=data_format, name=name, trainable=trainable)
        self.factor = keras_pair(factor, (0, 1), self.describe(), "factor")

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor))

    def augment(self, call, x):
        n, h, w, _ = self.backend.shape(x)
        rng = self.generator(call)
        alpha = f32(rng.uniform(self.factor[0], self.factor[1])) + f32(1e-6)
        ratio = np.sqrt(f32(1) - rng.beta(alpha, alpha, n).astype(f32))
        x0, x1 = box_bounds(rng, ratio, w)
        y0, y1 = box_bounds(rng, ratio, h)
        order = rng.permutation(n)
        kept = f32(1) - (x1 - x0) * (y1 - y0) / f32(w * h)   # Keras's label weight
        offsets = np.zeros(n, f32)   # read the source image where the box is
        boxes = self.upload(call, "boxes", np.stack([x0, x1, y0, y1, order, offsets, offsets], 1))
        call.label_mix = self.upload(call, "label_mix", np.stack([kept, f32(1) - kept, order], 1))
        out = call.buffer("out", (n, h, w, self.backend.shape(x)[3]))
        self.backend.image_paste_forward(out, x, boxes, x)
        return out

    def _call_on_images(self, images, training):
        if images.ndim == 3:   # Keras draws nothing for one image
            training = False
        return super()._call_on_images(images, training)

    def _labels(self, call, labels, unbatched):
        return self.mix_labels(call, labels, unbatched)


__all__ = ["CutMix", "MixUp"]
