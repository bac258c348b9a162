"""keras.optimizers.MultiOptimizer and OptimizerMap: a different optimizer for different weights.

    optimizer = MultiOptimizer(OptimizerMap(optimizers.SGD(), {"encoder/.*": optimizers.Adam()}))
    optimizer = MultiOptimizer(lambda variable: adam if "encoder" in variable.path else sgd)

Each weight goes to the optimizer its path ("layer/weight", re.fullmatch against the map's
keys, an exact key first) or the callable names; each optimizer is built for its own weights
and steps them with its own state, step count and learning rate. MultiOptimizer counts its own
iterations (the steps it made). Its state is its sub-optimizers' under "<index>/" (index in
.optimizers order) plus its own "iterations", so model files save and restore it.
learning_rate is refused as Keras refuses it; current_learning_rate() (what fit logs) is the
first sub-optimizer's, and learning_rate_multipliers (FreezeWeights) go to every sub-optimizer.
"""

import re
from collections.abc import MutableMapping

import numpy as np

from ..custom_objects import get_registered_name, get_registered_object
from .base import Optimizer
from .loss_scale import LossScaleOptimizer
from .registry_hooks import REGISTRY


class Variable:
    """What an optimizer-map callable receives for each weight: path ("layer/weight"),
    name, shape and value (the backend tensor)."""

    def __init__(self, path, shape, value):
        self.path, self.shape, self.value = path, tuple(shape), value
        self.name = path.rsplit("/", 1)[-1] if path else None

    def __repr__(self):
        return f"<Variable path={self.path!r} shape={self.shape}>"


