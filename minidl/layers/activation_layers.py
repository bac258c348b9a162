"""Activation layers with arguments of their own: ELU, Softmax and PReLU (Keras 3)."""

from ..arguments import number
from .base import Layer, format_shape
from .core import Activation


class ELU(Activation):
    """x for x > 0, alpha * (e^x - 1) otherwise (Keras ELU, alpha=1.0)."""

    def __init__(self, alpha=1.0, name=None, trainable=True):
        super().__init__("elu", name=name, trainable=trainable)
        self.alpha = number(alpha, "alpha", self.describe())

    def get_config(self):
        return {"alpha": self.alpha, "name": self.name, "trainable": self.trainable}


class Softmax(Activation):
    """Softmax along `axis` (Keras Softmax, axis=-1). The backend's softmax works on the last
    axis, so axis must name it: -1, or its index counting the batch axis as 0."""

    def __init__(self, axis=-1, name=None, trainable=True):
        super().__init__("softmax", name=name, trainable=trainable)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"{self.describe()}: axis must be an int, got {axis!r}")
        self.axis = axis

    def get_config(self):
        return {"axis": self.axis, "name": self.name, "trainable": self.trainable}

    def build(self, input_shape):
        rank = len(input_shape) + 1
        if self.axis not in (-1, rank - 1):
            raise ValueError(f"{self.describe()}: only the last axis (-1 or {rank - 1}) is supported "
                             f"for inputs of shape {format_shape(input_shape)}, got axis={self.axis}")


__all__ = ["ELU", "Softmax"]
