"""Keras 3's RandomElasticTransform: each training image, with a random probability, resampled
along a smooth random displacement field, then every image clipped to value_range.

Keras's algorithm (keras/src/backend/*/image.py elastic_transform): per batch a distortion
factor f in `scale`; alpha = 0.1 f max(H, W), sigma = 0.05 f min(H, W); per image two fields
of N(0, 1) noise times sigma (dx, dy), each blurred by a Gaussian of sigma over a window of
int(6 sigma) | 1 pixels (zero-padded), and output pixel (i, j) reads the image at
(i + alpha dy, j + alpha dx) by map_coordinates with the interpolation and fill_mode.

minidl draws from the call's step seed (a run repeats and resumes exactly): the per-image
choice and f on the host (augment_base.py: the same on every backend), the noise by the
backend's own counter-based generator (gaussian_noise, as GaussianNoise: each backend its own
numbers; drawn where the field is used, with no host work or upload per pixel), scaled per
image by alpha sigma (0 for an image left as it is: channel_mask_multiply). The backend then
blurs the (N, H, W, 2) field (image_filter_blend_forward, the Gaussian split in a row pass
and a column pass: the same zero-padded filter at 2K instead of K^2 taps) and resamples the
images along it (image_displace_forward, clipped to value_range); the gradient is the
resampling's exact adjoint (image_displace_backward). Training only, as Keras."""

import math

import numpy as np

from ..backends.contract.images import DISPLACE_FILL_MODES
from .augment_base import HostDrawnAugment, keras_pair
from .augment_filters import gaussian_kernel
from .preprocessing_random import INTERPOLATIONS, number, value_range_pair

f32 = np.float32


def elastic_params(height, width, factor):
    """Keras's (alpha, sigma, window) for images of height x width and distortion factor."""
    alpha = max(height, width) * 0.1 * factor
    sigma = min(height, width) * 0.05 * factor
    return alpha, sigma, int(6 * sigma) | 1


class RandomElasticTransform(HostDrawnAugment):
    """Keras 3's RandomElasticTransform (module doc). factor: the probability of transforming
    an image is drawn per image in factor (a number f in [0, 1] means [0, f]); scale (the same
    form) bounds the batch's distortion factor; interpolation "nearest" or "bilinear";
    fill_mode "reflect" (default), "constant" (fill_value), "nearest", "wrap" or "mirror"."""

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, value_range=(0, 255), seed=None, data_format=None, name=None,
                 trainable=True):
        super().__init__(seed=seed, data_format=data_format, name=name, trainable=trainable)
        owner = self.describe()
        self.factor = keras_pair(factor, (0, 1), owner, "factor")
        self.scale = keras_pair(scale, (0, 1), owner, "scale")
        if interpolation not in INTERPOLATIONS:    # Keras raises NotImplementedError for both
            raise NotImplementedError(f"{owner}: unknown `interpolation` {interpolation!r}; "
                                      f"expected one of {list(INTERPOLATIONS)}")
        if fill_mode not in DISPLACE_FILL_MODES:
            raise NotImplementedError(f"{owner}: unknown `fill_mode` {fill_mode!r}; expected one "
                                      f"of {list(DISPLACE_FILL_MODES)}")
        self.interpolation, self.fill_mode = interpolation, fill_mode
        self.fill_value = number(fill_value, "fill_value", owner)
        self.value_range = value_range_pair(value_range, owner)

    def get_config(self):
        return dict(super().get_config(), factor=list(self.factor), scale=list(self.scale),
                    interpolation=self.interpolation, fill_mode=self.fill_mode,
                    fill_value=self.fill_value, value_range=list(self.value_range))

    def draw(self, call, n, height, width):
        """(scales (N,): alpha sigma for an image to transform, 0 for one left as it is; sigma
        of the blur) of this call, on the host in Keras's order of draws (probability,
        threshold, factor); call.apply records the choice."""
        rng = self.generator(call)
        probability = rng.uniform(self.factor[0], self.factor[1], n)
        call.apply = rng.random(n) < probability
        factor = float(f32(rng.uniform(self.scale[0], self.scale[1])))
        alpha, sigma, _ = elastic_params(height, width, factor)
        return (f32(alpha * sigma) * call.apply.astype(f32)), sigma

    def noise(self, call, scales, height, width):
        """The (N, H, W, 2) backend tensor of N(0, 1) draws (dy, dx) keyed by the call's step
        seed (the backend's counter-based generator), image n's times scales[n]."""
        b = self.backend
        n = len(scales)
        noise = call.buffer("noise", (n, height, width, 2))
        b.fill(noise, 0.0)
        b.gaussian_noise(noise, noise, 1.0, call.step_seed)
        flat = b.reshape(noise, (n, height * width, 2))
        b.channel_mask_multiply(flat, flat, self.upload(call, "scales", np.repeat(scales[:, None], 2, 1)))
        return noise

    def displacement(self, call, noise, sigma):
        """The (N, H, W, 2) field (dy, dx) in pixels: the backend tensor `noise` (already
        scaled) blurred by Keras's Gaussian of sigma."""
        b = self.backend
        if not sigma > 0:    # f = 0: no distortion (Keras would divide by a zero sigma)
            return noise
        shape = b.shape(noise)
        taps = gaussian_kernel(int(6 * sigma) | 1, sigma)
        ones = self.upload(call, "ones", np.ones(shape[0], f32))
        rows = call.buffer("field_rows", shape)
        blurred = call.buffer("field", shape)
        unbounded = (-math.inf, math.inf)
        # Keras's 2-D kernel outer(taps, taps) is separable: a row pass, then a column pass
        b.image_filter_blend_forward(rows, noise, self.upload(call, "taps_row", taps[None, :]), ones,
                                     unbounded)
        b.image_filter_blend_forward(blurred, rows, self.upload(call, "taps_col", taps[:, None]), ones,
                                     unbounded)
        return blurred

    def augment(self, call, x):
        b = self.backend
        n, height, width, _ = b.shape(x)
        if self.scale[1] == 0 or self.factor[1] == 0:   # Keras: no transformation, no clip
            call.field = None
            return x
        out = call.buffer("out", b.shape(x))
        scales, sigma = self.draw(call, n, height, width)
        call.field = self.displacement(call, self.noise(call, scales, height, width), sigma)
        b.image_displace_forward(out, x, call.field, self.interpolation, self.fill_mode,
                                 self.fill_value, self.value_range)
        return out

    def augment_backward(self, call, dout):
        if call.field is None or not call.input_grad_needed:   # e.g. a model's first layer
            return dout
        dx = call.buffer("dx", self.backend.shape(dout))
        self.backend.image_displace_backward(dx, dout, call.field, self.interpolation, self.fill_mode)
        return dx


__all__ = ["RandomElasticTransform", "elastic_params"]
