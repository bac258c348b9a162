"""Data sets in the layout Keras's keras.datasets returns them (numpy arrays, channels-last)."""

from . import cifar10, mnist

__all__ = ["cifar10", "mnist"]
