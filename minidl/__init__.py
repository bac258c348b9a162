"""minidl: a small, fast, Keras-style deep-learning framework for CPUs and OpenCL devices.

The top-level names follow `keras`: minidl.Sequential, minidl.Model, minidl.Input and the
namespaces layers, models, optimizers, losses, metrics, callbacks, initializers, utils,
saving and backend (Keras's configuration questions; the compute backends are
minidl.backends, chosen with set_backend).
"""

from . import activations, callbacks, initializers, layers, losses, metrics, models, optimizers
import sys as _sys

from . import keras_backend as backend   # keras.backend's names (not the compute backends)
from . import mixed_precision, ops, quantization, saving, schedules, utils
from .backends import available_backends, get_backend, set_backend

# `import minidl.backend` / `from minidl.backend import ...` as with keras.backend
_sys.modules[__name__ + ".backend"] = backend
from .gradient_tape import GradientTape
from .layers import Input
from .models import Model, Sequential
from .random import set_seed
from . import tree
from .core_classes import (FloatDTypePolicy, Function, InputSpec, KerasTensor, Layer, Operation,
                           Variable, device, name_scope, version)
from .initializers import Initializer
from .losses import Loss
from .metrics import Metric
from .mixed_precision import DTypePolicy
from .optimizers import Optimizer
from .regularizers import Regularizer

from ._version import __version__

# Namespaces imported on first use (keras.applications, keras.datasets; minidl's own larq, zoo
# and recipes): their modules are many and most scripts need none of them.
_LAZY = ("applications", "datasets", "larq", "zoo", "recipes")


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["GradientTape", "Input", "Model", "Sequential", "activations", "available_backends", "backend",
           "callbacks", "get_backend", "initializers", "layers", "losses", "metrics", "models",
           "ops", "optimizers", "saving", "schedules", "set_backend", "set_seed", "utils",
           "tree", "DTypePolicy", "FloatDTypePolicy", "Function", "Initializer", "InputSpec",
           "KerasTensor", "Layer", "Loss", "Metric", "Operation", "Optimizer", "Regularizer",
           "Variable", "device", "name_scope", "version"]
