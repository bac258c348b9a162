"""EarlyStopping: stop training once the monitored value stops improving."""

from .arguments import count_arg, float_arg
from .monitor import MonitorCallback


class EarlyStopping(MonitorCallback):
    """Stop training when the monitored value has not improved by more than min_delta for
    `patience` epochs (Keras 3 semantics; epochs before start_from_epoch are ignored).
    With a baseline, patience restarts only on epochs that also beat the baseline. With
    restore_best_weights the weights of the best epoch are put back at the end of
    training."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = count_arg(patience, "patience", "EarlyStopping")
        self.verbose = verbose
        self.baseline = None if baseline is None else float_arg(baseline, "baseline",
                                                                   "EarlyStopping")
        self.restore_best_weights = bool(restore_best_weights)
        self.start_from_epoch = count_arg(start_from_epoch, "start_from_epoch", "EarlyStopping")
        self._reset()

    def _reset(self):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = self._initial_best()
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        current = self._monitored_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # Until something better shows up, the first monitored epoch is the best.
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            # Patience restarts only when the baseline is beaten too.
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)
