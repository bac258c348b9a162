"""keras.utils's helpers for (x, y, sample_weight) data: pack / unpack a batch, and
split_dataset (host-side data handling; no backend is involved)."""

import numbers

import numpy as np


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """x alone, (x, y) or (x, y, sample_weight), as Keras packs a batch. A tuple x alone
    comes back as (x,), so that unpacking gives it back whole."""
    if y is None:
        return (x,) if isinstance(x, (list, tuple)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """(x, y, sample_weight) of a batch given as x, (x,), (x, y) or (x, y, sample_weight);
    the missing ones are None."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return (data[0], data[1], data[2])
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")


def _size(value, total, argument):
    """A split size (a fraction in (0, 1) or a count in [1, total)) as a count."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"split_dataset: {argument} must be a float in (0, 1) or an int, "
                        f"got {value!r}")
    if isinstance(value, numbers.Integral):
        if not 0 < value <= total:
            raise ValueError(f"split_dataset: {argument}={value} must be in [1, {total}] for "
                             f"a dataset of {total} samples")
        return int(value)
    if not 0 < value < 1:
        raise ValueError(f"split_dataset: {argument} as a fraction must be in (0, 1), got {value}")
    return int(round(value * total))


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None,
                  preferred_backend=None):
    """Split an array, or a tuple / list / dict of arrays of one length (e.g. (x, y)), into
    (left, right) of the same structure. left_size and right_size are fractions or sample
    counts (one may be None: the rest; both None: left_size=0.5). Keras returns datasets
    of its framework; minidl returns the arrays themselves, which fit() takes."""
    if isinstance(dataset, dict):
        keys, parts = list(dataset), [np.asarray(v) for v in dataset.values()]
    elif isinstance(dataset, (list, tuple)):
        keys, parts = None, [np.asarray(v) for v in dataset]
    else:
        keys, parts = None, [np.asarray(dataset)]
    if not parts or any(p.ndim == 0 for p in parts):
        raise ValueError("split_dataset: dataset must be an array or a tuple / list / dict of "
                         "arrays with a sample axis")
    total = len(parts[0])
    if any(len(p) != total for p in parts):
        raise ValueError(f"split_dataset: the arrays have different lengths: "
                         f"{[len(p) for p in parts]}")
    if left_size is None and right_size is None:
        left_size = 0.5
    left = None if left_size is None else _size(left_size, total, "left_size")
    right = None if right_size is None else _size(right_size, total, "right_size")
    if left is None:
        left = total - right
    if right is None:
        right = total - left
    if left + right > total or left == 0 or right == 0:
        raise ValueError(f"split_dataset: left_size={left_size} and right_size={right_size} "
                         f"must leave samples on both sides and add up to at most {total}")
    order = (np.random.default_rng(seed).permutation(total) if shuffle else np.arange(total))
    halves = []
    for index in (order[:left], order[left:left + right]):
        taken = [p[index] for p in parts]
        if keys is not None:
            halves.append(dict(zip(keys, taken)))
        elif isinstance(dataset, (list, tuple)):
            halves.append(type(dataset)(taken) if isinstance(dataset, tuple) else taken)
        else:
            halves.append(taken[0])
    return tuple(halves)


__all__ = ["pack_x_y_sample_weight", "split_dataset", "unpack_x_y_sample_weight"]
