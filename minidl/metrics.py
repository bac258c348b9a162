"""Metrics of compile(metrics=[...]).

Names of the built-in accuracies run as fused backend counts (kept on the device until read).
A function of (y_true, y_pred), a keras-style Metric instance or class (metric_classes.py), or
the name of one registered as a custom object runs through minidl.ops instead.
"""

import math

from . import autodiff
from .autodiff import Tensor
from .custom_objects import get_registered_object
from .metric_classes import (AUC, CLASSES, BinaryAccuracy, CategoricalAccuracy, Mean,
                             MeanMetricWrapper, Metric, Precision, Recall,
                             SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy,
                             TopKCategoricalAccuracy, binary_accuracy, categorical_accuracy,
                             sparse_categorical_accuracy, sparse_top_k_categorical_accuracy,
                             top_k_categorical_accuracy)


class CountingMetric:
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

    def value(self, b, count, seen, output_shape):
        """The running value since the last reset (reads the device)."""
        return float(b.to_numpy(count)[0]) / (seen * self.per_sample(output_shape))

    def reset(self):
        """The running count lives in the model's counter tensor: nothing to do here."""


class StatefulMetric:
    """A keras-style Metric in a model: update_state every step, result() when read."""

    def __init__(self, metric):
        self.metric = metric
        self.name = metric.name

    def update(self, b, count, pred, targets, accumulate=True):
        self.metric.attach(b)
        with autodiff.on_backend(b), autodiff.recording(None):
            self.metric.update_state(Tensor(targets, b), Tensor(pred, b))

    def value(self, b, count, seen, output_shape):
        result = self.metric.result()
        return float(result.numpy().reshape(-1)[0]) if hasattr(result, "numpy") else float(result)

    def reset(self):
        self.metric.reset_state()


def saved_name(identifier):
    """How a model file lists a metric given to compile: a name stays; a Metric or a function
    of your own is listed by its name (loading finds it in custom_objects)."""
    if isinstance(identifier, str):
        return identifier
    if isinstance(identifier, Metric):
        return identifier.name
    return getattr(identifier, "__name__", str(identifier))


# the class metrics by the names their instances carry (how a saved model lists them)
_BY_METRIC_NAME = {"auc": AUC, "precision": Precision, "recall": Recall, "mean": Mean}


def get(identifier, loss, output_shape):
    """Resolve a metric for a model compiled with `loss` and `output_shape`."""
    if isinstance(identifier, Metric):
        return StatefulMetric(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return StatefulMetric(identifier())
    if callable(identifier) and not isinstance(identifier, str):
        return StatefulMetric(MeanMetricWrapper(identifier))
    if not isinstance(identifier, str):
        raise TypeError(f"metrics: each metric must be a name, a function of (y_true, y_pred) "
                        f"or a Metric, got {identifier!r}")
    name = identifier.lower()
    if name in ("accuracy", "acc"):
        if loss.name == "binary_crossentropy" or (loss.name == "mean_squared_error"
                                                  and output_shape[-1] == 1):
            return CountingMetric(identifier, "binary")
        return CountingMetric(identifier, "categorical")
    if name in ("categorical_accuracy", "sparse_categorical_accuracy"):
        return CountingMetric(name, "categorical")
    if name == "binary_accuracy":
        return CountingMetric(name, "binary")
    if name in ("top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy"):
        return CountingMetric(name, "top_k", k=5)
    found = get_registered_object(identifier, module_objects=dict(CLASSES, **_BY_METRIC_NAME))
    if found is not None:
        return get(found, loss, output_shape)
    raise ValueError(f"unknown metric {identifier!r}; known: accuracy, categorical_accuracy, "
                     "sparse_categorical_accuracy, binary_accuracy, top_k_categorical_accuracy, "
                     "sparse_top_k_categorical_accuracy, the classes "
                     f"{', '.join(sorted(CLASSES))}, or a function / Metric of your own "
                     "(in custom_objects when loading)")


__all__ = ["AUC", "BinaryAccuracy", "CategoricalAccuracy", "Mean", "MeanMetricWrapper", "Metric",
           "Precision", "Recall", "SparseCategoricalAccuracy", "SparseTopKCategoricalAccuracy",
           "TopKCategoricalAccuracy", "binary_accuracy", "categorical_accuracy", "get",
           "sparse_categorical_accuracy", "sparse_top_k_categorical_accuracy",
           "top_k_categorical_accuracy"]
