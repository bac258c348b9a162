"""keras.saving.deserialize_keras_object: the object a serialize_keras_object() config
describes (serialization.py). Classes come only from minidl's own tables and the
custom-object registry (custom_objects, a custom_object_scope, @register_keras_serializable):
a config never names code to import or run.
"""

import numpy as np

from . import (constraints, initializers, losses, metrics, optimizers, regularizers,
               schedules)
from .custom_objects import custom_object_scope, get_registered_object
from .layers import LAYER_CLASSES
from .layers.base import Layer
from .mixed_precision import DTypePolicy
from .models.registry import MODEL_CLASSES

# Keras's module for each kind of object, and the built-in classes of that kind
_TABLES = (
    ("keras.layers", lambda: LAYER_CLASSES),
    ("keras.optimizers.schedules", lambda: schedules._SCHEDULES),
    ("keras.optimizers", lambda: {cls.__name__: cls for cls in [*optimizers._OPTIMIZERS.values(),
                                                                *optimizers._WRAPPERS.values()]}),
    ("keras.losses", lambda: losses._CLASSES),
    ("keras.metrics", lambda: metrics.CLASSES),
    ("keras.initializers", lambda: {cls.__name__: cls for cls in initializers._BY_NAME.values()}),
    ("keras.regularizers", lambda: regularizers._CLASSES),
    ("keras.constraints", lambda: constraints._CLASSES),
    ("keras", lambda: {"DTypePolicy": DTypePolicy}),
)


def _lookup(config, custom_objects):
    """The class a config dict names: custom objects and the registry first (by
    registered name, then class name), then minidl's built-in classes of its module."""
    class_name = config.get("class_name")
    registered = config.get("registered_name")
    for name in (registered, class_name):
        if isinstance(name, str) and name != "function":
            found = get_registered_object(name, custom_objects)
            if found is not None:
                return found
    module = config.get("module")
    if class_name in MODEL_CLASSES or class_name == "Functional":
        return MODEL_CLASSES.get(class_name, MODEL_CLASSES.get("Model"))
    # the tables of the config's module first, then every table (Keras files name modules
    # such as "keras.src.backend.torch.optimizers.torch_adam")
    tables = [t for m, t in _TABLES if m == module] + [t for _, t in _TABLES]
    for table in tables:
        cls = table().get(class_name)
        if cls is not None:
            return cls
    return None


def _not_found(kind, name, config):
    return TypeError(f"Could not locate {kind} '{name}'. Make sure custom classes and functions "
                     "are decorated with `@minidl.saving.register_keras_serializable()` (or "
                     f"passed in custom_objects). Full object config: {config}")


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object that serialize_keras_object() described. Plain values, lists and dicts
    without "class_name" come back with their items deserialized; a string stays a string
    (as Keras: the layer or loss that takes it resolves the name)."""
    if config is None or isinstance(config, (bool, int, float, str)):
        return config
    if isinstance(config, (list, tuple)):
        items = [deserialize_keras_object(x, custom_objects, safe_mode) for x in config]
        return tuple(items) if isinstance(config, tuple) else items
    if not isinstance(config, dict):
        raise TypeError(f"deserialize_keras_object: expected a config dict, got "
                        f"{type(config).__name__}")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects, safe_mode) for k, v in config.items()}
    class_name, inner = config["class_name"], config["config"]
    if class_name == "__numpy__":
        return np.array(inner["value"], dtype=inner["dtype"])
    if class_name == "function":
        found = get_registered_object(inner, custom_objects) if isinstance(inner, str) else None
        if found is None and isinstance(inner, str):
            from . import activations
            found = getattr(activations, inner, None) if not inner.startswith("_") else None
            found = found if callable(found) else None
        if found is None:
            raise _not_found("function", inner, config)
        return found
    cls = _lookup(config, custom_objects)
    if cls is None:
        raise _not_found("class", class_name, config)
    with custom_object_scope(custom_objects):
        if hasattr(cls, "from_config"):
            obj = cls.from_config(dict(inner) if isinstance(inner, dict) else inner)
        else:
            obj = cls(**inner)
    build = config.get("build_config")
    if isinstance(obj, Layer) and isinstance(build, dict) and not obj.built \
            and not isinstance(obj, LAYER_CLASSES["InputLayer"]):
        shape = build.get("input_shape")
        if isinstance(shape, (list, tuple)) and len(shape) >= 2:
            obj.build_once(tuple(None if d is None else int(d) for d in shape[1:]))
    return obj


__all__ = ["deserialize_keras_object"]
