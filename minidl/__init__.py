"""minidl: a small, fast, Keras-style deep-learning framework for CPUs and OpenCL devices."""

from . import activations, callbacks, initializers, layers, losses, metrics, models, optimizers
from . import schedules
from .backends import available_backends, get_backend, set_backend
from .random import set_seed

__version__ = "0.1.0"

__all__ = ["activations", "available_backends", "callbacks", "get_backend", "initializers",
           "layers", "losses", "metrics", "models", "optimizers", "schedules", "set_backend",
           "set_seed"]
