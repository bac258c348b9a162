"""The optimizer base class: Keras 3's common arguments, the step, state and config.

An optimizer holds hyperparameters and one set of state tensors per weight. It never
computes with numpy during a step: `apply_gradients` only calls the backend's clip ops,
its fused update op (sgd_update, adam_update, ... one per optimizer) and, with use_ema,
ema_update, so a backend that keeps tensors on a device updates them there. Host copies
happen only in `get_state`/`set_state`, which save/load use to resume with identical state.

Lifecycle: construct (hyperparameters) -> build(backend, weights, names) once (state
tensors) -> apply_gradients([(grad, weight), ...]) every step, in the order given to build
-> finalize_variable_values() at the end of fit (the moving average replaces the weights
when use_ema, as Keras does).
"""

import numbers
import warnings
import re

import numpy as np

from .. import schedules
from ..arguments import number as _number


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

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 name=None, learning_rate_multipliers=None, **keras2):
        owner = type(self).__name__
        learning_rate, self.decay = _keras2_arguments(owner, learning_rate, keras2)
        self.learning_rate = learning_rate
        self.weight_decay = _number(weight_decay, "weight_decay", owner, low=0.0, allow_none=True)
        self.clipnorm = _number(clipnorm, "clipnorm", owner, low=0.0, low_inclusive=False,
                                allow_none=True)
        self.clipvalue = _number(clipvalue, "clipvalue", owner, low=0.0, low_inclusive=False,
                                 allow_none=True)
        self.global_clipnorm = _number(global_clipnorm, "global_clipnorm", owner, low=0.0,
                                       low_inclusive=False, allow_none=True)
        if self.global_clipnorm is not None and (self.clipnorm is not None or self.clipvalue is not None):
            raise ValueError(f"{owner}: only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
                             f"set. Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                             f"global_clipnorm={global_clipnorm}")
        self._set_ema(owner, use_ema, ema_momentum, ema_overwrite_frequency)
        self._exclude_ids, self._exclude_pattern = set(), None
        self._multipliers = None     # one per weight once built
        self.learning_rate_multipliers = learning_rate_multipliers
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a string or None, got {name!r}")
        self.name = name if name is not None else owner.lower()
        self.iterations = 0
        self._backend = None
        self._shapes = None          # shape of each weight given to build()
        self._state = None           # slot name -> list of state tensors, one per weight
        self._pending_state = None   # set_state() before build(): applied by build()

    def _set_ema(self, owner, use_ema, ema_momentum, ema_overwrite_frequency):
        if not isinstance(use_ema, bool):
            raise TypeError(f"{owner}: use_ema must be a bool, got {use_ema!r}")
        self.use_ema = use_ema
        self.ema_momentum = _number(ema_momentum, "ema_momentum", owner, low=0.0, high=1.0,
                                    high_inclusive=True)
        if ema_overwrite_frequency is not None and (
                isinstance(ema_overwrite_frequency, bool) or not isinstance(ema_overwrite_frequency, int)
                or ema_overwrite_frequency < 1):
            raise ValueError(f"{owner}: ema_overwrite_frequency must be an integer >= 1 or None, "
                             f"got {ema_overwrite_frequency!r}")
        self.ema_overwrite_frequency = ema_overwrite_frequency

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Keras's exclusion: no weight decay for the weights in var_list (backend tensors or
        layer Weights) nor for those whose path ("layer_name/weight_name") matches one of the
        regular expressions var_names (re.search). Only before build()."""
        if self.built:
            raise ValueError(f"{type(self).__name__} '{self.name}': exclude_from_weight_decay() can "
                             f"only be configured before the optimizer is built")
        self._exclude_ids = {id(v.value) if hasattr(v, "value") else id(v) for v in (var_list or ())}
        names = list(var_names or ())
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"{type(self).__name__}.exclude_from_weight_decay: var_names must be "
                                f"strings (regular expressions), got {name!r}")
        self._exclude_pattern = re.compile("|".join(sorted(set(names)))) if names else None

    def _uses_weight_decay(self, weight, name):
        if id(weight) in self._exclude_ids:
            return False
        return not (self._exclude_pattern is not None and name is not None
                    and self._exclude_pattern.search(name) is not None)

    # ------------------------------------------ per-weight learning-rate multipliers
    @property
    def learning_rate_multipliers(self):
        """{regular expression: multiplier} (a copy), or None: a weight whose path ("layer/kernel")
        the first matching expression (re.search, in the mapping's order) names steps at
        learning_rate * multiplier; 0 freezes it (no step, no decay). Caffe's lr_mult."""
        return None if self._multiplier_table is None else dict(self._multiplier_table)

    @learning_rate_multipliers.setter
    def learning_rate_multipliers(self, mapping):
        owner = f"{type(self).__name__}: learning_rate_multipliers"
        if mapping is not None and not hasattr(mapping, "items"):
            raise TypeError(f"{owner} must be a dict {{regular expression: multiplier}} or None, "
                            f"got {type(mapping).__name__}")
        table = None
        if mapping is not None:
            table = {}
            for pattern, value in mapping.items():
                if not isinstance(pattern, str):
                    raise TypeError(f"{owner}: keys must be strings (regular expressions matched "
                                    f"against 'layer/weight' paths), got {pattern!r}")
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"{owner}: {pattern!r} is not a regular expression: {exc}") from None
                table[pattern] = _number(value, f"learning_rate_multipliers[{pattern!r}]",
                                         type(self).__name__, low=0.0)
        self._multiplier_table = table
        if getattr(self, "_state", None) is not None:   # built: takes effect at the next step
            self._multipliers = self._resolve_multipliers(self._weight_paths)

    def _resolve_multipliers(self, paths):
        table = self._multiplier_table or {}
        found = []
        for path in paths:
            matches = [m for pattern, m in table.items() if path is not None and re.search(pattern, path)]
            found.append(matches[0] if matches else 1.0)
        return found

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

    def build(self, backend, weights, names=None):
        """Create the state tensors for `weights` (a list of backend float tensors); names are
        their paths ("layer/kernel") for exclude_from_weight_decay(var_names=)."""
        if self.built:
            raise RuntimeError(f"{type(self).__name__} '{self.name}' is already built for "
                               f"{len(self._shapes)} weights; build() is called once")
        self._backend = backend
        weights = list(weights)
        names = list(names) if names is not None else [None] * len(weights)
        if len(names) != len(weights):
            raise ValueError(f"{type(self).__name__} '{self.name}'.build: {len(names)} names for "
                             f"{len(weights)} weights")
        self._shapes = [tuple(backend.shape(w)) for w in weights]
        self._weights = weights                                        # for apply()
        self._positions = {id(w): i for i, w in enumerate(weights)}
        self._weight_paths = names
        self._decays = [self._weight_decay() if self._uses_weight_decay(w, name) else 0.0
                        for w, name in zip(weights, names)]
        self._multipliers = self._resolve_multipliers(names)
        self._state = {slot: [self._create_slot(backend, slot, self._slot_shape(slot, index, shape))
                              for index, shape in enumerate(self._shapes)]
                       for slot in self._active_slots()}
        # The same tensors per weight, so that a step does no look-ups (set_state copies into them).
        self._state_of_weight = [{slot: tensors[i] for slot, tensors in self._state.items()}
                                 for i in range(len(self._shapes))]
        if self._pending_state is not None:
            pending, self._pending_state = self._pending_state, None
            self.set_state(backend, pending)

    def _active_slots(self):
        return self._slots + self._ema_slot()

    def _ema_slot(self):
        """The moving average of each weight (Keras's "average" variables) when use_ema."""
        return ("average",) if self.use_ema else ()

    def _create_slot(self, backend, slot, shape):
        initial = self._initial_slot_value(slot)
        if initial == 0.0:
            return backend.zeros(shape)
        tensor = backend.empty(shape)
        backend.fill(tensor, initial)
        return tensor

    def _slot_shape(self, slot, index, shape):
        """The shape of state `slot` of weight `index` of `shape` (the weight's; Adafactor's
        factored second moments and Muon's unused Adam slots differ)."""
        return shape

    def _initial_slot_value(self, slot):
        """The value a state slot starts from (Adagrad's and Ftrl's accumulators differ)."""
        return 0.0

    # ---------------------------------------------------------------- step
    def apply_gradients(self, grads_and_vars):
        """Clip the gradients in place (global_clipnorm over all of them; or clipvalue, then
        clipnorm per tensor), update every weight in place with the fused backend op (weight
        decay included), update the moving averages (use_ema), then count the step."""
        grads_and_vars = list(grads_and_vars)
        if grads_and_vars and all(hasattr(v, "assign") for _, v in grads_and_vars):
            # Keras's apply_gradients(zip(grads, variables)): minidl Weights, not backend tensors
            self.apply([g for g, _ in grads_and_vars], [v for _, v in grads_and_vars])
            return
        if not self.built:
            raise RuntimeError(f"{type(self).__name__} '{self.name}': call build(backend, weights) "
                               f"before apply_gradients")
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
        if self.global_clipnorm is not None:
            backend.clip_by_global_norm([grad for grad, _ in grads_and_vars], self.global_clipnorm)
        for index, (grad, weight) in enumerate(grads_and_vars):
            if self.clipvalue is not None:
                backend.clip_by_value(grad, self.clipvalue)
            if self.clipnorm is not None:
                backend.clip_by_norm(grad, self.clipnorm)
            multiplier = self._multipliers[index]
            if multiplier == 1.0:
                self._update(backend, weight, grad, self._state_of_weight[index], lr, self._decays[index])
            elif multiplier:
                # The gradient step scales, the decoupled decay (lr * weight_decay) does not:
                # airbench's bias_scaler. Same fused op, so no extra pass.
                self._update(backend, weight, grad, self._state_of_weight[index], lr * multiplier,
                             self._decays[index] / multiplier)
        if self.use_ema:
            self._update_moving_average(backend, [weight for _, weight in grads_and_vars])
        self.iterations += 1

    def apply(self, grads, trainable_variables):
        """Keras 3's optimizer.apply(grads, trainable_variables), for a train_step of your
        own: one gradient (a minidl Tensor, e.g. from GradientTape.gradient) per weight, in any
        order. An optimizer not built yet (a GAN's second optimizer) is built for these
        weights; a built one updates the weights given (a subset of those it was built for
        leaves the others, and their optimizer state, as they are), as Keras's does. A None
        gradient leaves its weight as it is, with one warning naming the weights."""
        owner = f"{type(self).__name__} {self.name!r}.apply"
        grads, variables = list(grads), list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(f"{owner}: {len(grads)} gradients for {len(variables)} weights")
        if not self.built:
            backend = getattr(variables[0], "backend", None) if variables else None
            if backend is None:
                raise RuntimeError(f"{owner}: the optimizer is not built and its weights are not on "
                                   "a backend yet; compile the model (or call it once) first")
            self.build(backend, [getattr(v, "value", v) for v in variables],
                       [getattr(v, "path", None) for v in variables])
        pairs = [None] * len(self._shapes)
        missing = []
        for g, v in zip(grads, variables):
            position = self._positions.get(id(getattr(v, "value", v)))
            if position is None:
                raise ValueError(f"{owner}: {getattr(v, 'name', v)!r} is not one of the "
                                 f"{len(self._shapes)} weights the optimizer was built for")
            if g is None:
                missing.append(getattr(v, "path", None) or getattr(v, "name", str(v)))
                pairs[position] = None
                continue
            pairs[position] = (getattr(g, "value", g), getattr(v, "value", v))
        if missing and not getattr(self, "_warned_missing", False):
            self._warned_missing = True
            warnings.warn(f"{owner}: gradients do not exist for {missing} when minimizing the "
                          "loss; they are left as they are", stacklevel=2)
        untouched = [i for i, p in enumerate(pairs) if p is None]
        if not untouched:
            self.apply_gradients(pairs)
            return
        # The fused step updates every weight it was built for: the ones not given run with a
        # zero gradient, then get back their values and state (momentum would move them).
        kept = [(tensor, self._scratch(("kept", id(tensor)), tensor, copy=True))
                for i in untouched for tensor in self._kept_tensors(i)]
        for i in untouched:
            weight = self._weights[i]
            pairs[i] = (self._scratch(("zero", id(weight)), weight), weight)
        self.apply_gradients(pairs)
        for tensor, copy in kept:
            self._backend.copy(tensor, copy)

    def _kept_tensors(self, index):
        """The weight at build position `index` and its optimizer state: what a step with a
        zero gradient may move and apply() puts back."""
        return [self._weights[index]] + list(self._state_of_weight[index].values())

    def _scratch(self, key, like, copy=False):
        """A tensor shaped as `like`, made once per key and reused by later apply() calls:
        zeros, or (copy=True) a fresh copy of `like`'s values."""
        scratch = self.__dict__.setdefault("_apply_scratch", {})
        backend = self._backend
        if key not in scratch:
            scratch[key] = backend.zeros(backend.shape(like))
        if copy:
            backend.copy(scratch[key], like)
        return scratch[key]

    def _update_moving_average(self, backend, weights):
        """Keras: average = m * average + (1 - m) * w, m = 0 at the first step (a copy), then
        every ema_overwrite_frequency steps the weights take the averages."""
        momentum = self.ema_momentum if self.iterations != 0 else 0.0
        averages = self._state["average"]
        for average, weight in zip(averages, weights):
            backend.ema_update(average, weight, momentum)
        if self.ema_overwrite_frequency and (self.iterations + 1) % self.ema_overwrite_frequency == 0:
            for average, weight in zip(averages, weights):
                backend.copy(weight, average)

    def finalize_variable_values(self, weights):
        """The end of fit, as Keras: with use_ema the weights take their moving averages."""
        if not (self.use_ema and self.built and self.iterations > 0):
            return
        weights = list(weights)
        if len(weights) != len(self._shapes):
            raise ValueError(f"{type(self).__name__} '{self.name}': finalize_variable_values got "
                             f"{len(weights)} weights, the optimizer was built for {len(self._shapes)}")
        for average, weight in zip(self._state["average"], weights):
            self._backend.copy(weight, average)

    def _weight_decay(self):
        return 0.0 if self.weight_decay is None else self.weight_decay

    def _update(self, backend, weight, grad, state, lr, weight_decay):
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
        return {f"{slot}/{index}": self._slot_shape(slot, index, shape) for slot in self._state
                for index, shape in enumerate(self._shapes)}

    # -------------------------------------------------------------- config
    def get_config(self):
        """The constructor arguments (a schedule as its {"class_name", "config"} dict)."""
        lr = self._learning_rate
        if isinstance(lr, schedules.LearningRateSchedule):
            lr = schedules.serialize(lr)
        config = {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                  "clipnorm": self.clipnorm, "clipvalue": self.clipvalue,
                  "global_clipnorm": self.global_clipnorm, "use_ema": self.use_ema,
                  "ema_momentum": self.ema_momentum,
                  "ema_overwrite_frequency": self.ema_overwrite_frequency}
        if self.decay:  # only when given, so that configs without it stay as Keras 3 writes them
            config["decay"] = self.decay
        if self._multiplier_table is not None:
            config["learning_rate_multipliers"] = dict(self._multiplier_table)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"])
        return cls(**config)

    def __repr__(self):
        return f"{type(self).__name__}({self.get_config()})"


