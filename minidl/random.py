"""minidl.random: minidl's seeded random state (set_seed, generator, new_seed, mix_seed: the seeds
of weight initialization, data order and dropout) and keras.random's draws (normal, uniform, ...,
SeedGenerator)."""

from .seed_state import generator, mix_seed, new_seed, set_seed  # noqa: F401
from .random_draws import (SeedGenerator, beta, binomial, categorical, dropout, gamma,  # noqa: F401
                           normal, randint, shuffle, truncated_normal, uniform)
