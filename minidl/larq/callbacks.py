"""larq.callbacks.HyperparameterScheduler: set any optimizer hyperparameter from a schedule at
the start of each epoch (or step), as larq's does for Bop's gamma or an optimizer's rate."""

import math
import numbers

from ..callbacks.base import Callback


class HyperparameterScheduler(Callback):
    """optimizer.<hyperparameter> = schedule(t) (or schedule(t, current value)) with t the
    0-based epoch (update_freq="epoch") or the optimizer's iteration count ("step"); logged
    under log_name (default: the hyperparameter) at the end of each epoch."""

    def __init__(self, schedule, hyperparameter, optimizer=None, update_freq="epoch", verbose=0, log_name=None):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"HyperparameterScheduler: schedule must be callable, got {schedule!r}")
        if update_freq not in ("epoch", "step"):
            raise ValueError("HyperparameterScheduler.update_freq can only be 'step' or 'epoch'. "
                             f"Received value '{update_freq}'")
        self.schedule = schedule
        self.hyperparameter = hyperparameter
        self.optimizer = optimizer
        self.update_freq = update_freq
        self.verbose = verbose
        self.log_name = log_name or hyperparameter

    def set_model(self, model):
        super().set_model(model)
        if self.optimizer is None:
            self.optimizer = model.optimizer
        if not hasattr(self.optimizer, self.hyperparameter):
            raise ValueError(f'Optimizer must have a "{self.hyperparameter}" attribute.')

    def _value(self):
        value = getattr(self.optimizer, self.hyperparameter)
        return float(value() if callable(value) else value)

    def set_hyperparameter(self, t):
        try:
            value = self.schedule(t, self._value())
        except TypeError:                      # a one-argument schedule, larq's old API
            value = self.schedule(t)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            raise ValueError(f"HyperparameterScheduler: the schedule must return a finite number, got "
                             f"{value!r} for {self.update_freq} {t}")
        setattr(self.optimizer, self.hyperparameter, float(value))
        return float(value)

    def on_train_batch_begin(self, batch, logs=None):
        if self.update_freq != "step":
            return
        step = self.optimizer.iterations
        value = self.set_hyperparameter(step)
        if self.verbose > 0:
            print(f"Batch {step}: {self.log_name} is now {value}.")

    def on_epoch_begin(self, epoch, logs=None):
        if self.update_freq != "epoch":
            return
        value = self.set_hyperparameter(epoch)
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: {self.log_name} is now {value}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs[self.log_name] = self._value()


__all__ = ["HyperparameterScheduler"]
