"""Small synthetic stand-ins for the data sets the keras-io examples download (this corpus runs
offline): learnable, so that an example that trains can be checked to have learned something."""

import numpy as np


def digits(n, seed=0, size=28):
    """(x (n, size, size) uint8, y (n,) int) : ten classes, each a bright bar at its own place
    over noise, like MNIST's shapes and dtypes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    x = rng.integers(0, 60, (n, size, size)).astype(np.float32)
    for i, label in enumerate(y):
        row = 2 + (label * (size - 6)) // 10
        x[i, row:row + 3, 4:size - 4] += 180
    return np.clip(x, 0, 255).astype(np.uint8), y


def tokens(n, length, vocab, seed=0):
    """(x (n, length) int, y (n,) 0/1): sequences of token ids where class 1 uses the upper half
    of the vocabulary more often (a sentiment-like task), with 0-padding at the end."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = np.zeros((n, length), np.int64)
    for i, label in enumerate(y):
        used = rng.integers(length // 2, length + 1)
        low, high = (2, vocab // 2) if label == 0 else (vocab // 2, vocab)
        words = np.where(rng.random(used) < 0.7, rng.integers(low, high, used), rng.integers(2, vocab, used))
        x[i, :used] = words
    return x, y


def series(n, steps, seed=0):
    """(x (n, steps, 1) float32, y (n,) 0/1): noisy sine waves of two frequencies."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    t = np.linspace(0, 4 * np.pi, steps)
    x = np.sin(t[None, :] * (1 + y[:, None]) + rng.random((n, 1)) * 6) + 0.3 * rng.standard_normal((n, steps))
    return x[..., None].astype(np.float32), y
