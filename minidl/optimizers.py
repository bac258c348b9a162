"""Optimizers with Keras's names, defaults and update rules.

An optimizer holds hyperparameters and one set of state tensors per weight. It never
computes with numpy during a step: `apply_gradients` only calls the backend's clip ops
and its fused update op (sgd_update, adam_update, rmsprop_update, adagrad_update), so
a backend that keeps tensors on a device updates them there. Host copies happen only in
`get_state`/`set_state`, which save/load use to resume training with identical state.

Lifecycle: construct (hyperparameters) -> build(backend, weights) once (state tensors)
-> apply_gradients([(grad, weight), ...]) every step, in the order given to build.
"""

import math
import numbers

import numpy as np

from . import schedules
from .arguments import number as _number


def _keras2_arguments(owner, learning_rate, keras2):
    """Keras 2's spellings: lr= for learning_rate (it wins, as in tf.keras 2) and decay=,
    the inverse-time decay lr / (1 + decay * iterations). Anything else is an error."""
    unknown = sorted(set(keras2) - {"lr", "decay"})
    if unknown:
        raise TypeError(f"{owner}: unexpected keyword argument(s) {unknown}")
    if keras2.get("lr") is not None:
        learning_rate = keras2["lr"]
    decay = _number(keras2.get("decay") or 0.0, "decay", owner, low=0.0)
    return learning_rate, decay