class OptimizerMap(MutableMapping):
    """{path or regular expression: optimizer}, with default_optimizer for unmapped weights."""

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: "
                            f"{default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = {}
        for key, optimizer in (optimizer_map or {}).items():
            self[key] = optimizer

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        """The optimizer of `key` (an exact key first, then the one key whose regular expression
        re.fullmatch-es it; two matches are an error), else default_optimizer."""
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        if matching:
            return self._optimizer_map[matching[0]]
        return self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value "
                             f"{self._optimizer_map[key]}. Please make sure to not use duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        try:
            re.compile(key)
        except re.error as exc:
            raise ValueError(f"OptimizerMap: key {key!r} is not a regular expression: {exc}") from None
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[variable.path]

    def get_config(self):
        return {"default_optimizer": REGISTRY["serialize"](self._default_optimizer),
                "optimizer_map": {key: REGISTRY["serialize"](opt) for key, opt in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(REGISTRY["deserialize"](config["default_optimizer"], custom_objects),
                   {key: REGISTRY["deserialize"](opt, custom_objects) for key, opt in config["optimizer_map"].items()})


class MultiOptimizer(Optimizer):
    """MultiOptimizer(optimizer_map, loss_scale_factor=None, name=None): optimizer_map is an
    OptimizerMap or a callable taking a Variable (with .path) and returning an optimizer.
    loss_scale_factor: model.fit multiplies the loss by it and the gradients are divided by it
    before the sub-optimizers step (Keras's static loss scaling)."""

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        # Optimizer.__init__ is not called: the hyperparameters are the sub-optimizers'.
        if not callable(optimizer_map):
            raise TypeError(f"MultiOptimizer: optimizer_map must be an OptimizerMap or a callable "
                            f"returning an optimizer for a variable, got {type(optimizer_map).__name__}")
        if loss_scale_factor is not None and (isinstance(loss_scale_factor, bool) or not isinstance(
                loss_scale_factor, (int, float)) or not np.isfinite(loss_scale_factor) or loss_scale_factor <= 0):
            raise ValueError(f"MultiOptimizer: loss_scale_factor must be a positive number or None, got "
                             f"{loss_scale_factor!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"MultiOptimizer: name must be a string or None, got {name!r}")
        self.name = name if name is not None else "multi_optimizer"
        self.loss_scale_factor = loss_scale_factor
        self._optimizer_map = optimizer_map
        self._inner_optimizers = []
        for optimizer in list(getattr(optimizer_map, "values", lambda: [])()) + \
                [getattr(optimizer_map, "default_optimizer", None)]:
            if optimizer is not None and not any(optimizer is o for o in self._inner_optimizers):
                self._inner_optimizers.append(optimizer)
        self.iterations = 0
        self._backend = None
        self._groups = None   # per sub-optimizer: the positions of its weights in build order
        self._pending_state = None

    @property
    def optimizers(self):
        return self._inner_optimizers

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the learning "
                             "rate on the individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning rate on "
                             "the individual sub-optimizers instead.")

    def current_learning_rate(self):
        return self._inner_optimizers[0].current_learning_rate() if self._inner_optimizers else 0.0

    @property
    def learning_rate_multipliers(self):
        return self._inner_optimizers[0].learning_rate_multipliers if self._inner_optimizers else None

    @learning_rate_multipliers.setter
    def learning_rate_multipliers(self, mapping):
        for optimizer in self._inner_optimizers:
            optimizer.learning_rate_multipliers = mapping

    @property
    def loss_scale(self):
        return 1.0 if self.loss_scale_factor is None else float(self.loss_scale_factor)

    def scale_loss(self, loss):
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    @property
    def use_ema(self):
        return False

    @property
    def built(self):
        return self._groups is not None

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        for optimizer in self._inner_optimizers:
            optimizer.exclude_from_weight_decay(var_list, var_names)

    # -------------------------------------------------------------- build
    def build(self, backend, weights, names=None):
        if self.built:
            raise RuntimeError(f"MultiOptimizer '{self.name}' is already built; build() is called once")
        weights = list(weights)
        names = list(names) if names is not None else [None] * len(weights)
        groups = [[] for _ in self._inner_optimizers]
        for position, (weight, path) in enumerate(zip(weights, names)):
            optimizer = self._optimizer_map(Variable(path, backend.shape(weight), weight))
            if not isinstance(optimizer, Optimizer):
                raise ValueError(f"Optimizer for variable {path} is not an Optimizer instance.")
            if isinstance(optimizer, LossScaleOptimizer):
                raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
            if isinstance(optimizer, MultiOptimizer):
                raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
            index = next((i for i, o in enumerate(self._inner_optimizers) if o is optimizer), None)
            if index is None:
                self._inner_optimizers.append(optimizer)
                groups.append([])
                index = len(groups) - 1
            groups[index].append(position)
        for optimizer, group in zip(self._inner_optimizers, groups):
            if group:
                optimizer.build(backend, [weights[i] for i in group], [names[i] for i in group])
        self._backend, self._groups = backend, groups
        self._shapes = [tuple(backend.shape(w)) for w in weights]
        self._weights = weights                                        # for Optimizer.apply
        self._positions = {id(w): i for i, w in enumerate(weights)}
        if self._pending_state is not None:
            pending, self._pending_state = self._pending_state, None
            self.set_state(backend, pending)

    # --------------------------------------------------------------- step
    def apply_gradients(self, grads_and_vars):
        if not self.built:
            raise RuntimeError(f"MultiOptimizer '{self.name}': call build(backend, weights) before "
                               f"apply_gradients")
        grads_and_vars = list(grads_and_vars)
        if len(grads_and_vars) != len(self._shapes):
            raise ValueError(f"Gradients must match trainable variables one-to-one. Received "
                             f"{len(grads_and_vars)} gradients and {len(self._shapes)} variables.")
        if self.loss_scale_factor is not None:
            for grad, _ in grads_and_vars:
                self._backend.axpby(grad, 1.0 / self.loss_scale_factor, grad, 0.0, grad)
        for optimizer, group in zip(self._inner_optimizers, self._groups):
            if group:
                optimizer.apply_gradients([grads_and_vars[i] for i in group])
        self.iterations += 1

    def _kept_tensors(self, index):
        """Optimizer.apply's question goes to the sub-optimizer that owns the weight."""
        for optimizer, group in zip(self._inner_optimizers, self._groups):
            if index in group:
                return optimizer._kept_tensors(group.index(index))
        return [self._weights[index]]

    def finalize_variable_values(self, weights):
        weights = list(weights)
        for optimizer, group in zip(self._inner_optimizers, self._groups or []):
            if group:
                optimizer.finalize_variable_values([weights[i] for i in group])

    # --------------------------------------------------------------- state
    def _built_members(self):
        return [(i, o) for i, (o, g) in enumerate(zip(self._inner_optimizers, self._groups)) if g]

    def get_state(self, backend):
        if not self.built:
            return dict(self._pending_state or {"iterations": np.array(self.iterations, np.int64)})
        state = {"iterations": np.array(self.iterations, np.int64)}
        for index, optimizer in self._built_members():
            state.update({f"{index}/{k}": v for k, v in optimizer.get_state(backend).items()})
        return state

    def state_shapes(self):
        shapes = {}
        for index, optimizer in self._built_members():
            shapes[f"{index}/iterations"] = ()
            shapes.update({f"{index}/{k}": s for k, s in optimizer.state_shapes().items()})
        return shapes

    def set_state(self, backend, state):
        owner = f"MultiOptimizer '{self.name}'.set_state"
        if not hasattr(state, "keys") or "iterations" not in state:
            raise ValueError(f"{owner}: expected a dict from get_state() with an 'iterations' entry")
        iterations = np.asarray(state["iterations"])
        if iterations.size != 1 or iterations.dtype.kind not in "iu" or int(iterations.reshape(())) < 0:
            raise ValueError(f"{owner}: 'iterations' must be one non-negative integer, got {iterations!r}")
        if not self.built:
            self._pending_state = dict(state)
            return
        members = self._built_members()
        known = {f"{index}/" for index, _ in members}
        stray = sorted(k for k in state if k != "iterations" and k.split("/", 1)[0] + "/" not in known)
        if stray:
            raise ValueError(f"{owner}: unexpected state {stray[:6]} (this MultiOptimizer has "
                             f"{len(members)} built sub-optimizers)")
        for index, optimizer in members:
            prefix = f"{index}/"
            sub = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
            if "iterations" in sub:
                sub["iterations"] = np.asarray(sub["iterations"]).reshape(())
            optimizer.set_state(backend, sub)
        self.iterations = int(iterations.reshape(()))

    # -------------------------------------------------------------- config
    def get_config(self):
        optimizer_map = self._optimizer_map
        if isinstance(optimizer_map, OptimizerMap):
            mapped = {"class_name": "OptimizerMap", "config": optimizer_map.get_config()}
        else:   # a function: by its registered name (custom_objects on load)
            mapped = {"class_name": "function", "config": get_registered_name(optimizer_map)}
        return {"optimizer_map": mapped, "loss_scale_factor": self.loss_scale_factor, "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        mapped = config.get("optimizer_map")
        if isinstance(mapped, dict) and mapped.get("class_name") == "OptimizerMap":
            config["optimizer_map"] = OptimizerMap.from_config(mapped["config"], custom_objects)
        elif isinstance(mapped, dict) and mapped.get("class_name") == "function":
            function = get_registered_object(mapped.get("config"), custom_objects)
            if function is None:
                raise ValueError(f"MultiOptimizer.from_config: the optimizer_map function "
                                 f"{mapped.get('config')!r} is unknown; pass it in custom_objects")
            config["optimizer_map"] = function
        return cls(**config)

    def __repr__(self):
        return f"MultiOptimizer(name={self.name!r}, optimizers={self._inner_optimizers!r})"
