"""Metrics by name: get, serialize, deserialize and the name a model file lists a metric
under, as Keras's metrics.get / serialize / deserialize; Keras's metric functions (the loss
functions and the accuracies)."""

from .. import losses
from ..custom_objects import get_registered_name, get_registered_object
from ..naming import snake_case
from . import classes, confusion, function_means
from .classes import Metric
from .function_means import (BinaryCrossentropy, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
                             MeanSquaredLogarithmicError)

# Keras's metric functions by name (keras.metrics.mean_squared_error is keras.losses.mean_squared_error)
FUNCTIONS = {f.__name__: f for f in (
    losses.binary_crossentropy, losses.binary_focal_crossentropy, losses.categorical_crossentropy,
    losses.categorical_focal_crossentropy, losses.sparse_categorical_crossentropy, losses.mean_squared_error,
    losses.mean_absolute_error, losses.mean_absolute_percentage_error, losses.mean_squared_logarithmic_error,
    losses.log_cosh, losses.huber, losses.kl_divergence, losses.poisson, losses.hinge, losses.squared_hinge,
    losses.categorical_hinge, function_means.pearson_correlation, function_means.concordance_correlation,
    classes.binary_accuracy, classes.categorical_accuracy, classes.sparse_categorical_accuracy,
    classes.top_k_categorical_accuracy, classes.sparse_top_k_categorical_accuracy, classes.cosine_similarity)}

# Keras's look-up table: every class by its name and its snake_case name, and the short names
ALL_CLASSES = dict(classes.CLASSES, **function_means.CLASSES, **confusion.CLASSES)
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
