"""Models: Sequential and the functional Model, with saving and loading."""

from .model import Model
from .saving import ModelFileError, load_model
from .sequential import Sequential

__all__ = ["Model", "Sequential", "load_model", "ModelFileError"]
