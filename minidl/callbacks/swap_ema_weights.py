"""SwapEMAWeights: evaluate and predict with the optimizer's moving averages of the weights
(use_ema=True), then train on with the weights, as Keras's callback.

The swap exchanges each trainable weight with its moving average in place on the backend
(three copies through one scratch tensor per weight), so nothing leaves the device.
"""

from .base import Callback


class SwapEMAWeights(Callback):
    """SwapEMAWeights(swap_on_epoch=False): the averages are in the model during fit's
    validation and the evaluate / predict called with this callback; with swap_on_epoch=True
    also from each epoch's end to the next epoch's start (so that ModelCheckpoint and the
    like after it see them)."""

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        if not isinstance(swap_on_epoch, bool):
            raise TypeError(f"SwapEMAWeights: swap_on_epoch must be True or False, "
                            f"got {swap_on_epoch!r}")
        self.swap_on_epoch = swap_on_epoch
        self._averages_in_model = False
        self._scratch = None

    def _check(self):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not getattr(optimizer, "use_ema", False):
            raise ValueError("SwapEMAWeights must be used when `use_ema=True` is set on the "
                             f"optimizer. Received: use_ema={getattr(optimizer, 'use_ema', None)}")
        return optimizer

    def _swap(self):
        optimizer = self._check()
        if not optimizer.built or optimizer.iterations == 0:
            return False   # no averages yet (nothing trained): nothing to swap
        backend = self.model.backend
        weights = [w.value for w in self.model._trained_weights]
        averages = optimizer._state["average"]
        if self._scratch is None or len(self._scratch) != len(weights):
            self._scratch = [backend.empty(backend.shape(w)) for w in weights]
        for weight, average, scratch in zip(weights, averages, self._scratch):
            backend.copy(scratch, weight)
            backend.copy(weight, average)
            backend.copy(average, scratch)
        return True

    def _swap_in(self):
        if not self._averages_in_model and self._swap():
            self._averages_in_model = True

    def _swap_out(self):
        if self._averages_in_model:
            self._swap()
            self._averages_in_model = False

    def on_train_begin(self, logs=None):
        self._check()

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch:
            self._swap_out()

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch:
            self._swap_in()
            if self._averages_in_model and epoch == self.params.get("epochs", 0) - 1:
                # fit's end (before on_train_end) copies the averages into the weights:
                # both must hold the averages then, as Keras's _finalize_ema_values does
                backend = self.model.backend
                for weight, average in zip(self.model._trained_weights,
                                           self.model.optimizer._state["average"]):
                    backend.copy(average, weight.value)
                self._averages_in_model = False

    def on_train_end(self, logs=None):
        self._swap_out()

    def on_test_begin(self, logs=None):
        self._swap_in()

    def on_test_end(self, logs=None):
        self._swap_out()

    def on_predict_begin(self, logs=None):
        self._swap_in()

    def on_predict_end(self, logs=None):
        self._swap_out()
