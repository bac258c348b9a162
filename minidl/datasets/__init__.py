"""Data sets in the layout Keras's keras.datasets returns them (numpy arrays, channels-last)."""

from . import (boston_housing, california_housing, cifar10, cifar100, fashion_mnist, imdb, mnist,
               reuters)

__all__ = ["boston_housing", "california_housing", "cifar10", "cifar100", "fashion_mnist", "imdb",
           "mnist", "reuters"]
