"""keras.saving's names: load and save models and weights, and register your own classes.

`minidl.saving.load_model` is `minidl.models.load_model`; `custom_objects=` and
@register_keras_serializable let a file name layer classes of your own (see
minidl/custom_objects.py).
"""

from .custom_objects import (CustomObjectScope, custom_object_scope, get_custom_objects,
                             get_registered_name, get_registered_object,
                             register_keras_serializable)
from .models.file_formats import load_model
from .models.minidl_files import ModelFileError
from .deserialization import deserialize_keras_object
from .serialization import serialize_keras_object


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """model.save(filepath, ...) as a function, as keras.saving.save_model."""
    model.save(filepath, overwrite=overwrite, include_optimizer=include_optimizer)


def save_weights(model, filepath, overwrite=True):
    model.save_weights(filepath, overwrite=overwrite)


def load_weights(model, filepath, skip_mismatch=False, by_name=False):
    model.load_weights(filepath, skip_mismatch=skip_mismatch, by_name=by_name)


__all__ = ["CustomObjectScope", "ModelFileError", "custom_object_scope", "get_custom_objects",
           "get_registered_name", "get_registered_object", "load_model", "load_weights",
           "register_keras_serializable", "save_model", "save_weights",
           "deserialize_keras_object", "serialize_keras_object"]
