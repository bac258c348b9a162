"""What boston_housing and california_housing share: a numeric npz of x and y, shuffled and split."""

import os

import numpy as np

from ..io import ArchiveError, NpzArchive
from .cifar10 import CorruptDatasetError


def check_test_split(test_split):
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. "
                         "It must be between 0 and 1 (exclusive of 1).")


def read_xy(title, file_path, features, max_samples):
    """x (n, features) and y (n,), checked by their headers before their data is read."""
    size = os.stat(file_path).st_size
    limit = 16 * max_samples * (features + 1) + (1 << 16)  # float64, stored uncompressed, and slack
    if size > limit:
        raise CorruptDatasetError(f"{title}: {file_path} has {size} bytes, more than the data set "
                                  f"can ({limit}); not read")
    with open(file_path, "rb") as f:
        data = f.read(limit + 1)
    try:
        npz = NpzArchive(data, file_path)
        if set(npz.entries) != {"x", "y"}:
            raise CorruptDatasetError(f"{title}: {file_path} holds {sorted(npz.entries)}, expected "
                                      "['x', 'y']")
        (x_shape, _), (y_shape, _) = npz.entries["x"], npz.entries["y"]
        if len(x_shape) != 2 or x_shape[1] != features or tuple(y_shape) != x_shape[:1] \
                or x_shape[0] > max_samples:
            raise CorruptDatasetError(
                f"{title}: {file_path}: x is {x_shape} and y {y_shape}; expected (n, {features}) "
                f"and (n,) with n <= {max_samples}")
        return np.array(npz.array("x")), np.array(npz.array("y"))
    except ArchiveError as exc:
        raise CorruptDatasetError(f"{title}: {exc}") from None


def shuffle_split(x, y, test_split, seed):
    """Keras's split: shuffle with RandomState(seed), the first (1 - test_split) for training."""
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
