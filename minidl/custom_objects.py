"""The registry of user classes that model files may name (keras.saving's registration).

A model file names each layer by class. Built-in layers are found by their class name;
a class of your own is found when it was registered with @register_keras_serializable
(saved under "package>name", as Keras does) or passed to load_model(custom_objects=...) /
opened in a custom_object_scope. Only classes found this way can be built from a file:
a file never names code to import.

This module imports nothing from minidl, so layers and models can both consult it.
"""

import contextlib
import inspect
import threading

_GLOBAL = {}          # registered name -> class
_NAMES = {}           # class -> registered name
_scopes = threading.local()


def register_keras_serializable(package="Custom", name=None):
    """Class (or function) decorator: register it as "package>name" (name defaults to its
    __name__), as Keras registers both."""
    if not isinstance(package, str) or not package or ">" in package:
        raise ValueError(f"register_keras_serializable: package must be a non-empty string "
                         f"without '>', got {package!r}")

    def decorator(cls):
        cls_name = cls.__name__ if name is None else name
        if not isinstance(cls_name, str) or not cls_name:
            raise ValueError(f"register_keras_serializable: name must be a non-empty string, "
                             f"got {name!r}")
        if isinstance(cls, type) and not hasattr(cls, "get_config"):   # functions need none
            raise ValueError(f"register_keras_serializable: {cls.__name__} must implement "
                             "get_config() (and from_config, when it is not cls(**config)) to "
                             "be saved and loaded")
        registered = f"{package}>{cls_name}"
        if registered in _GLOBAL and _GLOBAL[registered] is not cls:
            raise ValueError(f"register_keras_serializable: {registered!r} is already registered "
                             f"to {_GLOBAL[registered].__qualname__}")
        _GLOBAL[registered] = cls
        _NAMES[cls] = registered
        return cls

    return decorator


def get_registered_name(obj):
    """The name a file uses for `obj` (a class, a function or an instance): "package>name"
    when registered, else its (class) name."""
    if isinstance(obj, type) or inspect.isroutine(obj):   # a class or a function
        return _NAMES.get(obj, obj.__name__)
    return _NAMES.get(type(obj), type(obj).__name__)


def _scope_stack():
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class registered (or in scope, or in the given dicts) under `name`, else None.
    Look-up order as Keras: custom_objects, the innermost scope outwards, the global
    registry, then module_objects."""
    for table in [custom_objects or {}] + list(reversed(_scope_stack())) + [_GLOBAL,
                                                                          module_objects or {}]:
        if name in table:
            return table[name]
    return None


def get_custom_objects():
    """The global registry (a live dict, as Keras: adding {name: cls} to it registers)."""
    return _GLOBAL


@contextlib.contextmanager
def custom_object_scope(custom_objects):
    """Within the block, model files may name the classes in `custom_objects` ({name: cls})."""
    if custom_objects is None:
        custom_objects = {}
    if not isinstance(custom_objects, dict):
        raise TypeError(f"custom_object_scope: custom_objects must be a dict of name -> class, "
                        f"got {type(custom_objects).__name__}")
    stack = _scope_stack()
    stack.append(dict(custom_objects))
    try:
        yield
    finally:
        stack.pop()


CustomObjectScope = custom_object_scope

__all__ = ["CustomObjectScope", "custom_object_scope", "get_custom_objects",
           "get_registered_name", "get_registered_object", "register_keras_serializable"]
