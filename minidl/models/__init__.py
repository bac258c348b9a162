"""Models: Sequential and the functional Model, with saving and loading."""

from .model import Model
from .saving import ModelFileError, load_model
from .sequential import Sequential
from .subclassing import SubclassedModel   # registers Keras's subclassing rule (see there)

__all__ = ["Model", "Sequential", "SubclassedModel", "load_model", "ModelFileError"]
