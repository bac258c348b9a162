"""keras.saving.serialize_keras_object: any minidl object with a config (layers, models,
optimizers, losses, metrics, schedules, initializers, regularizers, constraints, dtype
policies) as Keras 3's config dict (deserialization.py reads it back).

    {"module": "keras.layers", "class_name": "Dense", "config": {...},
     "registered_name": None, "build_config": {"input_shape": (None, 2)}}

A class of your own is written under its registered name ("package>Name") and found again
through custom_objects, a custom_object_scope or @register_keras_serializable; a function
by its (registered) name.
"""

import numpy as np

from . import (constraints, initializers, losses, metrics, optimizers, regularizers,
               schedules)
from .custom_objects import get_registered_name
from .layers.base import Layer
from .mixed_precision import DTypePolicy

# Keras's module for each kind of object (deserialization.py holds their built-in classes)
KINDS = (("keras.layers", Layer),
         ("keras.optimizers.schedules", schedules.LearningRateSchedule),
         ("keras.optimizers", optimizers.Optimizer),
         ("keras.losses", losses.Loss),
         ("keras.metrics", metrics.Metric),
         ("keras.initializers", initializers.Initializer),
         ("keras.regularizers", regularizers.Regularizer),
         ("keras.constraints", constraints.Constraint),
         ("keras", DTypePolicy))


def _is_model(obj):
    return hasattr(obj, "graph") and hasattr(obj, "compile")


def _module_of(obj):
    if _is_model(obj):
        return "keras"
    for module, base in KINDS:
        if isinstance(obj, base):
            return module
    return type(obj).__module__


def serialize_keras_object(obj):
    """obj as Keras 3's config structure: None, numbers, strings, lists, tuples and dicts
    as themselves (their items serialized), numpy arrays as {"class_name": "__numpy__"},
    functions by name, objects with get_config as {"module", "class_name", "config",
    "registered_name"} (and "build_config" for a built layer)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.ndarray):
        return {"class_name": "__numpy__", "config": {"value": obj.tolist(),
                                                      "dtype": str(obj.dtype)}}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (list, tuple)):
        items = [serialize_keras_object(x) for x in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if isinstance(obj, type) or not hasattr(obj, "get_config"):
        if callable(obj):
            name = get_registered_name(obj)
            if name in ("", "<lambda>") or getattr(obj, "__qualname__", name) not in (
                    name, obj.__name__):
                raise ValueError(f"serialize_keras_object: {obj!r} cannot be serialized: a "
                                 "function is saved by its name, so it must be a named "
                                 "module-level function")
            return {"module": "builtins", "class_name": "function", "config": name,
                    "registered_name": "function"}
        raise TypeError(f"serialize_keras_object: cannot serialize {type(obj).__name__} "
                        f"{obj!r:.100} (it has no get_config)")
    class_name = get_registered_name(obj)
    registered = class_name if ">" in class_name else None
    config = {"module": _module_of(obj) if registered is None else type(obj).__module__,
              "class_name": type(obj).__name__ if registered else class_name,
              "config": serialize_keras_object(obj.get_config()),
              "registered_name": registered}
    if isinstance(obj, Layer) and obj.built and obj.input_shape is not None \
            and not obj.multiple_inputs:
        config["build_config"] = {"input_shape": (None,) + tuple(obj.input_shape)}
    return config


__all__ = ["serialize_keras_object"]
