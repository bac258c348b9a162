"""Keras's remaining regularization layers: GaussianDropout, AlphaDropout and
ActivityRegularization.

The two dropouts act in training only and draw from the backend's counter-based generators with
the layer's step seed (as Dropout and GaussianNoise do), so a resumed run draws the same numbers;
their multipliers are kept on the call's context for the backward.
"""

import math

from .. import regularizers
from ..arguments import number
from .base import Layer
from .core import Dropout

# SELU's constants (Keras's AlphaDropout keeps a SELU network's mean and variance)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class GaussianDropout(Layer):
    """Keras GaussianDropout: in training, multiplies the inputs by noise ~ N(1, rate / (1 -
    rate)); the identity in inference. Its gradient is the same multiplier."""

    supports_masking = True
    needs_step_seed = True

    def __init__(self, rate, seed=None, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.rate = number(rate, "rate", self.describe(), low=0, high=1)
        if self.rate >= 1:
            raise ValueError(f"{self.describe()}: rate must be in [0, 1), got {rate!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"{self.describe()}: seed must be None or an int >= 0, got {seed!r}")
        self.seed = seed
        self.step_seed = 0

    def get_config(self):
        return dict(super().get_config(), rate=self.rate, seed=self.seed)

    def forward(self, call, x, training):
        call.noisy = bool(training) and self.rate > 0
        if not call.noisy:
            return x
        b = self.backend
        shape = b.shape(x)
        call.noise = call.buffer("noise", shape)
        b.fill(call.noise, 1.0)
        b.gaussian_noise(call.noise, call.noise, math.sqrt(self.rate / (1.0 - self.rate)),
                         call.step_seed)
        out = call.buffer("out", shape)
        b.multiply(out, x, call.noise)
        return out

    def backward(self, call, dout):
        if not call.noisy:
            return dout
        dx = call.buffer("dx", self.backend.shape(dout))
        self.backend.multiply(dx, dout, call.noise)
        return dx


class AlphaDropout(Dropout):
    """Keras AlphaDropout: in training each input is kept with probability 1 - rate, a dropped
    one is set to SELU's negative saturation value -alpha * scale, and the result is mapped by
    a x + b so that mean and variance stay those of the inputs; the identity in inference.
    noise_shape as Dropout takes it."""

    def __init__(self, rate, noise_shape=None, seed=None, name=None, trainable=True, **kwargs):
        super().__init__(rate, noise_shape=noise_shape, seed=seed, name=name, trainable=trainable)
        alpha_p = -_SELU_ALPHA * _SELU_SCALE
        self._a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5 if self.rate < 1 else 0.0
        self._alpha_p = alpha_p

    def forward(self, call, x, training):
        # Dropout's masked output is x * keep / (1 - rate); AlphaDropout is
        # a (1 - rate) mask (x - alpha_p) + a alpha_p + b, with b = -a alpha_p rate
        call.dropped = bool(training) and 0 < self.rate < 1
        if not call.dropped:
            return x
        b = self.backend
        shape = b.shape(x)
        shifted = call.buffer("shifted", shape)
        b.binary(shifted, x, self._alpha_p, "subtract")
        masked = super().forward(call, shifted, training)
        out = call.buffer("alpha_out", shape)
        a, rate = self._a, self.rate
        b.binary(out, masked, a * (1 - rate), "multiply")
        b.binary(out, out, a * self._alpha_p - a * self._alpha_p * rate, "add")
        return out

    def backward(self, call, dout):
        if not call.dropped:
            return dout
        dx = super().backward(call, dout)
        scaled = call.buffer("alpha_dx", self.backend.shape(dout))
        self.backend.binary(scaled, dx, self._a * (1 - self.rate), "multiply")
        return scaled


class ActivityRegularization(Layer):
    """Keras ActivityRegularization: the identity, whose output adds l1 * sum|y| + l2 * sum y^2
    to the training loss (an L1L2 activity regularizer)."""

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, name=None, trainable=True, **kwargs):
        kwargs.pop("activity_regularizer", None)   # from_config: it is made from l1 and l2
        super().__init__(name=name, trainable=trainable,
                         activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = self.activity_regularizer.l1, self.activity_regularizer.l2

    def get_config(self):
        config = dict(super().get_config(), l1=self.l1, l2=self.l2)
        config.pop("activity_regularizer", None)
        return config

    def forward(self, call, x, training):
        return x

    def backward(self, call, dout):
        return dout
