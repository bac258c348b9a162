"""Checks of callback constructor arguments: each error names the callback and the argument."""

import math
import os


def float_arg(value, argument, owner):
    """float(value), or a TypeError/ValueError that names the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner}: {argument} must be a number, got {value!r}")
    if math.isnan(value):
        raise ValueError(f"{owner}: {argument} must not be NaN")
    return float(value)


def count_arg(value, argument, owner):
    """An int >= 0 (a number of epochs), or a ValueError that names the argument."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{owner}: {argument} must be an int >= 0, got {value!r}")
    return value


def path_arg(value, argument, owner):
    """os.fspath(value), or a TypeError that names the argument."""
    try:
        path = os.fspath(value)
    except TypeError:
        raise TypeError(f"{owner}: {argument} must be a file path, got {value!r}") from None
    if not isinstance(path, str) or not path:
        raise TypeError(f"{owner}: {argument} must be a non-empty str path, got {value!r}")
    return path
