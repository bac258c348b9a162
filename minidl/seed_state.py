"""minidl's seeded random state: weight initialization, data order and dropout seeds (minidl.random
re-exports it beside keras.random's draws)."""

import numpy as np

_generator = np.random.default_rng()


def set_seed(seed):
    """Seed every random choice minidl makes (initializers, shuffling, dropout masks)."""
    global _generator
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"set_seed: seed must be a non-negative int, got {seed!r}")
    _generator = np.random.default_rng(int(seed))


def generator():
    """The global numpy Generator seeded by set_seed."""
    return _generator


def new_seed():
    """A fresh 62-bit integer seed drawn from the global generator."""
    return int(_generator.integers(0, 2**62))


def mix_seed(*values):
    """A 64-bit integer mixed from integers (splitmix64 steps): the seed of one epoch's data
    order or one step's dropout masks, the same in every process for the same values."""
    h = 0x9E3779B97F4A7C15
    for v in values:
        h = (h ^ (int(v) & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
    return h

