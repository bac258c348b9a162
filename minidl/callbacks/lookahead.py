"""Lookahead: slow weights, an average of the weights pulled back into them periodically.

Every `sync_period` optimizer steps, slow = decay * slow + (1 - decay) * weights, then
weights = slow (Zhang et al. 2019's lookahead with slow step 1 - decay; airbench's
LookaheadState). At the end of training the weights take the slow values. It covers every
weight of the model, the non-trainable ones included (BatchNormalization's moving
statistics), as airbench does, and runs on the backend: two fused ops per weight per sync.
"""

import numbers

import numpy as np

from .base import Callback


class Lookahead(Callback):
    """sync_period: optimizer steps between syncs. decay: a float in [0, 1], or a function of
    the optimizer's step count (after the step) giving one, e.g. airbench's
    `lambda step: 0.95 ** 5 * (step / total_steps) ** 3`. pull_back_at_end: the weights take
    the slow values when fit ends.

    The slow weights start as a copy of the weights at the first fit and persist across fits
    of the same callback; get_state()/set_state() move them (host arrays) to a later run."""

    def __init__(self, sync_period=5, decay=0.5, pull_back_at_end=True):
        super().__init__()
        if isinstance(sync_period, bool) or not isinstance(sync_period, numbers.Integral) or sync_period < 1:
            raise ValueError(f"Lookahead: sync_period must be an integer >= 1, got {sync_period!r}")
        if not callable(decay):
            self._check_decay(decay)
        self.sync_period, self.decay, self.pull_back_at_end = int(sync_period), decay, bool(pull_back_at_end)
        self._slow = None        # backend tensors, one per model weight
        self._pending = None     # host arrays from set_state() before the first fit

    @staticmethod
    def _check_decay(value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
            raise ValueError(f"Lookahead: decay must be a number in [0, 1] (or a function of the "
                             f"step returning one), got {value!r}")
        return float(value)

    def _weights(self):
        return [w for w in self.model.weights if w.value is not None]

    def on_train_begin(self, logs=None):
        backend, weights = self.model.backend, self._weights()
        shapes = [tuple(w.shape) for w in weights]
        if self._slow is not None and [tuple(backend.shape(s)) for s in self._slow] == shapes:
            return
        if self._slow is not None:
            raise ValueError(f"Lookahead: its slow weights have shapes "
                             f"{[tuple(backend.shape(s)) for s in self._slow]}, the model's "
                             f"weights {shapes}: one Lookahead per model")
        self._slow = [backend.empty(shape) for shape in shapes]
        pending, self._pending = self._pending, None
        for slow, weight, index in zip(self._slow, weights, range(len(weights))):
            if pending is None:
                backend.copy(slow, weight.value)
            else:
                if pending[index].shape != tuple(weight.shape):
                    self._slow = None
                    raise ValueError(f"Lookahead.set_state: array {index} has shape "
                                     f"{pending[index].shape}, weight {weight.name!r} {tuple(weight.shape)}")
                backend.copy_from_host(slow, pending[index])

    def on_train_batch_end(self, batch, logs=None):
        step = self.model.optimizer.iterations
        if step % self.sync_period == 0:
            decay = self._check_decay(self.decay(step)) if callable(self.decay) else self.decay
            self.sync(decay)

    def sync(self, decay):
        """slow = decay * slow + (1 - decay) * weights; weights = slow."""
        backend = self.model.backend
        for slow, weight in zip(self._slow, self._weights()):
            backend.ema_update(slow, weight.value, decay)
            backend.copy(weight.value, slow)

    def on_train_end(self, logs=None):
        if self.pull_back_at_end and self._slow is not None:
            self.sync(1.0)

    def get_state(self):
        """The slow weights as host arrays (a list, in model.weights order), or None before a fit."""
        if self._slow is None:
            return None if self._pending is None else [a.copy() for a in self._pending]
        return [self.model.backend.to_numpy(s) for s in self._slow]

    def set_state(self, arrays):
        """Slow weights from get_state(); used at the next fit's start (or at once if built)."""
        arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in arrays]
        if not all(np.all(np.isfinite(a)) for a in arrays):
            raise ValueError("Lookahead.set_state: the slow weights must be finite")
        if self._slow is None:
            self._pending = arrays
            return
        if len(arrays) != len(self._slow):
            raise ValueError(f"Lookahead.set_state: {len(arrays)} arrays for {len(self._slow)} slow weights")
        backend = self.model.backend
        for index, (slow, array) in enumerate(zip(self._slow, arrays)):
            if tuple(backend.shape(slow)) != array.shape:
                raise ValueError(f"Lookahead.set_state: array {index} has shape {array.shape}, "
                                 f"its slow weight {tuple(backend.shape(slow))}")
            backend.copy_from_host(slow, array)
