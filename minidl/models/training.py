"""fit / evaluate / predict: the training loop, its callbacks and interruption.

Data order is a pure function of the model's seed and the epoch number (arrays), or of
the data iterator's saved state, so a run resumed from a checkpoint sees the same
batches as an uninterrupted one (batch_sources.py). `fit_state` records where training
stands and travels inside every saved model (fit_state.py): a fit resumes inside an
epoch only from such a saved position, and only on data arranged the same way.

Ctrl-C (SIGINT) or SIGTERM during fit() (interrupts.py): the current step finishes,
every callback's on_interrupt runs (each ModelCheckpoint except save_best_only ones
writes the model with its position inside the epoch), and fit() raises
KeyboardInterrupt. Resuming with `fit(..., initial_epoch=model.trained_epochs)` after
load_model continues exactly where it stopped.

A model runs one of these calls at a time (concurrency.py): a second thread gets
ModelInUseError instead of wrong outputs or lost steps.
"""

import contextlib
import functools
from collections.abc import Mapping

import numpy as np

from .. import callbacks as callbacks_mod
from ..distributed import world as distributed_world
from .backend_check import warn_if_not_on_active_backend
from .batch_sources import ArrayBatches, IteratorBatches, is_iterator
from .keras_api import as_batch_iterator
from .concurrency import one_thread_at_a_time
from .fit_state import forget_position, position, resume_point
from .interrupts import InterruptGuard
from .step_data import StepArrays, iterator_batch
from .keras_api import check_fit_extras
from .tta import TestTimeAugmentation


class LazyLogs(Mapping):
    """Batch logs whose values are read from the backend only when asked for."""

    def __init__(self, model, extra=None):
        self._model = model
        self._values = None
        self._extra = extra or {}

    def _load(self):
        if self._values is None:
            self._values = dict(self._model._metric_values(), **self._extra)
        return self._values

    def __getitem__(self, key):
        if key in self._extra:
            return self._extra[key]
        return self._load()[key]

    def __iter__(self):
        return iter(self._model.metrics_names + list(self._extra))

    def __len__(self):
        return len(self._model.metrics_names) + len(self._extra)


@contextlib.contextmanager
def _augmented(model, tta, owner):
    """model._tta set for the duration of one evaluate / predict call (None: no views)."""
    model._tta = None if tta is None else TestTimeAugmentation(model, tta, owner)
    try:
        yield
    finally:
        model._tta = None


