"""Losses by name: get (a name, an instance, a class, a function or a config dict), serialize
and deserialize, as Keras's losses.get / serialize / deserialize."""

from ..custom_objects import custom_object_scope, get_registered_name, get_registered_object
from ..naming import snake_case
from . import composed, functions
from .ctc import CTC
from .ctc import FUNCTIONS as CTC_FUNCTIONS
from .base import Loss, LossFunctionWrapper
from .crossentropy import BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy
from .row_losses import (CategoricalHinge, CosineSimilarity, Hinge, Huber, KLDivergence, LogCosh,
                         MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
                         MeanSquaredLogarithmicError, Poisson, SquaredHinge)

_BY_NAME = {
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError, "msle": MeanSquaredLogarithmicError,
    "huber": Huber, "huber_loss": Huber,
    "log_cosh": LogCosh, "logcosh": LogCosh,
    "poisson": Poisson,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "kullback_leibler_divergence": KLDivergence,
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "cosine_similarity": CosineSimilarity,
}
_BY_NAME.update({snake_case(name): cls for name, cls in composed.CLASSES.items()})
_BY_NAME["ctc"] = CTC
_CLASSES = {cls.__name__: cls for cls in set(_BY_NAME.values())}

# every loss function by name (what deserialize gives for a name, as Keras)
FUNCTIONS = dict(functions.FUNCTIONS, **composed.FUNCTIONS, **CTC_FUNCTIONS)

# the functions compile(loss=function) runs as their loss class (Keras 2's built-in functions),
# so that fit fuses a final softmax / sigmoid into them
_COMPILED_AS_CLASS = {fn.__name__: fn for fn in (
    functions.categorical_crossentropy, functions.sparse_categorical_crossentropy, functions.binary_crossentropy,
    functions.mean_squared_error, functions.mean_absolute_error, functions.hinge, functions.huber)}




def get(identifier):
    """A Loss from a name, an instance, a Loss class, a function of (y_true, y_pred), or a
    {"class_name", "config"} dict. Names and classes of your own are found through
    custom_objects (a custom_object_scope or @register_keras_serializable)."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _CLASSES:
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    if isinstance(identifier, dict) and identifier.get("class_name") == "function":
        return get(_registered(identifier.get("config", {}).get("name")))
    if isinstance(identifier, dict) and isinstance(identifier.get("class_name"), str):
        cls = _registered(identifier["class_name"])
        if isinstance(cls, type) and issubclass(cls, Loss):
            return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        return get(_registered(identifier))
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        # the Keras loss functions themselves run as the fused built-in kernels
        builtin = getattr(identifier, "__name__", None)
        if _COMPILED_AS_CLASS.get(builtin) is identifier:
            return _BY_NAME[builtin]()
        return LossFunctionWrapper(identifier)
    raise ValueError(f"unknown loss {identifier!r}; known: {sorted(_BY_NAME)}, a function of "
                     "(y_true, y_pred) or a losses.Loss subclass")


def _registered(name):
    found = get_registered_object(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"unknown loss {name!r}: a loss of your own must be passed in "
                         "custom_objects (or registered with @register_keras_serializable); "
                         f"built-in: {sorted(_BY_NAME)}")
    return found


def deserialize(config, custom_objects=None):
    """Keras's losses.deserialize: a name of a loss function gives the function (as in Keras),
    a class name or a {"class_name", "config"} dict a Loss instance."""
    if isinstance(config, str) and config in FUNCTIONS:
        return FUNCTIONS[config]
    if isinstance(config, dict) and config.get("class_name") == "function" and config.get("config") in FUNCTIONS:
        return FUNCTIONS[config["config"]]
    if custom_objects:
        with custom_object_scope(custom_objects):
            return get(config)
    return get(config)


def serialize(loss):
    """How a model file names its loss: a built-in class, a class of your own, or a function
    by its name (never its code: loading needs it in custom_objects)."""
    if isinstance(loss, LossFunctionWrapper):
        name = getattr(loss.fn, "__name__", "")
        if name in ("", "<lambda>") or getattr(loss.fn, "__qualname__", name) != name:
            raise ValueError(f"loss {loss.fn!r} cannot be saved: a loss function is saved by its "
                             "name only, so it must be a named module-level function")
        return {"class_name": "function", "config": {"name": name}}
    return {"class_name": get_registered_name(loss), "config": loss.get_config()}
