"""keras.random: seeded draws as minidl tensors (minidl.random re-exports them).

A draw is keyed by an int seed: the same seed gives the same numbers, on every backend. The
numbers come from numpy's counter-based Philox generator keyed by the seed (the generator the
numpy backend's noise ops use) on the host, and are uploaded to the backend once; what is done
with them after (scaling, masking, argmax, take) is minidl.ops on the device, so dropout and
categorical get gradients / run where their inputs live.

`seed` is an int (the same draw every call), a SeedGenerator (a new seed each call, the
sequence fixed by the generator's own seed: how a layer draws in its call), or None (a seed
from minidl's global generator, set by minidl.set_seed).
"""

import numpy as np

from .seed_state import mix_seed, new_seed


class SeedGenerator:
    """A stream of seeds: each draw that takes it advances it, so a layer holding one in
    __init__ draws new numbers in each call, the same sequence for the same seed."""

    def __init__(self, seed=None, name=None, **kwargs):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"SeedGenerator: seed must be an int or None, got {seed!r}")
        self.name = name or "seed_generator"
        self.initial_seed = new_seed() if seed is None else int(seed)
        self.counter = 0

    @property
    def state(self):
        """(seed, counter): what the next draw depends on."""
        return (self.initial_seed, self.counter)

    def next(self, ordered=True):
        """The seed of the next draw (an int)."""
        self.counter += 1
        return mix_seed(self.initial_seed, self.counter)

    def get_config(self):
        return {"seed": self.initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<SeedGenerator seed={self.initial_seed} draws={self.counter}>"


def draw_seed(seed):
    """The int key of one draw from seed (an int, a SeedGenerator or None)."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if seed is None:
        return new_seed()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"keras.random: seed must be an int, a SeedGenerator or None, got {seed!r}")
    return mix_seed(int(seed))


def _generator(seed):
    return np.random.Generator(np.random.Philox(key=draw_seed(seed) % 2 ** 64))


def _shape(shape, op):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in shape):
        raise ValueError(f"random.{op}: shape must be a tuple of non-negative ints, got {shape!r}")
    return tuple(int(s) for s in shape)


def _tensor(array, dtype, op, default="float32"):
    from .ops.core import convert_to_tensor
    dtype = default if dtype is None else dtype
    kind = np.dtype(dtype).kind
    if default == "float32" and kind != "f":
        raise ValueError(f"random.{op}: dtype must be a float dtype, got {dtype!r}")
    return convert_to_tensor(np.asarray(array, np.float32 if kind == "f" else np.int32),
                             dtype="float32" if kind == "f" else "int32")


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    z = _generator(seed).standard_normal(_shape(shape, "normal"))
    return _tensor(z * float(stddev) + float(mean), dtype, "normal")


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Uniform in [minval, maxval)."""
    u = _generator(seed).random(_shape(shape, "uniform"))
    return _tensor(u * (float(maxval) - float(minval)) + float(minval), dtype, "uniform")


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal draws, those beyond two standard deviations drawn again."""
    g = _generator(seed)
    z = g.standard_normal(_shape(shape, "truncated_normal"))
    while True:
        bad = np.abs(z) > 2.0
        if not bad.any():
            break
        z[bad] = g.standard_normal(int(bad.sum()))
    return _tensor(z * float(stddev) + float(mean), dtype, "truncated_normal")


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers in [minval, maxval)."""
    if int(maxval) <= int(minval):
        raise ValueError(f"random.randint: maxval ({maxval}) must exceed minval ({minval})")
    values = _generator(seed).integers(int(minval), int(maxval), _shape(shape, "randint"))
    return _tensor(values, dtype, "randint", default="int32")


def categorical(logits, num_samples, dtype="int32", seed=None):
    """(batch, num_samples) class indices drawn from each row's softmax(logits) (the Gumbel-max
    trick: argmax of logits plus Gumbel noise, on the logits' backend)."""
    from .ops.core import as_tensor, cast, convert_to_tensor, stop_gradient
    from .ops.reductions import argmax
    from .ops.shapes import expand_dims
    t = as_tensor(logits)
    if len(t.shape) != 2:
        raise ValueError(f"random.categorical: logits must be (batch, classes), got shape {t.shape}")
    batch, classes = t.shape
    u = _generator(seed).random((batch, int(num_samples), classes))
    gumbel = -np.log(-np.log(np.clip(u, 1e-20, 1.0 - 1e-7)))
    noise = convert_to_tensor(gumbel.astype(np.float32), backend=t.backend)
    picks = argmax(stop_gradient(expand_dims(cast(t, "float32"), 1)) + noise, axis=-1)
    return picks if np.dtype(dtype).kind in "iu" else cast(picks, "float32")


def dropout(inputs, rate, noise_shape=None, seed=None):
    """inputs with each entry (or each noise_shape slice) zeroed with probability rate, the rest
    scaled by 1 / (1 - rate); the gradient flows through the kept entries."""
    from .ops.core import as_tensor, convert_to_tensor
    t = as_tensor(inputs)
    if not 0.0 <= float(rate) < 1.0:
        raise ValueError(f"random.dropout: rate must be in [0, 1), got {rate!r}")
    shape = t.shape if noise_shape is None else tuple(
        t.shape[k] if s is None else int(s) for k, s in enumerate(noise_shape))
    keep = (_generator(seed).random(shape) >= float(rate)).astype(np.float32) / (1.0 - float(rate))
    return t * convert_to_tensor(keep, backend=t.backend)


def shuffle(x, axis=0, seed=None):
    """x with its slices along axis in a random order."""
    from .ops.core import as_tensor
    from .ops.shapes import take
    t = as_tensor(x)
    n = t.shape[axis]
    order = _generator(seed).permutation(n).astype(np.int32)
    return take(t, order, axis=axis)


def gamma(shape, alpha, dtype=None, seed=None):
    """Gamma(alpha, 1) draws."""
    if float(alpha) <= 0:
        raise ValueError(f"random.gamma: alpha must be > 0, got {alpha!r}")
    return _tensor(_generator(seed).gamma(float(alpha), 1.0, _shape(shape, "gamma")), dtype, "gamma")


def beta(shape, alpha, beta, dtype=None, seed=None):  # noqa: A002 - keras's argument name
    """Beta(alpha, beta) draws (alpha and beta numbers or arrays broadcasting to shape)."""
    g = _generator(seed)
    a = np.broadcast_to(np.asarray(_host(alpha), np.float64), _shape(shape, "beta"))
    b = np.broadcast_to(np.asarray(_host(beta), np.float64), _shape(shape, "beta"))
    return _tensor(g.beta(a, b), dtype, "beta")


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Binomial(counts, probabilities) draws (floats, as Keras's default dtype)."""
    g = _generator(seed)
    n = np.broadcast_to(np.asarray(_host(counts)), _shape(shape, "binomial")).astype(np.int64)
    p = np.broadcast_to(np.asarray(_host(probabilities), np.float64), _shape(shape, "binomial"))
    return _tensor(g.binomial(n, p), dtype, "binomial")


def _host(v):
    return v.numpy() if hasattr(v, "numpy") else v