class Optimizer:
    """Base class. Subclasses name their per-weight state slots in `_slots` and implement
    `_update(backend, weight, grad, state, lr)` with one fused backend op."""

    _slots = ()
    # slots that hold running averages of squared gradients (never negative)
    _non_negative_slots = ()

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, name=None,
                 **keras2):
        owner = type(self).__name__
        learning_rate, self.decay = _keras2_arguments(owner, learning_rate, keras2)
        self.learning_rate = learning_rate
        self.weight_decay = _number(weight_decay, "weight_decay", owner, low=0.0, allow_none=True)
        self.clipnorm = _number(clipnorm, "clipnorm", owner, low=0.0, low_inclusive=False,
                                allow_none=True)
        self.clipvalue = _number(clipvalue, "clipvalue", owner, low=0.0, low_inclusive=False,
                                 allow_none=True)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a string or None, got {name!r}")
        self.name = name if name is not None else owner.lower()
        self.iterations = 0
        self._backend = None
        self._shapes = None          # shape of each weight given to build()
        self._state = None           # slot name -> list of state tensors, one per weight
        self._pending_state = None   # set_state() before build(): applied by build()

    # -------------------------------------------------------- learning rate
    @property
    def learning_rate(self):
        """The float learning rate, or the LearningRateSchedule when one is used."""
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, schedules.LearningRateSchedule):
            self._learning_rate = value
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{type(self).__name__}: learning_rate must be a positive number or a "
                            f"schedules.LearningRateSchedule, got {type(value).__name__} {value!r}")
        self._learning_rate = _number(value, "learning_rate", type(self).__name__,
                                      low=0.0, low_inclusive=False)

    def current_learning_rate(self):
        """The learning rate the next step uses: the schedule evaluated at `iterations`."""
        if isinstance(self._learning_rate, schedules.LearningRateSchedule):
            return float(self._learning_rate(self.iterations))
        return self._learning_rate

    # --------------------------------------------------------------- build
    @property
    def built(self):
        return self._state is not None

    def build(self, backend, weights):
        """Create the state tensors for `weights` (a list of backend float tensors)."""
        if self.built:
            raise RuntimeError(f"{type(self).__name__} '{self.name}' is already built for "
                               f"{len(self._shapes)} weights; build() is called once")
        self._backend = backend
        self._shapes = [tuple(backend.shape(w)) for w in weights]
        self._state = {slot: [self._create_slot(backend, slot, shape) for shape in self._shapes]
                       for slot in self._active_slots()}
        # The same tensors per weight, so that a step does no look-ups (set_state copies into them).
        self._state_of_weight = [{slot: tensors[i] for slot, tensors in self._state.items()}
                                 for i in range(len(self._shapes))]
        if self._pending_state is not None:
            pending, self._pending_state = self._pending_state, None
            self.set_state(backend, pending)

    def _active_slots(self):
        return self._slots

    def _create_slot(self, backend, slot, shape):
        return backend.zeros(shape)

    # ---------------------------------------------------------------- step
    def apply_gradients(self, grads_and_vars):
        """Clip each gradient in place (clipvalue, then clipnorm per tensor), update every
        weight in place with the fused backend op, then count the step."""
        if not self.built:
            raise RuntimeError(f"{type(self).__name__} '{self.name}': call build(backend, weights) "
                               f"before apply_gradients")
        grads_and_vars = list(grads_and_vars)
        if len(grads_and_vars) != len(self._shapes):
            raise ValueError(f"{type(self).__name__} '{self.name}' was built for {len(self._shapes)} "
                             f"weights but apply_gradients got {len(grads_and_vars)} (grad, weight) pairs")
        backend = self._backend
        lr = self.current_learning_rate()
        if self.decay:  # Keras 2's decay, applied under the rate that callbacks see and set
            lr = lr / (1.0 + self.decay * self.iterations)
        for index, (grad, weight) in enumerate(grads_and_vars):
            shape = tuple(backend.shape(weight))
            if shape != self._shapes[index] or tuple(backend.shape(grad)) != shape:
                raise ValueError(f"{type(self).__name__} '{self.name}': pair {index} has weight shape "
                                 f"{shape} and gradient shape {tuple(backend.shape(grad))}, expected "
                                 f"{self._shapes[index]} (the order given to build())")
            if self.clipvalue is not None:
                backend.clip_by_value(grad, self.clipvalue)
            if self.clipnorm is not None:
                backend.clip_by_norm(grad, self.clipnorm)
            self._update(backend, weight, grad, self._state_of_weight[index], lr)
        self.iterations += 1

    def _weight_decay(self):
        return 0.0 if self.weight_decay is None else self.weight_decay

    def _update(self, backend, weight, grad, state, lr):
        raise NotImplementedError(f"{type(self).__name__} must implement _update")

    # --------------------------------------------------------------- state
    def get_state(self, backend):
        """Every state tensor as a numpy array, keyed "<slot>/<weight index>", plus "iterations"."""
        state = {"iterations": np.array(self.iterations, dtype=np.int64)}
        if self._pending_state is not None:
            state.update({k: v for k, v in self._pending_state.items() if k != "iterations"})
        if self.built:
            for slot, tensors in self._state.items():
                for index, tensor in enumerate(tensors):
                    state[f"{slot}/{index}"] = backend.to_numpy(tensor)
        return state

    def set_state(self, backend, state):
        """Restore what get_state() returned. Before build() the state is kept and applied
        by build(); after it every array must match its tensor's shape."""
        owner = f"{type(self).__name__} '{self.name}'"
        if not hasattr(state, "keys") or "iterations" not in state:
            raise ValueError(f"{owner}.set_state: expected a dict from get_state() with an "
                             f"'iterations' entry, got {type(state).__name__}")
        iterations = np.asarray(state["iterations"])
        if iterations.size != 1 or not np.issubdtype(iterations.dtype, np.integer) \
                or int(iterations.reshape(())) < 0:
            raise ValueError(f"{owner}.set_state: 'iterations' must be one non-negative integer, "
                             f"got {state['iterations']!r}")
        if not self.built:
            self._pending_state = dict(state)
            self.iterations = int(iterations.reshape(()))
            return
        expected = self.state_shapes()
        given = set(state) - {"iterations"}
        if given != set(expected):
            missing = sorted(set(expected) - given)
            extra = sorted(given - set(expected))
            raise ValueError(f"{owner}.set_state: the state does not match this optimizer built for "
                             f"{len(self._shapes)} weights; missing {missing[:6]}, unexpected {extra[:6]}")
        arrays = {}
        dtype = getattr(backend, "dtype", "float32")
        for key, shape in expected.items():
            array = np.asarray(state[key])
            if array.shape != shape:
                raise ValueError(f"{owner}.set_state: state {key!r} has shape {array.shape}, but its "
                                 f"weight has shape {shape}")
            if array.dtype.kind not in "biuf":
                raise ValueError(f"{owner}.set_state: state {key!r} must be numbers, got {array.dtype}")
            with np.errstate(over="ignore"):
                array = np.ascontiguousarray(array, dtype=dtype)
            if not np.all(np.isfinite(array)):
                raise ValueError(f"{owner}.set_state: state {key!r} has values that are not finite "
                                 f"in {dtype}")
            if key.rsplit("/", 1)[0] in self._non_negative_slots and np.any(array < 0):
                raise ValueError(f"{owner}.set_state: state {key!r} holds averages of squares, "
                                 f"which cannot be negative; got {array.min()}")
            arrays[key] = array
        for key, array in arrays.items():
            slot, index = key.rsplit("/", 1)
            backend.copy_from_host(self._state[slot][int(index)], array)
        self.iterations = int(iterations.reshape(()))

    def state_shapes(self):
        """The shape of every state array set_state() expects once built, keyed as get_state()'s
        (without "iterations")."""
        return {f"{slot}/{index}": shape for slot in self._state
                for index, shape in enumerate(self._shapes)}

    # -------------------------------------------------------------- config
    def get_config(self):
        """The constructor arguments (a schedule as its {"class_name", "config"} dict)."""
        lr = self._learning_rate
        if isinstance(lr, schedules.LearningRateSchedule):
            lr = schedules.serialize(lr)
        config = {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                  "clipnorm": self.clipnorm, "clipvalue": self.clipvalue}
        if self.decay:  # only when given, so that configs without it stay as Keras 3 writes them
            config["decay"] = self.decay
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"])
        return cls(**config)

    def __repr__(self):
        return f"{type(self).__name__}({self.get_config()})"


