"""Training recipes built from minidl's public API: Airbench94 (CIFAR-10 to 94% in about
10 epochs) and its data pipeline, AlternatingFlipIterator."""

from .airbench import CIFAR10_MEAN, CIFAR10_STD, Airbench94
from .data import AlternatingFlipIterator

__all__ = ["Airbench94", "AlternatingFlipIterator", "CIFAR10_MEAN", "CIFAR10_STD"]
