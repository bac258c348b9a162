"""set_random_seed: one seed for Python's, NumPy's and minidl's random numbers."""

import random

import numpy as np

from .. import random as minidl_random


def set_random_seed(seed):
    """Seed `random`, NumPy's global generator and minidl (initializers, data order, dropout),
    as keras.utils.set_random_seed does for its framework."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"set_random_seed: expected seed to be an integer, got {seed!r} "
                         f"(of type {type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"set_random_seed: seed must be >= 0, got {seed}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # numpy's legacy global generator takes 32-bit seeds
    minidl_random.set_seed(seed)
