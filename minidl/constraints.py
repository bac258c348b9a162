"""Weight constraints with Keras 3's names, defaults and formulas, applied after every
optimizer step on the backend (norm_constraint; NonNeg is the relu op in place). Calling a
constraint on a numpy array gives the constrained array on the host, as Keras's constraint(w).
"""

import numpy as np

from .arguments import number
from .config_objects import ConfigObject, object_functions

EPSILON = 1e-7


class Constraint(ConfigObject):
    """Base class: __call__(w) on numpy, apply(backend, w) in place on a backend tensor."""

    def __call__(self, w):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(w)")

    def apply(self, backend, w):
        raise NotImplementedError(f"{type(self).__name__} must implement apply(backend, w)")



def _axis(axis, owner):
    if isinstance(axis, bool) or not (isinstance(axis, int) or (
            isinstance(axis, (list, tuple)) and axis and all(isinstance(a, int) and not isinstance(a, bool)
                                                             for a in axis))):
        raise TypeError(f"{owner}: axis must be an int or a list of ints, got {axis!r}")
    return axis if isinstance(axis, int) else list(axis)


class MinMaxNorm(Constraint):
    """Norms over `axis` moved towards [min_value, max_value]: w * desired / (eps + norm),
    desired = rate * clip(norm, min_value, max_value) + (1 - rate) * norm."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        owner = type(self).__name__
        self.min_value = number(min_value, "min_value", owner, low=0.0)
        self.max_value = number(max_value, "max_value", owner, low=0.0)
        if self.max_value < self.min_value:
            raise ValueError(f"{owner}: max_value={max_value} is below min_value={min_value}")
        self.rate = number(rate, "rate", owner, low=0.0, high=1.0, high_inclusive=True)
        self.axis = _axis(axis, owner)

    def _limits(self):
        return self.min_value, self.max_value, self.rate

    def __call__(self, w):
        w = np.asarray(w, dtype=np.float64)
        low, high, rate = self._limits()
        axes = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        norms = np.sqrt(np.square(w).sum(axis=axes, keepdims=True))
        return w * (rate * np.clip(norms, low, high) + (1 - rate) * norms) / (EPSILON + norms)

    def apply(self, backend, w):
        low, high, rate = self._limits()
        backend.norm_constraint(w, self.axis, low, high, rate)

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class MaxNorm(MinMaxNorm):
    """Norms over `axis` above max_value are scaled down to it."""

    def __init__(self, max_value=2.0, axis=0):
        super().__init__(0.0, max_value, 1.0, axis)

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class UnitNorm(MinMaxNorm):
    """Every vector over `axis` scaled to norm 1: w / (eps + norm)."""

    def __init__(self, axis=0):
        super().__init__(1.0, 1.0, 1.0, axis)

    def get_config(self):
        return {"axis": self.axis}


class NonNeg(Constraint):
    """Negative weights become 0."""

    def __call__(self, w):
        w = np.asarray(w, dtype=np.float64)
        return w * (w >= 0)

    def apply(self, backend, w):
        backend.activation_forward(w, w, "relu")


# Keras 3's lower-case exports
max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
_BY_NAME = {"max_norm": MaxNorm, "min_max_norm": MinMaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm,
            "maxnorm": MaxNorm, "minmaxnorm": MinMaxNorm, "nonneg": NonNeg, "unitnorm": UnitNorm}
_CLASSES = {cls.__name__: cls for cls in (MaxNorm, MinMaxNorm, NonNeg, UnitNorm)}


serialize, deserialize, get = object_functions(Constraint, _CLASSES, _BY_NAME, "constraints")


__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm", "min_max_norm", "non_neg",
           "unit_norm", "serialize", "deserialize", "get"]
