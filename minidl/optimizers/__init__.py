"""Optimizers with Keras 3's names, defaults and update rules (see base.py for the lifecycle).

base.py holds the Optimizer class and its common arguments (clipping, weight decay and its
exclusions, use_ema), classic.py SGD, RMSprop, Adam and Adagrad, extended.py Adadelta,
Adamax, Nadam, AdamW, Lion and Ftrl, normalized.py Lamb, Adafactor, Muon and ScheduleFreeAdamW, torch_sgd.py TorchSGD (PyTorch's
SGD rule); the optimizers that hold others: lookahead.py Lookahead, loss_scale.py
LossScaleOptimizer, multi.py MultiOptimizer and OptimizerMap; this module is the registry
(get, serialize, deserialize).
"""

from ..custom_objects import custom_object_scope, get_registered_name, get_registered_object
from .base import Optimizer
from .classic import SGD, Adagrad, Adam, RMSprop
from .extended import Adadelta, Adamax, AdamW, Ftrl, Lion, Nadam
from .normalized import Adafactor, Lamb, Muon, ScheduleFreeAdamW
from .torch_sgd import TorchSGD
from .lookahead import Lookahead, PowerRamp
from .loss_scale import LossScaleOptimizer
from .multi import MultiOptimizer, OptimizerMap
from . import schedules  # noqa: F401  (keras.optimizers.schedules)
from .registry_hooks import REGISTRY

_OPTIMIZERS = {cls.__name__.lower(): cls for cls in (SGD, RMSprop, Adam, Adagrad, Adadelta, Adamax, Nadam,
                                                     AdamW, Lion, Ftrl, Lamb, Adafactor, Muon,
                                                     ScheduleFreeAdamW, TorchSGD)}
# the optimizers that hold others: found by deserialize, not by get(name) (they need them)
_WRAPPERS = {cls.__name__.lower(): cls for cls in (Lookahead, LossScaleOptimizer, MultiOptimizer)}

# Keras 2's lower-case aliases, as its examples use them: keras.optimizers.rmsprop(lr=1e-4, decay=1e-6)
sgd, rmsprop, adam, adagrad, adadelta, adamax, nadam = SGD, RMSprop, Adam, Adagrad, Adadelta, Adamax, Nadam


def serialize(optimizer):
    """{"class_name": ..., "config": ...} describing `optimizer` (its state is not included)."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizers.serialize: expected an Optimizer, got {type(optimizer).__name__}")
    return {"class_name": get_registered_name(optimizer), "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """A new optimizer from a serialize() dict."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"optimizers.deserialize: expected a dict with 'class_name' and 'config', "
                         f"got {config!r}")
    known = dict(_OPTIMIZERS, **_WRAPPERS)
    known.update({name.lower(): cls for name, cls in (custom_objects or {}).items()})
    name = str(config["class_name"])
    cls = known.get(name.lower()) or get_registered_object(name, custom_objects)
    if cls is None:
        raise ValueError(f"optimizers.deserialize: unknown optimizer {config['class_name']!r}; "
                         f"known: {sorted(known)}")
    if not (isinstance(cls, type) and issubclass(cls, Optimizer)):
        raise ValueError(f"optimizers.deserialize: {name!r} names {cls!r}, not an Optimizer class")
    with custom_object_scope(custom_objects):  # a schedule of your own is found the same way
        return cls.from_config(config.get("config", {}))


REGISTRY.update(serialize=serialize, deserialize=deserialize)


def get(identifier):
    """An optimizer from a name ("sgd", "adam", "adamw", "nadam", "lion", ...; any case, Keras defaults),
    an Optimizer instance (returned as is) or a serialize() dict."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        cls = _OPTIMIZERS.get(identifier.lower())
        if cls is None:
            raise ValueError(f"optimizers.get: unknown optimizer {identifier!r}; "
                             f"known: {sorted(_OPTIMIZERS)}")
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise TypeError(f"optimizers.get: cannot interpret {identifier!r} as an optimizer "
                    f"(pass a name, an Optimizer or a {{'class_name', 'config'}} dict)")


__all__ = ["Optimizer", "SGD", "RMSprop", "Adam", "Adagrad", "Adadelta", "Adamax", "Nadam", "AdamW", "Lion",
           "Ftrl", "Lamb", "Adafactor", "Muon", "ScheduleFreeAdamW", "TorchSGD", "Lookahead", "PowerRamp", "LossScaleOptimizer",
           "MultiOptimizer", "OptimizerMap", "schedules", "serialize", "deserialize", "get"]
