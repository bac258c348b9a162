"""Models: Sequential and the functional Model, with saving and loading."""

from .model import Model
from .file_formats import load_model
from .saving import ModelFileError
from .sequential import Sequential
from .subclassing import SubclassedModel   # registers Keras's subclassing rule (see there)

__all__ = ["Model", "Sequential", "SubclassedModel", "load_model", "ModelFileError"]