class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum:
    velocity = momentum * velocity - lr * g; w += velocity."""

    _slots = ("momentum",)

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, name=None, **keras2):
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, name, **keras2)
        self.momentum = _number(momentum, "momentum", "SGD", low=0.0, high=1.0)
        if not isinstance(nesterov, bool):
            raise TypeError(f"SGD: nesterov must be a bool, got {nesterov!r}")
        self.nesterov = nesterov

    def _active_slots(self):
        # Without momentum Keras keeps no velocity; the backend op takes None then.
        return self._slots if self.momentum != 0.0 else ()

    def _update(self, backend, weight, grad, state, lr):
        backend.sgd_update(weight, grad, state.get("momentum"), lr, self.momentum, self.nesterov,
                           self._weight_decay())

    def get_config(self):
        config = super().get_config()
        config.update(momentum=self.momentum, nesterov=self.nesterov)
        return config


class RMSprop(Optimizer):
    """ms = rho * ms + (1 - rho) * g^2; w -= lr * g / sqrt(ms + epsilon) (through a
    momentum accumulator when momentum > 0)."""

    _slots = ("velocity", "momentum")
    _non_negative_slots = ("velocity",)

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, name=None, **keras2):
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, name, **keras2)
        self.rho = _number(rho, "rho", "RMSprop", low=0.0, high=1.0)
        self.momentum = _number(momentum, "momentum", "RMSprop", low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", "RMSprop", low=0.0)

    def _active_slots(self):
        return self._slots if self.momentum != 0.0 else ("velocity",)

    def _update(self, backend, weight, grad, state, lr):
        backend.rmsprop_update(weight, grad, state["velocity"], state.get("momentum"), lr, self.rho,
                               self.momentum, self.epsilon, self._weight_decay())

    def get_config(self):
        config = super().get_config()
        config.update(rho=self.rho, momentum=self.momentum, epsilon=self.epsilon)
        return config


class Adam(Optimizer):
    """Adam with Keras's bias correction folded into the step size at 1-based step t."""

    _slots = ("momentum", "velocity")
    _non_negative_slots = ("velocity",)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, name=None, **keras2):
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, name, **keras2)
        self.beta_1 = _number(beta_1, "beta_1", "Adam", low=0.0, high=1.0)
        self.beta_2 = _number(beta_2, "beta_2", "Adam", low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", "Adam", low=0.0)

    def _update(self, backend, weight, grad, state, lr):
        backend.adam_update(weight, grad, state["momentum"], state["velocity"], lr, self.beta_1,
                            self.beta_2, self.epsilon, self.iterations + 1, self._weight_decay())

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config


class Adagrad(Optimizer):
    """acc += g^2; w -= lr * g / sqrt(acc + epsilon); acc starts at initial_accumulator_value."""

    _slots = ("accumulator",)
    _non_negative_slots = ("accumulator",)

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, name=None, **keras2):
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, name, **keras2)
        self.initial_accumulator_value = _number(initial_accumulator_value,
                                                 "initial_accumulator_value", "Adagrad", low=0.0)
        self.epsilon = _number(epsilon, "epsilon", "Adagrad", low=0.0)

    def _create_slot(self, backend, slot, shape):
        accumulator = backend.empty(shape)
        backend.fill(accumulator, self.initial_accumulator_value)
        return accumulator

    def _update(self, backend, weight, grad, state, lr):
        backend.adagrad_update(weight, grad, state["accumulator"], lr, self.epsilon,
                               self._weight_decay())

    def get_config(self):
        config = super().get_config()
        config.update(initial_accumulator_value=self.initial_accumulator_value, epsilon=self.epsilon)
        return config


_OPTIMIZERS = {cls.__name__.lower(): cls for cls in (SGD, RMSprop, Adam, Adagrad)}

# Keras 2's lower-case aliases, as its examples use them: keras.optimizers.rmsprop(lr=1e-4, decay=1e-6)
sgd, rmsprop, adam, adagrad = SGD, RMSprop, Adam, Adagrad


def serialize(optimizer):
    """{"class_name": ..., "config": ...} describing `optimizer` (its state is not included)."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizers.serialize: expected an Optimizer, got {type(optimizer).__name__}")
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """A new optimizer from a serialize() dict."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"optimizers.deserialize: expected a dict with 'class_name' and 'config', "
                         f"got {config!r}")
    known = dict(_OPTIMIZERS)
    known.update({name.lower(): cls for name, cls in (custom_objects or {}).items()})
    name = str(config["class_name"]).lower()
    if name not in known:
        raise ValueError(f"optimizers.deserialize: unknown optimizer {config['class_name']!r}; "
                         f"known: {sorted(known)}")
    return known[name].from_config(config.get("config", {}))


def get(identifier):
    """An optimizer from a name ("sgd", "adam", "rmsprop", "adagrad"; any case, Keras defaults),
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


__all__ = ["Optimizer", "SGD", "RMSprop", "Adam", "Adagrad", "serialize", "deserialize", "get"]
