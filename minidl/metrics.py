"""Metrics computed on the backend as running counts (kept on the device until read)."""

import math


class Metric:
    """Counts correct predictions of a batch into a (1,) backend tensor."""

    def __init__(self, name, kind, k=None):
        self.name = name
        self.kind = kind  # "categorical", "binary" or "top_k"
        self.k = k

    def update(self, b, count, pred, targets, accumulate=True):
        if self.kind == "categorical":
            b.categorical_accuracy(count, pred, targets, accumulate)
        elif self.kind == "binary":
            b.binary_accuracy(count, pred, targets, accumulate)
        else:
            b.top_k_accuracy(count, pred, targets, self.k, accumulate)

    def per_sample(self, output_shape):
        """How many counted items one sample contributes: binary accuracy counts elements,
        the others one row per position (an output (H, W, K) has H * W positions)."""
        return math.prod(output_shape if self.kind == "binary" else output_shape[:-1])


def get(identifier, loss, output_shape):
    """Resolve a metric name for a model compiled with `loss` and `output_shape`."""
    if not isinstance(identifier, str):
        raise TypeError(f"metrics: each metric must be a name, got {identifier!r}")
    name = identifier.lower()
    if name in ("accuracy", "acc"):
        if loss.name == "binary_crossentropy" or (loss.name == "mean_squared_error"
                                                  and output_shape[-1] == 1):
            return Metric(identifier, "binary")
        return Metric(identifier, "categorical")
    if name in ("categorical_accuracy", "sparse_categorical_accuracy"):
        return Metric(name, "categorical")
    if name == "binary_accuracy":
        return Metric(name, "binary")
    if name in ("top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy"):
        return Metric(name, "top_k", k=5)
    raise ValueError(f"unknown metric {identifier!r}; known: accuracy, categorical_accuracy, "
                     "sparse_categorical_accuracy, binary_accuracy, top_k_categorical_accuracy, "
                     "sparse_top_k_categorical_accuracy")
