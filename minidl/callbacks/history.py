"""History: the epoch-end logs of a fit, which fit() returns."""

from .base import Callback


class History(Callback):
    """Records the epoch-end logs: history[name] is a list with one value per epoch."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self
