"""Lookahead as an optimizer: slow weights kept in the optimizer state, so model files save
them and a resumed run continues exactly (callbacks.Lookahead keeps them in the callback,
which a file does not hold).

Every `sync_period` steps of the inner optimizer, slow = decay * slow + (1 - decay) * weights,
then weights = slow (Zhang et al. 2019's lookahead with slow step 1 - decay; airbench's
LookaheadState). It covers the weights the optimizer trains and, in a compiled model, the
model's other weights too (BatchNormalization's moving statistics; model.compile hands them
over), as airbench's covers the whole state_dict. The slow copies of the trained weights take
their values at the first step (iterations == 0), so weights set between compile and fit
count; those of the other weights are taken at compile (a forward pass moves them before
the first step). When fit
ends the weights take the slow values (pull_back_at_end). Two backend ops per weight per sync.
"""

import numbers

import numpy as np

from .. import schedules
from .wrapping import OptimizerWrapper
from .registry_hooks import REGISTRY


class PowerRamp(schedules.LearningRateSchedule):
    """final_value * min(step / ramp_steps, 1) ** power: airbench's lookahead decay
    (0.95 ** 5 * (step / total_steps) ** 3), usable wherever a schedule is."""

    def __init__(self, final_value, ramp_steps, power=1.0):
        for argument, value in (("final_value", final_value), ("power", power)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
                raise ValueError(f"PowerRamp: {argument} must be a finite number, got {value!r}")
        if isinstance(ramp_steps, bool) or not isinstance(ramp_steps, numbers.Integral) or ramp_steps < 1:
            raise ValueError(f"PowerRamp: ramp_steps must be an integer >= 1, got {ramp_steps!r}")
        self.final_value, self.ramp_steps, self.power = float(final_value), int(ramp_steps), float(power)

    def __call__(self, step):
        return self.final_value * min(float(step) / self.ramp_steps, 1.0) ** self.power

    def get_config(self):
        return {"final_value": self.final_value, "ramp_steps": self.ramp_steps, "power": self.power}


class Lookahead(OptimizerWrapper):
    """Lookahead(optimizer, sync_period=5, decay=0.5, pull_back_at_end=True).

    decay: a number in [0, 1], or a schedules.LearningRateSchedule evaluated at the inner
    optimizer's step count after the step (PowerRamp for airbench's). Slow weights are state
    "lookahead/slow/<i>" (the trained weights, in build order) and "lookahead/other/<j>" (the
    model's other weights)."""

    state_prefix = "lookahead"

    def __init__(self, optimizer, sync_period=5, decay=0.5, pull_back_at_end=True, name=None):
        super().__init__(optimizer, name)
        if isinstance(sync_period, bool) or not isinstance(sync_period, numbers.Integral) or sync_period < 1:
            raise ValueError(f"Lookahead: sync_period must be an integer >= 1, got {sync_period!r}")
        if isinstance(decay, dict):
            decay = schedules.deserialize(decay, {"PowerRamp": PowerRamp})
        if not isinstance(decay, schedules.LearningRateSchedule):
            decay = _check_decay(decay)
        if not isinstance(pull_back_at_end, bool):
            raise TypeError(f"Lookahead: pull_back_at_end must be a bool, got {pull_back_at_end!r}")
        self.sync_period, self.decay, self.pull_back_at_end = int(sync_period), decay, pull_back_at_end
        self._slow = self._others = None   # backend tensors: trained weights', other weights'
        self._weights, self._other_weights = [], []
        self._pending_others = None         # their state, from set_state() before compile

    def _build_own(self, backend, weights):
        self._slow = [backend.empty(backend.shape(w)) for w in weights]
        for slow, weight in zip(self._slow, weights):
            backend.copy(slow, weight)

    def track_non_trainable(self, weights):
        """The model's other weights (from model.compile): synced and saved as well."""
        super().track_non_trainable(weights)
        backend, weights = self._backend, list(weights)
        if [id(w) for w in weights] == [id(w) for w in self._other_weights]:
            return   # compiled again with this optimizer: the slow weights go on
        self._other_weights = weights   # Weights: a layer may swap the tensor behind one
        self._others = [backend.empty(backend.shape(w.value)) for w in self._other_weights]
        if self._pending_others is not None:
            pending, self._pending_others = self._pending_others, None
            self._set_own(backend, pending)
        else:
            for slow, weight in zip(self._others, self._other_weights):
                backend.copy(slow, weight.value)

    def _pairs(self):
        """(slow, weight tensor) of every weight covered, the tensors read now."""
        return list(zip(self._slow, self._weights)) + \
            [(slow, w.value) for slow, w in zip(self._others or [], self._other_weights)]

    def apply_gradients(self, grads_and_vars):
        grads_and_vars = list(grads_and_vars)
        backend = self.inner_optimizer._backend
        if self.inner_optimizer.iterations == 0 and self._slow is not None:
            # the trained weights training starts from (the others were copied at compile:
            # the first forward pass has already moved the moving statistics)
            for slow, weight in zip(self._slow, self._weights):
                backend.copy(slow, weight)
        before = self.inner_optimizer.iterations
        self.inner_optimizer.apply_gradients(grads_and_vars)
        step = self.inner_optimizer.iterations
        if step != before and step % self.sync_period == 0:   # (a LossScaleOptimizer may skip)
            decay = self.decay(step) if callable(self.decay) else self.decay
            self.sync(_check_decay(decay))

    def sync(self, decay):
        """slow = decay * slow + (1 - decay) * weights; weights = slow, on the backend."""
        backend = self.inner_optimizer._backend
        for slow, weight in self._pairs():
            backend.ema_update(slow, weight, decay)
            backend.copy(weight, slow)

    def finalize_variable_values(self, weights):
        super().finalize_variable_values(weights)
        if self.pull_back_at_end and self._slow is not None and self.iterations > 0:
            self.sync(1.0)

    # ------------------------------------------------------------- state
    def _own_shapes(self):
        if self._slow is None:
            return {}
        shapes = {f"slow/{i}": tuple(self._backend.shape(s)) for i, s in enumerate(self._slow)}
        shapes.update({f"other/{j}": tuple(self._backend.shape(s)) for j, s in enumerate(self._others or [])})
        return shapes

    def _get_own(self, backend):
        own = {f"slow/{i}": backend.to_numpy(s) for i, s in enumerate(self._slow)}
        own.update({f"other/{j}": backend.to_numpy(s) for j, s in enumerate(self._others or [])})
        if self._pending_others is not None:
            own.update(self._pending_others)
        return own

    def _set_own(self, backend, arrays):
        dtype = getattr(backend, "dtype", "float32")
        for key, array in arrays.items():
            kind, index = key.split("/")
            if kind == "other" and self._others is None:   # before compile tracked them
                self._pending_others = dict(self._pending_others or {}, **{key: array})
                continue
            tensors = self._slow if kind == "slow" else self._others
            backend.copy_from_host(tensors[int(index)], np.ascontiguousarray(array, dtype=dtype))

    # ------------------------------------------------------------ config
    def get_config(self):
        decay = schedules.serialize(self.decay) if isinstance(self.decay, schedules.LearningRateSchedule) \
            else self.decay
        return {"name": self.name, "optimizer": REGISTRY["serialize"](self.inner_optimizer),
                "sync_period": self.sync_period, "decay": decay, "pull_back_at_end": self.pull_back_at_end}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["optimizer"] = cls._inner_from_config(config, "optimizer")
        return cls(**config)


def _check_decay(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"Lookahead: decay must be a number in [0, 1] (or a schedule giving one), "
                         f"got {value!r}")
    return float(value)
