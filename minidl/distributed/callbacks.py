"""Horovod's Keras callbacks for minidl: BroadcastGlobalVariablesCallback,
MetricAverageCallback, LearningRateWarmupCallback and LearningRateScheduleCallback."""

import numbers

import numpy as np

from ..callbacks.base import Callback
from . import collectives, world


class BroadcastGlobalVariablesCallback(Callback):
    """At the start of training, set every rank's weights (trainable and not) and optimizer
    state to root_rank's, so that all ranks start from the same model. (Horovod broadcasts
    after the first batch because TensorFlow creates optimizer slots lazily; minidl's exist
    from compile on, so the first step already starts equal.)"""

    def __init__(self, root_rank=0, device=""):
        super().__init__()
        self.root_rank = root_rank
        self.broadcast_done = False

    def on_train_begin(self, logs=None):
        if self.broadcast_done:
            return
        model = self.model
        collectives.broadcast_variables(model.weights, self.root_rank)
        optimizer = model.optimizer
        if optimizer is not None and optimizer.built:
            backend = model.backend
            state = optimizer.get_state(backend)
            state = {k: collectives.broadcast(np.asarray(v), self.root_rank, name=k)
                     for k, v in sorted(state.items())}
            optimizer.set_state(backend, state)
        self.broadcast_done = True


class MetricAverageCallback(Callback):
    """At each epoch's end, replace every value in logs by its mean over the ranks (each rank
    measured its own shard). Put it before callbacks that read the logs (ModelCheckpoint,
    EarlyStopping, ReduceLROnPlateau, CSVLogger)."""

    def __init__(self, device=""):
        super().__init__()

    def on_epoch_end(self, epoch, logs=None):
        if logs is None or world.world_size() == 1:
            return
        names = sorted(k for k, v in logs.items() if isinstance(v, numbers.Real))
        # each value is the mean over one rank's shard; equal shards make their mean the
        # mean over all samples (float32, as Horovod's allreduce of the metric tensors)
        values = np.array([float(logs[k]) for k in names], dtype=np.float32)
        reduced = collectives.allreduce(values, op=collectives.Average)
        for name, value in zip(names, reduced):
            logs[name] = float(value)


def _momentum_holder(optimizer):
    """The optimizer if it has an SGD-style momentum attribute, else None."""
    return optimizer if isinstance(getattr(optimizer, "momentum", None), float) else None


class LearningRateScheduleCallback(Callback):
    """Between start_epoch and end_epoch set the learning rate to initial_lr * multiplier,
    multiplier a number or a function of the epoch (fractional within an epoch when
    staircase=False; then it is set before every batch). momentum_correction scales an SGD
    momentum by new_lr / old_lr for the batch where the rate changes (Goyal et al., 2017)."""

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None, verbose=0):
        super().__init__()
        owner = type(self).__name__
        if isinstance(initial_lr, bool) or not isinstance(initial_lr, numbers.Real) or initial_lr <= 0:
            raise ValueError(f"{owner}: initial_lr must be a positive number, got {initial_lr!r}")
        if not callable(multiplier) and (isinstance(multiplier, bool)
                                         or not isinstance(multiplier, numbers.Real)):
            raise ValueError(f"{owner}: multiplier must be a number or a function of the epoch, "
                             f"got {multiplier!r}")
        self.initial_lr = float(initial_lr)
        self.multiplier = multiplier if callable(multiplier) else (lambda epoch, m=float(multiplier): m)
        self.start_epoch, self.end_epoch = start_epoch, end_epoch
        self.staircase = staircase
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.verbose = verbose
        self._epoch = 0
        self._restore_momentum = None

    def _active(self, epoch):
        return epoch >= self.start_epoch and (self.end_epoch is None or epoch < self.end_epoch)

    def _steps(self):
        return self.steps_per_epoch or self.params.get("steps") or 1

    def _set_lr(self, epoch):
        optimizer = self.model.optimizer
        old = float(optimizer.current_learning_rate())
        new = self.initial_lr * float(self.multiplier(epoch))
        optimizer.learning_rate = new
        holder = _momentum_holder(optimizer) if self.momentum_correction else None
        if holder is not None and old > 0 and new != old:
            self._restore_momentum = holder.momentum
            holder.momentum = holder.momentum * new / old

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        if self.staircase and self._active(epoch):
            self._set_lr(epoch)

    def on_train_batch_begin(self, batch, logs=None):
        if not self.staircase and self._active(self._epoch):
            self._set_lr(self._epoch + batch / self._steps())

    def on_train_batch_end(self, batch, logs=None):
        if self._restore_momentum is not None:
            self.model.optimizer.momentum = self._restore_momentum
            self._restore_momentum = None

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.current_learning_rate())


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Ramp the learning rate from initial_lr / size() to initial_lr over warmup_epochs,
    batch by batch (Goyal et al.'s gradual warm-up, Horovod's formula:
    lr = initial_lr / size * (epoch * (size - 1) / warmup_epochs + 1), with epoch the fraction
    of training done after the batch, so the last warm-up batch runs at initial_lr)."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True, steps_per_epoch=None,
                 verbose=0):
        if isinstance(warmup_epochs, bool) or not isinstance(warmup_epochs, numbers.Real) \
                or warmup_epochs <= 0:
            raise ValueError(f"LearningRateWarmupCallback: warmup_epochs must be positive, got "
                             f"{warmup_epochs!r}")

        def multiplier(epoch):
            epoch += 1.0 / self._steps()
            n = world.world_size()
            return 1.0 / n * (epoch * (n - 1) / warmup_epochs + 1)
        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs,
                         staircase=False, momentum_correction=momentum_correction,
                         steps_per_epoch=steps_per_epoch, verbose=verbose)
        self.warmup_epochs = warmup_epochs

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if epoch == self.warmup_epochs - 1 and self.verbose > 0 and world.is_primary():
            print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to "
                  f"{self.model.optimizer.current_learning_rate():g}.")
