"""LearningRateScheduler: set the learning rate at the start of each epoch."""

import inspect
import math
import numbers

from .base import Callback


def _takes_two_arguments(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return variadic or len(positional) >= 2


class LearningRateScheduler(Callback):
    """At the start of each epoch set the optimizer's learning rate to schedule(epoch, lr)
    (or schedule(epoch) for a one-argument function); epoch is 0-based."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler: schedule must be callable, got {schedule!r}")
        self.schedule = schedule
        self.verbose = verbose
        self._two_arguments = _takes_two_arguments(schedule)

    def _current_lr(self):
        return float(self.model.optimizer.current_learning_rate())

    def on_epoch_begin(self, epoch, logs=None):
        if self._two_arguments:
            lr = self.schedule(epoch, self._current_lr())
        else:
            lr = self.schedule(epoch)
        if (isinstance(lr, bool) or not isinstance(lr, numbers.Real)
                or not math.isfinite(float(lr))):
            raise ValueError(f"LearningRateScheduler: the schedule must return a finite float, got "
                             f"{lr!r} for epoch {epoch}")
        self.model.optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(lr)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = self._current_lr()
