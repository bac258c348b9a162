"""Weight and activity regularizers with Keras 3's names, defaults and penalties.

A regularizer adds a penalty to the loss the model minimizes and reports (as Keras adds a
layer's regularization losses): the model asks the backend for the penalty of each
regularized weight (l1_l2_penalty, added to the logged loss on the device) and adds its
gradient to the weight's (l1_l2_gradient) before the optimizer step. Calling a regularizer on
a numpy array gives the penalty on the host, as Keras's regularizer(x) does.
"""

import numpy as np

from .arguments import number
from .config_objects import ConfigObject, object_functions


class Regularizer(ConfigObject):
    """Base class. Subclasses implement __call__(x) (numpy), penalty() and add_gradient()
    (backend ops) and get_config()."""

    def __call__(self, x):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(x)")

    def penalty(self, backend, out, w, scale=1.0):
        """out (1,) += scale * the penalty of tensor w, on the backend."""
        raise NotImplementedError(f"{type(self).__name__} must implement penalty()")

    def add_gradient(self, backend, g, w, scale=1.0):
        """g += scale * d penalty / d w, on the backend."""
        raise NotImplementedError(f"{type(self).__name__} must implement add_gradient()")



def _strength(value, argument, owner):
    return number(value, argument, owner, low=0.0)


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x^2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _strength(l1, "l1", type(self).__name__)
        self.l2 = _strength(l2, "l2", type(self).__name__)

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        return float(self.l1 * np.abs(x).sum() + self.l2 * np.square(x).sum())

    def penalty(self, backend, out, w, scale=1.0):
        backend.l1_l2_penalty(out, w, self.l1 * scale, self.l2 * scale, accumulate=True)

    def add_gradient(self, backend, g, w, scale=1.0):
        backend.l1_l2_gradient(g, w, self.l1 * scale, self.l2 * scale)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """l1 * sum(|x|)."""

    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    """l2 * sum(x^2)."""

    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (mode "rows") or columns ("columns") of a 2-D kernel towards mutual
    orthogonality: factor / 2 * the mean over pairs of |cosine| of the normalized vectors."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _strength(factor, "factor", "OrthogonalRegularizer")
        if mode not in ("rows", "columns"):
            raise ValueError(f"OrthogonalRegularizer: invalid value for argument `mode`. Expected one of "
                             f"{{'rows', 'columns'}}. Received: mode={mode!r}")
        self.mode = mode

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        a = x if self.mode == "rows" else x.T
        n = a / np.sqrt(np.maximum(np.square(a).sum(axis=1, keepdims=True), 1e-12))
        product = n @ n.T
        size = a.shape[0]
        return float(self.factor * 0.5 * np.abs(product * (1 - np.eye(size))).sum() / (size * (size - 1) / 2))

    def penalty(self, backend, out, w, scale=1.0):
        backend.orthogonal_penalty(out, w, self.factor * scale, self.mode, accumulate=True)

    def add_gradient(self, backend, g, w, scale=1.0):
        backend.orthogonal_gradient(g, w, self.factor * scale, self.mode)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


# Keras 3 exports the classes under their lower-case names too: regularizers.l2(1e-4)
l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer

_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}
_CLASSES = {cls.__name__: cls for cls in (L1, L2, L1L2, OrthogonalRegularizer)}


serialize, deserialize, get = object_functions(Regularizer, _CLASSES, _BY_NAME, "regularizers")


__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2",
           "orthogonal_regularizer", "serialize", "deserialize", "get"]
