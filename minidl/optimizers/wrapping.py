"""OptimizerWrapper: the common part of optimizers that hold another one (Lookahead,
LossScaleOptimizer).

A wrapper has no hyperparameters of its own beyond its config: the learning rate, its
multipliers, the step count and the per-weight slots are the inner optimizer's (read and set
through the wrapper, as Keras's LossScaleOptimizer exposes learning_rate and iterations).
Its own state joins the inner optimizer's in get_state / set_state / state_shapes under keys
"<state_prefix>/<name>", so model files save and restore both.
"""

from .base import Optimizer
from .registry_hooks import REGISTRY


class OptimizerWrapper(Optimizer):
    """Subclasses set state_prefix and implement _own_shapes(), _get_own(backend),
    _set_own(backend, arrays) and apply_gradients()."""

    state_prefix = None

    def __init__(self, inner_optimizer, name=None):
        # Optimizer.__init__ is not called: every hyperparameter is the inner optimizer's.
        owner = type(self).__name__
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"{owner}: inner_optimizer must be a minidl Optimizer, got "
                            f"{type(inner_optimizer).__name__}")
        if isinstance(inner_optimizer, type(self)):
            raise ValueError(f"{owner}: the inner optimizer is already a {owner}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a string or None, got {name!r}")
        self.inner_optimizer = inner_optimizer
        self.name = name if name is not None else _snake(owner)
        self._backend = None
        self._pending_own = None   # own state from set_state() before build()

    # ------------------------------------------------- the inner optimizer's
    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    def current_learning_rate(self):
        return self.inner_optimizer.current_learning_rate()

    @property
    def learning_rate_multipliers(self):
        return self.inner_optimizer.learning_rate_multipliers

    @learning_rate_multipliers.setter
    def learning_rate_multipliers(self, mapping):
        self.inner_optimizer.learning_rate_multipliers = mapping

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    @iterations.setter
    def iterations(self, value):
        self.inner_optimizer.iterations = value

    @property
    def built(self):
        return self.inner_optimizer.built

    @property
    def use_ema(self):
        return self.inner_optimizer.use_ema

    # what model.compile, Optimizer.apply and SwapEMAWeights read
    @property
    def _shapes(self):
        return self.inner_optimizer._shapes

    @property
    def _positions(self):
        return self.inner_optimizer._positions

    @property
    def _state(self):
        return self.inner_optimizer._state

    def _kept_tensors(self, index):
        return self.inner_optimizer._kept_tensors(index)

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        self.inner_optimizer.exclude_from_weight_decay(var_list, var_names)

    def build(self, backend, weights, names=None):
        weights = list(weights)
        self.inner_optimizer.build(backend, weights, names)
        self._backend, self._weights = backend, weights
        self._build_own(backend, weights)
        if self._pending_own is not None:
            pending, self._pending_own = self._pending_own, None
            self._set_own(backend, pending)

    def _build_own(self, backend, weights):
        """Create the wrapper's own state for the weights given to build()."""

    def track_non_trainable(self, weights):
        """model.compile hands every optimizer with this method the model's other weights
        (BatchNormalization's moving statistics); a wrapper passes them on."""
        track = getattr(self.inner_optimizer, "track_non_trainable", None)
        if track is not None:
            track(weights)

    def finalize_variable_values(self, weights):
        self.inner_optimizer.finalize_variable_values(weights)

    # --------------------------------------------------------------- state
    def get_state(self, backend):
        state = self.inner_optimizer.get_state(backend)
        if self._pending_own is not None:
            own = self._pending_own
        else:
            own = self._get_own(backend) if self.built else {}
        state.update({f"{self.state_prefix}/{k}": v for k, v in own.items()})
        return state

    def set_state(self, backend, state):
        owner = f"{type(self).__name__} '{self.name}'.set_state"
        if not hasattr(state, "keys"):
            raise ValueError(f"{owner}: expected a dict from get_state(), got {type(state).__name__}")
        prefix = self.state_prefix + "/"
        own = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
        inner = {k: v for k, v in state.items() if not k.startswith(prefix)}
        if not self.built:
            self.inner_optimizer.set_state(backend, inner)
            self._pending_own = own
            return
        expected = self._own_shapes()
        if set(own) != set(expected):
            raise ValueError(f"{owner}: the state does not match: missing "
                             f"{sorted(prefix + k for k in set(expected) - set(own))[:6]}, unexpected "
                             f"{sorted(prefix + k for k in set(own) - set(expected))[:6]}")
        self._check_own(owner, own, expected)
        self.inner_optimizer.set_state(backend, inner)
        self._set_own(backend, own)

    def _check_own(self, owner, own, expected):
        import numpy as np
        for key, shape in expected.items():
            array = np.asarray(own[key])
            if array.shape != shape:
                raise ValueError(f"{owner}: state {self.state_prefix}/{key!r} has shape "
                                 f"{array.shape}, expected {shape}")
            if array.dtype.kind not in "biuf" or not np.all(np.isfinite(array)):
                raise ValueError(f"{owner}: state {self.state_prefix}/{key!r} must be finite numbers")

    def state_shapes(self):
        shapes = dict(self.inner_optimizer.state_shapes())
        shapes.update({f"{self.state_prefix}/{k}": s for k, s in self._own_shapes().items()})
        return shapes

    def _own_shapes(self):
        return {}

    def _get_own(self, backend):
        return {}

    def _set_own(self, backend, arrays):
        pass

    # -------------------------------------------------------------- config
    @classmethod
    def _inner_from_config(cls, config, key):
        value = config.get(key)
        if isinstance(value, dict) and "class_name" in value:
            return REGISTRY["deserialize"](value)
        return value

    def __repr__(self):
        return f"{type(self).__name__}({self.get_config()})"


def _snake(name):
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))
