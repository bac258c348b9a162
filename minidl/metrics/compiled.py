"""The metrics of compile(metrics=[...]) inside a model.

Names of the built-in accuracies run as fused backend counts (kept on the device until read).
A function of (y_true, y_pred), a keras-style Metric instance or class (classes.py), or
the name of one registered as a custom object runs through minidl.ops instead.
"""

import math

from .. import autodiff
from ..autodiff import Tensor
from ..custom_objects import get_registered_object
from .classes import MeanMetricWrapper, Metric
from .lookup import _BY_NAME, FUNCTIONS, deserialize


# the names compile counts with the fused accuracy kernels
_COUNTED = ("accuracy", "acc", "categorical_accuracy", "sparse_categorical_accuracy", "binary_accuracy",
            "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy")


class CountingMetric:
    """Counts correct predictions of a batch into a (1,) backend tensor."""

    def __init__(self, name, kind, k=None):
        self.name = name
        self.kind = kind  # "categorical", "binary" or "top_k"
        self.k = k
        self.weighted = False   # one of compile's weighted_metrics (see update)

    def update(self, b, count, pred, targets, accumulate=True, weights=None):
        """Count the hits of a batch; with weights (a backend tensor, one weight per row, per
        element for binary accuracy: weights_shape) the sum of the hits' weights, which the
        model divides by the sum of the weights (Keras's weighted_metrics)."""
        if self.kind == "categorical":
            b.categorical_accuracy(count, pred, targets, accumulate, weights)
        elif self.kind == "binary":
            b.binary_accuracy(count, pred, targets, accumulate, weights)
        else:
            b.top_k_accuracy(count, pred, targets, self.k, accumulate, weights)

    def weights_per_row(self, classes):
        """How many weights one row of predictions takes: one per element for binary
        accuracy, else one."""
        return classes if self.kind == "binary" else 1

    def per_sample(self, output_shape):
        """How many counted items one sample contributes: binary accuracy counts elements,
        the others one row per position (an output (H, W, K) has H * W positions)."""
        return math.prod(output_shape if self.kind == "binary" else output_shape[:-1])

    def value(self, b, count, seen, output_shape):
        """The running value since the last reset (reads the device); seen is the number of
        samples, or the sum of their weights for a weighted metric (0 when it is 0, as
        Keras)."""
        items = seen * self.per_sample(output_shape)
        return float(b.to_numpy(count)[0]) / items if items else 0.0

    def reset(self):
        """The running count lives in the model's counter tensor: nothing to do here."""


class StatefulMetric:
    """A keras-style Metric in a model: update_state every step, result() when read."""

    def __init__(self, metric):
        self.metric = metric
        self.name = metric.name
        self.weighted = False   # one of compile's weighted_metrics: gets the sample weights

    def update(self, b, count, pred, targets, accumulate=True, weights=None):
        self.metric.attach(b)
        with autodiff.on_backend(b), autodiff.recording(None):
            if weights is None:
                self.metric.update_state(Tensor(targets, b), Tensor(pred, b))
            else:   # one weight per row of pred
                self.metric.update_state(Tensor(targets, b), Tensor(pred, b),
                                         sample_weight=Tensor(weights, b))

    @staticmethod
    def weights_per_row(classes):
        return 1

    def value(self, b, count, seen, output_shape):
        result = self.metric.result()
        return float(result.numpy().reshape(-1)[0]) if hasattr(result, "numpy") else float(result)

    def reset(self):
        self.metric.reset_state()


def for_model(identifier, loss, output_shape):
    """Resolve a metric of compile(metrics=[...]) for a model compiled with `loss` and
    `output_shape`. A metric named by a string logs under that string, as in Keras."""
    if isinstance(identifier, Metric):
        return StatefulMetric(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return StatefulMetric(identifier())
    if isinstance(identifier, dict):     # a built-in Metric as a model file lists it
        return StatefulMetric(deserialize(identifier))
    if isinstance(identifier, str) and identifier not in _COUNTED and identifier.lower() in _COUNTED:
        identifier = identifier.lower()
    if callable(identifier) and not isinstance(identifier, str):
        return StatefulMetric(MeanMetricWrapper(identifier))
    if not isinstance(identifier, str):
        raise TypeError(f"metrics: each metric must be a name, a function of (y_true, y_pred) "
                        f"or a Metric, got {identifier!r}")
    name = identifier
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
    found = get_registered_object(identifier, module_objects=dict(_BY_NAME, **FUNCTIONS))
    if found is not None:
        resolved = for_model(found, loss, output_shape)
        resolved.name = identifier
        return resolved
    raise ValueError(f"unknown metric {identifier!r}; known: accuracy, categorical_accuracy, "
                     "sparse_categorical_accuracy, binary_accuracy, top_k_categorical_accuracy, "
                     f"sparse_top_k_categorical_accuracy, {', '.join(sorted(_BY_NAME))}, the functions "
                     f"{', '.join(sorted(FUNCTIONS))}, or a function / Metric of your own "
                     "(in custom_objects when loading)")