def _positive_int(value, argument, owner, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{owner}: {argument} must be a positive int, got {value!r}")
    return int(value)


class TrainingLoops:
    """fit, evaluate and predict for Model."""

    @one_thread_at_a_time
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, initial_epoch=0,
            steps_per_epoch=None, workers=1, use_multiprocessing=False, max_queue_size=10,
            sample_weight=None, class_weight=None):
        """Train for `epochs` epochs (Keras semantics); returns a History.

        x may be arrays (with targets y: one array, a list, or a dict by input / output
        name) or a data iterator yielding (x, y) or (x, y, sample_weight) batches
        (minidl.data.ArrayIterator). sample_weight (per output, as y) and class_weight
        ({class: weight}, one output) weight each sample's loss, as Keras. The first epoch starts at its first batch,
        unless the model holds a saved position inside epoch `initial_epoch` (a checkpoint
        written inside an epoch) on data like this: then it resumes after the steps done,
        and the progress display says so. See the module docstring for what Ctrl-C does.
        Keras 2's workers, use_multiprocessing and max_queue_size are checked and ignored.
        """
        self._require_compiled("fit")
        warn_if_not_on_active_backend(self)
        owner = f"{self.describe()}.fit"
        check_fit_extras(owner, workers, use_multiprocessing, max_queue_size)
        epochs = _positive_int(epochs, "epochs", owner)
        if isinstance(initial_epoch, bool) or not isinstance(initial_epoch, (int, np.integer)) \
                or initial_epoch < 0:
            raise ValueError(f"{owner}: initial_epoch must be an int >= 0, got {initial_epoch!r}")
        initial_epoch = int(initial_epoch)
        steps_per_epoch = _positive_int(steps_per_epoch, "steps_per_epoch", owner, allow_none=True)
        if verbose not in (0, 1, 2, "auto"):
            raise ValueError(f"{owner}: verbose must be 0, 1, 2 or 'auto', got {verbose!r}")
        verbose = 1 if verbose == "auto" else verbose
        if not distributed_world.is_primary():   # minidl.distributed: rank 0 shows progress
            verbose = 0
        x = as_batch_iterator(x, steps_per_epoch, "steps_per_epoch", owner)
        train, val = self._fit_data(x, y, batch_size, shuffle, validation_split,
                                    validation_data, owner, sample_weight, class_weight)
        steps = len(train) if steps_per_epoch is None else min(steps_per_epoch, len(train))
        # Also when initial_epoch is 0: a run interrupted inside its first epoch resumes there.
        skip, iterator_state = resume_point(self.fit_state, train, initial_epoch, steps, owner)
        train.restore(iterator_state)

        history = callbacks_mod.History()
        # Keras's order: the user's callbacks first, then History and the progress bar, so
        # that these see the logs as callbacks left them (averaged over ranks, learning_rate)
        cb_list = self._check_callbacks(callbacks, owner) + [history]
        cb_list += [callbacks_mod.ProgressBar(verbose)] if verbose else []
        cbs = callbacks_mod.CallbackList(
            cb_list, model=self, params={"epochs": epochs, "steps": steps, "verbose": verbose,
                                         "initial_epoch": initial_epoch, "initial_step": skip})
        self.stop_training = False
        self.history = history
        cbs.on_train_begin()
        restored = self._restored_initial_epoch   # set by BackupAndRestore, used once
        self._restored_initial_epoch = None
        if restored is not None and initial_epoch <= restored:
            initial_epoch = restored
            skip, iterator_state = resume_point(self.fit_state, train, initial_epoch, steps, owner)
            train.restore(iterator_state)
            cbs.set_params(dict(cbs.params, initial_epoch=initial_epoch, initial_step=skip))
        try:
            with InterruptGuard() as guard:
                self._train_epochs(train, val, cbs, guard, range(initial_epoch, epochs), steps,
                                   skip, owner)
        except BaseException:
            forget_position(self)
            raise
        if epochs > initial_epoch:  # Keras: with use_ema the weights take their moving averages
            self.optimizer.finalize_variable_values([w.value for w in self._trained_weights])
        cbs.on_train_end()
        return history

    def _train_epochs(self, train, val, cbs, guard, epochs, steps, skip, owner):
        """The epochs of fit; the first one starts after `skip` steps."""
        signature = train.signature()
        checked = train.validated
        for epoch in epochs:
            if guard.signal is not None:  # it came during the previous epoch's end
                break
            epoch_start = train.state()
            self.reset_metrics()
            cbs.on_epoch_begin(epoch)
            for step, batch in enumerate(train.epoch(epoch, skip), start=skip):
                if step >= steps:
                    break
                xb, yb, swb = batch if checked else self._validate_batch(batch, owner)
                cbs.on_train_batch_begin(step)
                self._train_step(xb, yb, swb)
                # Current before the callbacks run: a ModelCheckpoint saving every few
                # batches records this position, and a resumed run skips these steps.
                self.fit_state = position(epoch, step + 1, epoch_start, signature)
                cbs.on_train_batch_end(step, LazyLogs(self))   # the loss and metrics, as Keras 3
                if guard.signal is not None:
                    self._interrupted(cbs, epoch, f"training interrupted in epoch {epoch + 1} "
                                                  f"after step {step + 1}")
                if self.stop_training:
                    break
            skip = 0
            logs = self._metric_values() if self._seen else {}
            if val is not None:   # also after a stop_training break in the epoch, as Keras
                val_logs = self._evaluate_batches(val, owner, cbs)   # test hooks run, as Keras
                logs.update({"val_" + k: v for k, v in val_logs.items()})
            self.trained_epochs = epoch + 1
            self.fit_state = position(epoch + 1, 0, train.state(), signature)
            cbs.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        if guard.signal is not None:
            # Signalled after a step (validation, epoch-end callbacks): no further step
            # runs and the Ctrl-C is not lost; the saved position is the epoch's end.
            self._interrupted(cbs, max(self.trained_epochs - 1, 0),
                              f"training interrupted after epoch {self.trained_epochs}")

    def _interrupted(self, cbs, epoch, message):
        """Let the callbacks save (on_interrupt), end training and raise KeyboardInterrupt."""
        cbs.on_interrupt(epoch, self._metric_values() if self._seen else {})
        cbs.on_train_end()
        raise KeyboardInterrupt(message)

    @staticmethod
    def _check_callbacks(callbacks, owner):
        if callbacks is None:
            return []
        if not isinstance(callbacks, (list, tuple)):
            raise TypeError(f"{owner}: callbacks must be a list of Callback objects, "
                            f"got {type(callbacks).__name__}")
        for cb in callbacks:
            if not isinstance(cb, callbacks_mod.Callback):
                raise TypeError(f"{owner}: every callback must be a minidl.callbacks.Callback, "
                                f"got {type(cb).__name__}")
        return list(callbacks)

    def _fit_data(self, x, y, batch_size, shuffle, validation_split, validation_data, owner,
                  sample_weight=None, class_weight=None):
        if is_iterator(x):
            if sample_weight is not None or class_weight is not None:
                raise ValueError(f"{owner}: with a data iterator, its batches carry the sample "
                                 "weights: (x, y, sample_weight)")
            if y is not None:
                raise ValueError(f"{owner}: y must be None when x is a data iterator "
                                 "(it yields the targets)")
            if batch_size is not None:
                raise ValueError(f"{owner}: batch_size must be None when x is a data iterator "
                                 "(the iterator sets the batch size)")
            if validation_split:
                raise ValueError(f"{owner}: validation_split needs arrays; pass "
                                 "validation_data with a data iterator")
            if len(x) == 0:
                raise ValueError(f"{owner}: the data iterator x yields no batches")
            train = IteratorBatches(x, shuffle, self.seed, self._unpacker("train_step", owner))
        else:
            batch_size = 32 if batch_size is None else _positive_int(batch_size, "batch_size", owner)
            x, y, sw, arrays = self._arrays("train_step", x, y, sample_weight, class_weight, owner)
            if not isinstance(validation_split, (int, float)) or not 0 <= validation_split < 1:
                raise ValueError(f"{owner}: validation_split must be in [0, 1), "
                                 f"got {validation_split!r}")
            if validation_split and validation_data is None:
                # Keras takes the last fraction of the samples, before any shuffling.
                n = len(x[0])
                cut = int(n * (1 - validation_split))
                if cut == 0 or cut == n:
                    raise ValueError(f"{owner}: validation_split={validation_split} leaves no "
                                     f"training or no validation samples out of {n}")
                validation_data = ([a[cut:] for a in x], [a[cut:] for a in y])
                if sw is not None:
                    validation_data += ([a[cut:] for a in sw],)
                    sw = [a[:cut] for a in sw]
                if arrays is not None:   # nested again, as evaluate takes it
                    validation_data = arrays.data(*validation_data, *(None,) * (3 - len(validation_data)))
                x, y = [a[:cut] for a in x], [a[:cut] for a in y]
            train = ArrayBatches(x, y, batch_size, bool(shuffle), self.seed, sw,
                                 None if arrays is None else arrays.pack)
        val = None
        if validation_data is not None:
            val = self._eval_source(validation_data, batch_size or 32, owner, "validation_data")
        return train, val

    def _eval_source(self, data, batch_size, owner, argument):
        if is_iterator(data):
            return IteratorBatches(data, unpack=self._unpacker("test_step", owner))
        if not isinstance(data, (tuple, list)) or len(data) not in (2, 3):
            raise ValueError(f"{owner}: {argument} must be (x, y), (x, y, sample_weight) or a "
                             "data iterator")
        xv, yv, sw, arrays = self._arrays("test_step", data[0], data[1],
                                          data[2] if len(data) == 3 else None, None, owner,
                                          f"{argument}[0]", f"{argument}[1]")
        return ArrayBatches(xv, yv, batch_size, False, 0, sw,
                            None if arrays is None else arrays.pack)

    # ---------------------------------------------------- the data's form
    def _own_step(self, step):
        """Whether `step` ("train_step", "test_step") is the model's own, which takes its data
        as given (custom_steps.py overrides this)."""
        return False

    def _arrays(self, step, x, y, sample_weight, class_weight, owner, x_argument="x",
                y_argument="y"):
        """(xs, ys, sample weights, StepArrays or None) for the batch sources: the data
        checked against the model's inputs and outputs, or for a step of the model's own,
        as given (step_data.py)."""
        if self._own_step(step):
            arrays = StepArrays(x, y, sample_weight, class_weight, owner, x_argument, y_argument)
            return arrays.xs, arrays.ys, arrays.sws, arrays
        xs, ys = self._validate_xy(x, y, x_argument, y_argument)
        return xs, ys, self._sample_weights(sample_weight, class_weight, ys, owner), None

    def _unpacker(self, step, owner):
        """How a data iterator's batches reach a step of the model's own (as Keras unpacks
        them), or None: checked by the model (_validate_batch)."""
        return functools.partial(iterator_batch, owner=owner) if self._own_step(step) else None

    # ---------------------------------------------------------- evaluate
    @one_thread_at_a_time
    def evaluate(self, x=None, y=None, batch_size=None, verbose=0, sample_weight=None,
                 steps=None, callbacks=None, return_dict=False, tta=None):
        """Loss and metrics over the data: a float, a list [loss, *metrics], or a dict.
        tta="flip" / "flip_translate": test-time augmentation (models/tta.py)."""
        self._require_compiled("evaluate")
        warn_if_not_on_active_backend(self)
        owner = f"{self.describe()}.evaluate"
        with _augmented(self, tta, owner):
            return self._evaluate(x, y, batch_size, verbose, sample_weight, steps, callbacks,
                                  return_dict, owner)

    def _evaluate(self, x, y, batch_size, verbose, sample_weight, steps, callbacks, return_dict, owner):
        batch_size = 32 if batch_size is None else _positive_int(batch_size, "batch_size", owner)
        steps = _positive_int(steps, "steps", owner, allow_none=True)
        x = as_batch_iterator(x, steps, "steps", owner)
        if is_iterator(x):
            source = IteratorBatches(x, unpack=self._unpacker("test_step", owner))
        else:
            xs, ys, sws, arrays = self._arrays("test_step", x, y, sample_weight, None, owner)
            source = ArrayBatches(xs, ys, batch_size, False, 0, sws,
                                  None if arrays is None else arrays.pack)
        cbs = callbacks_mod.CallbackList(
            ([callbacks_mod.ProgressBar(verbose)] if verbose else [])
            + self._check_callbacks(callbacks, owner), model=self,
            params={"steps": len(source) if steps is None else steps, "verbose": verbose})
        values = self._evaluate_batches(source, owner, cbs, steps)
        if return_dict:
            return values
        result = [values[k] for k in self.metrics_names]
        return result[0] if len(result) == 1 else result

    def _evaluate_batches(self, source, owner, cbs, steps=None):
        # Evaluation uses its own counters so the training epoch's running values survive.
        saved = (self._counters, self._seen, self._head_rows)
        if getattr(self, "_eval_counters", None) is None:
            self._eval_counters = self._new_counters()
        self._counters = self._eval_counters
        try:
            self.reset_metrics()
            if cbs:
                cbs.on_test_begin()
            for i, batch in enumerate(source.epoch(0)):
                if steps is not None and i >= steps:
                    break
                xb, yb, swb = batch if source.validated else self._validate_batch(batch, owner)
                if cbs:
                    cbs.on_test_batch_begin(i)
                self._test_step(xb, yb, swb)
                if cbs:
                    cbs.on_test_batch_end(i, LazyLogs(self))
            if self._seen == 0:
                raise ValueError(f"{owner}: no samples to evaluate")
            values = self._metric_values()
            if cbs:
                cbs.on_test_end(values)
            return values
        finally:
            self._counters, self._seen, self._head_rows = saved

    # ----------------------------------------------------------- predict
    @one_thread_at_a_time
    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, tta=None):
        """Model outputs for x (an array, or an iterator whose batches are x or (x, y));
        tta="flip" / "flip_translate": averaged over augmented views (models/tta.py)."""
        self._require_built("predict")
        warn_if_not_on_active_backend(self)
        owner = f"{self.describe()}.predict"
        with _augmented(self, tta, owner):
            return self._predict(x, batch_size, verbose, steps, callbacks, owner)

    def _predict(self, x, batch_size, verbose, steps, callbacks, owner):
        batch_size = 32 if batch_size is None else _positive_int(batch_size, "batch_size", owner)
        steps = _positive_int(steps, "steps", owner, allow_none=True)
        x = as_batch_iterator(x, steps, "steps", owner)
        if is_iterator(x):
            source = IteratorBatches(x)
            n_steps = len(x)
        else:
            x = self._validate_x(x)
            source = ArrayBatches(x, None, batch_size, False, 0)
            n_steps = len(source)
        cbs = callbacks_mod.CallbackList(
            ([callbacks_mod.ProgressBar(verbose)] if verbose else [])
            + self._check_callbacks(callbacks, owner), model=self,
            params={"steps": n_steps if steps is None else steps, "verbose": verbose})
        cbs.on_predict_begin()
        outputs = []
        for i, batch in enumerate(source.epoch(0)):
            if steps is not None and i >= steps:
                break
            xs = batch[0] if source.validated else self._check_batch_x(batch)
            cbs.on_predict_batch_begin(i)
            outputs.append(self._predict_step(xs))
            cbs.on_predict_batch_end(i, {"outputs": self._pack_outputs(outputs[-1])})
        cbs.on_predict_end()
        if not outputs:
            raise ValueError(f"{owner}: no samples to predict")
        # one batch: its arrays are already fresh copies (to_numpy), not worth copying again
        return self._pack_outputs([parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
                                   for parts in zip(*outputs)])

