"""Keras weight initializers. They produce host arrays that the model uploads once."""

import math

import numpy as np

from . import random as mrandom


def _fans(shape):
    if len(shape) == 2:
        return shape[0], shape[1]
    if len(shape) == 4:  # conv kernel (kh, kw, in, out)
        receptive = shape[0] * shape[1]
        return shape[2] * receptive, shape[3] * receptive
    size = int(np.prod(shape))
    return size, size


class Initializer:
    def __call__(self, shape):
        raise NotImplementedError

    def get_config(self):
        return {}

    @property
    def name(self):
        return _NAMES_BY_CLASS[type(self)]


class Zeros(Initializer):
    def __call__(self, shape):
        return np.zeros(shape, dtype=np.float64)


class Ones(Initializer):
    def __call__(self, shape):
        return np.ones(shape, dtype=np.float64)


class GlorotUniform(Initializer):
    def __call__(self, shape):
        fan_in, fan_out = _fans(shape)
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return mrandom.generator().uniform(-limit, limit, size=shape)


class GlorotNormal(Initializer):
    def __call__(self, shape):
        fan_in, fan_out = _fans(shape)
        return _truncated_normal(shape, math.sqrt(2.0 / (fan_in + fan_out)))


class HeNormal(Initializer):
    def __call__(self, shape):
        fan_in, _ = _fans(shape)
        return _truncated_normal(shape, math.sqrt(2.0 / fan_in))


class HeUniform(Initializer):
    def __call__(self, shape):
        fan_in, _ = _fans(shape)
        limit = math.sqrt(6.0 / fan_in)
        return mrandom.generator().uniform(-limit, limit, size=shape)


class RandomNormal(Initializer):
    """Keras's RandomNormal with its defaults (mean 0, stddev 0.05)."""

    def __call__(self, shape):
        return mrandom.generator().normal(0.0, 0.05, size=shape)


class RandomUniform(Initializer):
    """Keras's RandomUniform with its defaults ([-0.05, 0.05])."""

    def __call__(self, shape):
        return mrandom.generator().uniform(-0.05, 0.05, size=shape)


class TorchUniform(Initializer):
    """PyTorch's default nn.Linear / nn.Conv2d weight draw (kaiming_uniform_ with a = sqrt(5)):
    uniform(-1 / sqrt(fan_in), 1 / sqrt(fan_in)). airbench94's head keeps it; Keras has no
    named initializer with this limit (random_uniform is +-0.05 whatever the fan-in)."""

    def __call__(self, shape):
        fan_in, _ = _fans(tuple(shape))
        limit = 1.0 / math.sqrt(fan_in)
        return mrandom.generator().uniform(-limit, limit, size=shape)


class Dirac(Initializer):
    """Identity convolution (PyTorch's dirac_, airbench's conv init): for a kernel (kh, kw, in,
    out), output channel o < min(in, out) passes input channel o through at the centre tap
    (kh // 2, kw // 2); any further output channels keep PyTorch's default conv draw,
    uniform(-1 / sqrt(fan_in), 1 / sqrt(fan_in)). Other shapes are an error."""

    def __call__(self, shape):
        shape = tuple(shape)
        if len(shape) != 4:
            raise ValueError(f"initializer 'dirac' needs a conv kernel shape (kh, kw, in, out), got {shape}")
        kh, kw, channels_in, channels_out = shape
        limit = 1.0 / math.sqrt(kh * kw * channels_in)
        values = mrandom.generator().uniform(-limit, limit, size=shape)
        identity = min(channels_in, channels_out)
        values[..., :identity] = 0.0
        values[kh // 2, kw // 2, np.arange(identity), np.arange(identity)] = 1.0
        return values


def _truncated_normal(shape, stddev):
    # Keras draws from a normal truncated at two standard deviations; the
    # 0.8796 factor restores the requested variance after truncation.
    std = stddev / 0.87962566103423978
    values = mrandom.generator().normal(0.0, std, size=shape)
    bad = np.abs(values) > 2 * std
    while bad.any():
        values[bad] = mrandom.generator().normal(0.0, std, size=int(bad.sum()))
        bad = np.abs(values) > 2 * std
    return values


_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
    "random_normal": RandomNormal, "random_uniform": RandomUniform, "dirac": Dirac,
    "torch_uniform": TorchUniform,
}
_NAMES_BY_CLASS = {cls: name for name, cls in _BY_NAME.items()}


# Data-dependent initializers: fitted to data, then assigned to a built layer.
from .initializers_data import DataInitializer, PatchWhitening, initialize_from_data  # noqa: E402


def get(identifier):
    """An initializer from a name ("glorot_uniform", ...) or an Initializer instance."""
    if isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"unknown initializer {identifier!r}; known: {sorted(_BY_NAME)}")


def serialize(initializer):
    return initializer.name
