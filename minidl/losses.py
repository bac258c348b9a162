"""Keras losses. A loss validates and converts targets on the host, then runs backend ops.

Cross-entropies fuse with a final softmax (or sigmoid) activation: the model then feeds
the layer's pre-activation (logits) to the loss, which is both faster and numerically
stable, and back-propagates dL/dlogits = (p - t) / N directly.
"""

import numpy as np


class Loss:
    """Base class. Subclasses set `kernel` in configure() to one of the op families below."""

    name = "loss"
    sparse = False  # targets are int32 class indices rather than arrays like the output

    def __init__(self, from_logits=False):
        if not isinstance(from_logits, bool):
            raise TypeError(f"{type(self).__name__}: from_logits must be a bool, got {from_logits!r}")
        self.from_logits = from_logits
        self.kernel = None

    def get_config(self):
        return {"from_logits": self.from_logits}

    def configure(self, output_activation):
        """Choose the kernel for a model whose last layer has `output_activation`.

        Returns True when the model must feed the last layer's pre-activation (fused)."""
        raise NotImplementedError

    # ------------------------------------------------------------ targets
    def target_shape(self, batch, output_shape):
        """Sparse targets hold one class index per position: (batch,) + output_shape[:-1]."""
        return (batch,) + tuple(output_shape[:-1] if self.sparse else output_shape)

    @property
    def target_dtype(self):
        return "int32" if self.sparse else "float32"

    def prepare_targets(self, y, output_shape, argument="y"):
        """Validate targets and return them as a host array of target_dtype/target_shape."""
        y = np.asarray(y)
        if y.dtype == object or not (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
            raise TypeError(f"{argument}: targets for loss {self.name!r} must be numeric, "
                            f"got dtype {y.dtype}")
        if np.iscomplexobj(y):
            raise TypeError(f"{argument}: complex targets (dtype {y.dtype}) are not supported")
        if self.sparse:
            return self._prepare_sparse(y, output_shape, argument)
        want = tuple(output_shape)
        if tuple(y.shape[1:]) != want:
            if want == (1,) and y.ndim == 1:
                y = y.reshape(-1, 1)
            else:
                raise ValueError(f"{argument}: loss {self.name!r} expects targets of shape "
                                 f"(None, {', '.join(map(str, want))}) like the model output, "
                                 f"got {tuple(y.shape)}")
        y = y.astype(np.float32)
        if not np.all(np.isfinite(y)):
            raise ValueError(f"{argument}: targets contain NaN or infinite values")
        return y

    def _prepare_sparse(self, y, output_shape, argument):
        positions = tuple(output_shape[:-1])   # one label per position, e.g. (H, W)
        if tuple(y.shape[1:]) == positions + (1,):
            y = y[..., 0]
        if y.ndim == 0 or tuple(y.shape[1:]) != positions:
            want = ", ".join(["N"] + [str(d) for d in positions])
            raise ValueError(f"{argument}: loss {self.name!r} expects integer class labels of "
                             f"shape ({want}) or ({want}, 1), got shape {tuple(y.shape)}")
        classes = output_shape[-1]
        if y.size:
            if np.issubdtype(y.dtype, np.floating) and not np.all(np.floor(y) == y):
                raise ValueError(f"{argument}: class labels must be whole numbers")
            low, high = y.min(), y.max()
            if low < 0 or high >= classes:
                raise ValueError(f"{argument}: class labels must be in [0, {classes - 1}] for a "
                                 f"model with {classes} outputs, got labels from {low} to {high}")
        return y.astype(np.int32)

    # ------------------------------------------------------------ compute
    def forward(self, b, loss, pred, targets, probs):
        """loss (N,) per-sample losses of pred (output or logits); probs receives the
        probabilities for the fused kernels."""
        if self.kernel == "softmax_ce":
            b.softmax_cross_entropy_forward(probs, loss, pred, targets)
        elif self.kernel == "sigmoid_ce":
            b.sigmoid_cross_entropy_forward(probs, loss, pred, targets)
        elif self.kernel in ("ce", "bce"):
            b.cross_entropy_forward(loss, pred, targets, self.kernel == "bce")
        else:
            b.mean_squared_error_forward(loss, pred, targets)

    def backward(self, b, dpred, pred, targets, probs, scale):
        if self.kernel == "softmax_ce":
            b.softmax_cross_entropy_backward(dpred, probs, targets, scale)
        elif self.kernel == "sigmoid_ce":
            b.sigmoid_cross_entropy_backward(dpred, probs, targets, scale)
        elif self.kernel in ("ce", "bce"):
            b.cross_entropy_backward(dpred, pred, targets, self.kernel == "bce", scale)
        else:
            b.mean_squared_error_backward(dpred, pred, targets, scale)

    @property
    def produces_probs(self):
        return self.kernel in ("softmax_ce", "sigmoid_ce")


class CategoricalCrossentropy(Loss):
    name = "categorical_crossentropy"

    def configure(self, output_activation):
        if self.from_logits:
            self.kernel = "softmax_ce"
            return False
        self.kernel = "softmax_ce" if output_activation == "softmax" else "ce"
        return output_activation == "softmax"


class SparseCategoricalCrossentropy(CategoricalCrossentropy):
    name = "sparse_categorical_crossentropy"
    sparse = True


class BinaryCrossentropy(Loss):
    name = "binary_crossentropy"

    def configure(self, output_activation):
        if self.from_logits:
            self.kernel = "sigmoid_ce"
            return False
        self.kernel = "sigmoid_ce" if output_activation == "sigmoid" else "bce"
        return output_activation == "sigmoid"


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def __init__(self):
        super().__init__(from_logits=False)

    def get_config(self):
        return {}

    def configure(self, output_activation):
        self.kernel = "mse"
        return False


_BY_NAME = {
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
}
_CLASSES = {cls.__name__: cls for cls in set(_BY_NAME.values())}


def get(identifier):
    """A Loss from a name, an instance, or a {"class_name", "config"} dict."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _CLASSES:
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    raise ValueError(f"unknown loss {identifier!r}; known: {sorted(_BY_NAME)}")


def serialize(loss):
    return {"class_name": type(loss).__name__, "config": loss.get_config()}
