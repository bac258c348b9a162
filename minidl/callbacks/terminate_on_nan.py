"""TerminateOnNaN: stop training at the first batch whose loss is not finite."""

import math

from .base import Callback


class TerminateOnNaN(Callback):
    """Stop training at the first batch whose loss is NaN or infinite."""

    def __init__(self):
        super().__init__()
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        # One read per batch: `in` on a lazy mapping would fetch the value a second time.
        loss = logs.get("loss") if logs else None
        if loss is None:
            return
        loss = float(loss)
        if not math.isfinite(loss):
            print(f"Batch {batch}, epoch {self._epoch}: invalid loss {loss}, terminating training")
            self.model.stop_training = True
