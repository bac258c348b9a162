"""Metrics of compile(metrics=[...]).

Names of the built-in accuracies run as fused backend counts (kept on the device until read).
A function of (y_true, y_pred), a keras-style Metric instance or class (metric_classes.py), or
the name of one registered as a custom object runs through minidl.ops instead.
"""

import math

from . import autodiff, losses, metric_confusion, metric_wrappers
from .autodiff import Tensor
from .custom_objects import get_registered_name, get_registered_object
from .metric_classes import (AUC, CLASSES, BinaryAccuracy, CategoricalAccuracy,
                             CosineSimilarity, Mean, MeanMetricWrapper, Metric, Precision, Recall,
                             SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy,
                             TopKCategoricalAccuracy, binary_accuracy, categorical_accuracy,
                             cosine_similarity, sparse_categorical_accuracy,
                             sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from .metric_confusion import (BinaryIoU, F1Score, FalseNegatives, FalsePositives, FBetaScore, IoU, MeanIoU,
                               OneHotIoU, OneHotMeanIoU, PrecisionAtRecall, RecallAtPrecision,
                               SensitivityAtSpecificity, SpecificityAtSensitivity, TrueNegatives, TruePositives)
from .metric_wrappers import (Accuracy, BinaryCrossentropy, CategoricalCrossentropy, CategoricalHinge,
                              ConcordanceCorrelation, Hinge, KLDivergence, LogCoshError, MeanAbsoluteError,
                              MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError,
                              PearsonCorrelation, Poisson, R2Score, RootMeanSquaredError,
                              SparseCategoricalCrossentropy, SquaredHinge, Sum, concordance_correlation,
                              pearson_correlation)
from .naming import snake_case

# Keras's metric functions (keras.metrics.mean_squared_error is keras.losses.mean_squared_error)
binary_crossentropy = losses.binary_crossentropy
binary_focal_crossentropy = losses.binary_focal_crossentropy
categorical_crossentropy = losses.categorical_crossentropy
categorical_focal_crossentropy = losses.categorical_focal_crossentropy
sparse_categorical_crossentropy = losses.sparse_categorical_crossentropy
mean_squared_error = losses.mean_squared_error
mean_absolute_error = losses.mean_absolute_error
mean_absolute_percentage_error = losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = losses.mean_squared_logarithmic_error
log_cosh = losses.log_cosh
huber = losses.huber
kl_divergence = losses.kl_divergence
poisson = losses.poisson
hinge = losses.hinge
squared_hinge = losses.squared_hinge
categorical_hinge = losses.categorical_hinge

FUNCTIONS = {f.__name__: f for f in (
    binary_crossentropy, binary_focal_crossentropy, categorical_crossentropy, categorical_focal_crossentropy,
    sparse_categorical_crossentropy, mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_logarithmic_error, log_cosh, huber, kl_divergence, poisson, hinge, squared_hinge,
    categorical_hinge, pearson_correlation, concordance_correlation, binary_accuracy, categorical_accuracy,
    sparse_categorical_accuracy, top_k_categorical_accuracy, sparse_top_k_categorical_accuracy,
    cosine_similarity)}

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


def saved_name(identifier):
    """How a model file lists a metric given to compile: a name stays; a built-in Metric is
    its serialize() dict (its arguments and name kept); a Metric or a function of your own is
    listed by its name (loading finds it in custom_objects)."""
    if isinstance(identifier, str):
        return identifier
    if isinstance(identifier, Metric):
        if ALL_CLASSES.get(type(identifier).__name__) is type(identifier):
            return serialize(identifier)
        return identifier.name
    return getattr(identifier, "__name__", str(identifier))


# Keras's look-up table: every class by its name and its snake_case name, and the short names
ALL_CLASSES = dict(CLASSES, **metric_wrappers.CLASSES, **metric_confusion.CLASSES)
_BY_NAME = dict(ALL_CLASSES, **{snake_case(name): cls for name, cls in ALL_CLASSES.items()})
_BY_NAME.update(bce=BinaryCrossentropy, BCE=BinaryCrossentropy, mse=MeanSquaredError, MSE=MeanSquaredError,
                mae=MeanAbsoluteError, MAE=MeanAbsoluteError, mape=MeanAbsolutePercentageError,
                MAPE=MeanAbsolutePercentageError, msle=MeanSquaredLogarithmicError, MSLE=MeanSquaredLogarithmicError)


def get(identifier):
    """Keras's metrics.get: a Metric instance from a name ("mse", "AUC", "mean_absolute_error",
    ...) or a serialize() dict; a function or a Metric passes through; None is None."""
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def serialize(metric):
    """{"module", "class_name", "config", "registered_name"} of a Metric, as Keras writes it; a
    function is named by its name."""
    if isinstance(metric, Metric):
        builtin = ALL_CLASSES.get(type(metric).__name__) is type(metric)
        return {"module": "keras.metrics" if builtin else None, "class_name": type(metric).__name__,
                "config": metric.get_config(), "registered_name": None if builtin else get_registered_name(metric)}
    if callable(metric) and getattr(metric, "__name__", "<lambda>") != "<lambda>":
        return {"module": "builtins", "class_name": "function", "config": metric.__name__,
                "registered_name": "function"}
    raise ValueError(f"metrics.serialize: cannot serialize {metric!r} (a Metric or a named function)")


def deserialize(config, custom_objects=None):
    """The metric a name or a serialize() dict stands for: a new Metric instance, or one of the
    metric functions; classes of your own come from custom_objects or the registry."""
    if isinstance(config, str):
        found = (_BY_NAME.get(config) or FUNCTIONS.get(config)
                 or get_registered_object(config, custom_objects))
    elif isinstance(config, dict) and "class_name" in config:
        if config["class_name"] == "function":
            found = FUNCTIONS.get(config.get("config")) or get_registered_object(config.get("config"), custom_objects)
            if found is not None:
                return found
        else:
            cls = ALL_CLASSES.get(config["class_name"]) or get_registered_object(
                config.get("registered_name") or config["class_name"], custom_objects)
            if isinstance(cls, type) and issubclass(cls, Metric):
                return cls.from_config(dict(config.get("config") or {}))
        found = None
    else:
        found = None
    if isinstance(found, type) and issubclass(found, Metric):
        return found()
    if found is not None and callable(found):
        return found
    raise ValueError(f"Could not interpret metric identifier: {config!r}")


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


__all__ = sorted(set(ALL_CLASSES) | set(FUNCTIONS) | {"MeanMetricWrapper", "Metric", "get", "serialize",
                                                       "deserialize"})
