"""Models: Sequential and the functional Model, with saving and loading."""

from .model import Model
from .file_formats import load_model
from .minidl_files import ModelFileError
from .sequential import Sequential
from .subclassing import SubclassedModel   # registers Keras's subclassing rule (see there)
from .cloning import clone_model
from .json_config import model_from_json


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """model.save(filepath, ...) as a function, as keras.models.save_model."""
    if zipped is not None:
        kwargs["zipped"] = zipped
    model.save(filepath, overwrite=overwrite, **kwargs)

__all__ = ["Model", "Sequential", "SubclassedModel", "load_model", "ModelFileError", "clone_model",
           "model_from_json", "save_model"]
