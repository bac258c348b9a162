"""ReduceLROnPlateau: lower the learning rate once the monitored value stops improving."""

from .arguments import count_arg, float_arg
from .monitor import MonitorCallback


class ReduceLROnPlateau(MonitorCallback):
    """Multiply the learning rate by `factor` (never below min_lr) once the monitored value
    has not improved by more than min_delta for `patience` epochs, then wait `cooldown`
    epochs before counting again."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.factor = float_arg(factor, "factor", "ReduceLROnPlateau")
        if not 0.0 < self.factor < 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be in (0, 1), got {factor!r}")
        self.patience = count_arg(patience, "patience", "ReduceLROnPlateau")
        self.cooldown = count_arg(cooldown, "cooldown", "ReduceLROnPlateau")
        self.verbose = verbose
        self.min_lr = float_arg(min_lr, "min_lr", "ReduceLROnPlateau")
        if self.min_lr < 0:
            raise ValueError(f"ReduceLROnPlateau: min_lr must be >= 0, got {min_lr!r}")
        self._reset()

    def _reset(self):
        self.best = self._initial_best()
        self.wait = 0
        self.cooldown_counter = 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if logs is not None:
            logs["learning_rate"] = float(optimizer.current_learning_rate())
        current = self._monitored_value(logs)
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(optimizer.current_learning_rate())
                if old_lr > self.min_lr:
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        print(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
