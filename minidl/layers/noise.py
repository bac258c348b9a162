"""GaussianNoise and SpatialDropout2D: random layers that act in training only.

Like Dropout they draw from the backend's counter-based generator with the `step_seed` the
model sets before every training step (from the model's seed or the layer's own, the layer's
position and the step count), so that a resumed run draws the same numbers.
"""

from ..arguments import number
from .base import Layer
from .core import Dropout


class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of standard deviation `stddev` in training (Keras
    GaussianNoise); the identity in inference, and its gradient is the identity."""

    supports_masking = True   # passes its input's mask on (as Keras)

    needs_step_seed = True

    def __init__(self, stddev, seed=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.stddev = number(stddev, "stddev", self.describe(), low=0)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"{self.describe()}: seed must be None or an int >= 0, got {seed!r}")
        self.seed = seed
        self.step_seed = 0

    def get_config(self):
        return dict(super().get_config(), stddev=self.stddev, seed=self.seed)

    def forward(self, call, x, training):
        if not training or self.stddev == 0:
            return x
        out = call.buffer("out", self.backend.shape(x))
        self.backend.gaussian_noise(out, x, self.stddev, call.step_seed)
        return out

    def backward(self, call, dout):
        return dout


class SpatialDropout2D(Dropout):
    """Dropout of whole feature maps (Keras SpatialDropout2D, channels_last): in training each
    sample drops each channel with probability `rate` everywhere in the image and scales the
    kept channels by 1 / (1 - rate): Dropout with noise_shape (None, 1, 1, channels)."""

    def __init__(self, rate, seed=None, name=None, trainable=True):
        super().__init__(rate, seed=seed, name=name, trainable=trainable)

    def get_config(self):
        config = super().get_config()
        del config["noise_shape"]
        return config

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")
        self._shared = (0, 1)   # height and width


__all__ = ["GaussianNoise", "SpatialDropout2D"]
