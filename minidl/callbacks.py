"""Keras-style callbacks: hooks the training loop calls at the start and end of training,
epochs and batches.

The logs passed to the batch hooks are a Mapping whose values may live on a device:
reading one forces a device->host copy, so callbacks read batch logs only when they
need them (ProgressBar at its refresh interval, TerminateOnNaN every batch). Epoch-end
logs are a plain dict of floats.

Model attributes callbacks use: stop_training, optimizer, save(path), save_weights(path),
get_weights(), set_weights(weights).
"""

import csv
import inspect
import io
import math
import numbers
import os
import sys
import time
import warnings

from .io import atomic_write


class Callback:
    """Base class; every hook does nothing. `model` and `params` are set by the training loop
    (params holds at least "epochs", "steps" and "verbose" during fit)."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = dict(params or {})

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        pass

    def on_train_batch_end(self, batch, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass


class CallbackList:
    """Dispatches every hook to each callback in order, passing the same logs object along."""

    def __init__(self, callbacks=None, model=None, params=None):
        self.callbacks = []
        self.model = model
        self.params = dict(params or {})
        for callback in callbacks or []:
            self.append(callback)

    def append(self, callback):
        if not isinstance(callback, Callback):
            raise TypeError(f"CallbackList: every callback must be a minidl.callbacks.Callback, "
                            f"got {type(callback).__name__}")
        if self.model is not None:
            callback.set_model(self.model)
        callback.set_params(self.params)
        self.callbacks.append(callback)

    def set_model(self, model):
        self.model = model
        for callback in self.callbacks:
            callback.set_model(model)

    def set_params(self, params):
        self.params = dict(params or {})
        for callback in self.callbacks:
            callback.set_params(self.params)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)

    def _call(self, hook, *args):
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call("on_predict_batch_end", batch, logs)


# ------------------------------------------------------------------ helpers

def _float_arg(value, argument, owner):
    """float(value), or a TypeError/ValueError that names the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner}: {argument} must be a number, got {value!r}")
    if math.isnan(value):
        raise ValueError(f"{owner}: {argument} must not be NaN")
    return float(value)


def _path_arg(value, argument, owner):
    """os.fspath(value), or a TypeError that names the argument."""
    try:
        path = os.fspath(value)
    except TypeError:
        raise TypeError(f"{owner}: {argument} must be a file path, got {value!r}") from None
    if not isinstance(path, str) or not path:
        raise TypeError(f"{owner}: {argument} must be a non-empty str path, got {value!r}")
    return path

def _monitor_mode(monitor, mode, owner):
    """'min' or 'max'; mode "auto" reads the direction from the monitored name."""
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"{owner}: mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode != "auto":
        return mode
    name = monitor[len("val_"):] if monitor.startswith("val_") else monitor
    higher_is_better = ("acc" in name or "auc" in name or "precision" in name
                        or "recall" in name or name.startswith("fmeasure"))
    return "max" if higher_is_better else "min"


def _is_finite_number(value):
    return isinstance(value, numbers.Real) and math.isfinite(float(value))


def _format_value(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:.4f}"
    return f"{value:.4e}"


# Bookkeeping entries of the batch logs, not quantities to display.
_NOT_SHOWN = ("batch", "size")


def _format_logs(logs):
    """'loss: 0.1234 - accuracy: 0.9000' (reads every value of a lazy batch mapping)."""
    return " - ".join(f"{key}: {_format_value(logs[key])}" for key in logs if key not in _NOT_SHOWN)


def _format_step_time(seconds):
    """'12ms/step', or '850us/step' for steps under a millisecond (as Keras prints them)."""
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


def _monitored_value(logs, monitor, owner):
    value = (logs or {}).get(monitor)
    if value is None:
        warnings.warn(f"{owner} conditioned on metric {monitor!r}, which is not available; "
                      f"available metrics are: {', '.join(sorted(logs or {}))}", stacklevel=3)
        return None
    return float(value)


# ------------------------------------------------------------------ History
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


# -------------------------------------------------------------- ProgressBar
class ProgressBar(Callback):
    """The progress display of fit/evaluate/predict.

    verbose=1: a tqdm bar per epoch over params["steps"] whose text shows the running loss
    and metrics, read from the (lazy) batch logs at most once per `refresh_interval`
    seconds; at the end of the epoch the bar shows the epoch's final logs, val_ metrics
    included. verbose=2: one line per epoch, no bar. verbose=0: nothing.
    verbose=None takes params["verbose"]. `file` defaults to sys.stdout at the time of use.
    """

    def __init__(self, verbose=None, file=None, refresh_interval=0.3):
        super().__init__()
        if verbose not in (None, 0, 1, 2):
            raise ValueError(f"ProgressBar: verbose must be 0, 1, 2 or None, got {verbose!r}")
        self.verbose = verbose
        self.file = file
        self.refresh_interval = float(refresh_interval)
        self._bar = None
        self._in_fit = False
        self._start = 0.0
        self._seen = 0

    def _mode(self):
        return self.verbose if self.verbose is not None else self.params.get("verbose", 1)

    def _stream(self):
        return self.file if self.file is not None else sys.stdout

    def _open(self, description):
        self._start = time.perf_counter()
        self._last_refresh = self._start
        self._seen = 0
        self._pending = 0
        if self._mode() != 1:
            return
        try:
            from tqdm import tqdm
        except ImportError as exc:
            raise ImportError("ProgressBar with verbose=1 needs tqdm (pip install tqdm); "
                              "or pass verbose=2 for one line per epoch") from exc
        # We decide when to redraw ourselves (reading the logs costs a device copy),
        # so tqdm redraws on every update() we make.
        self._bar = tqdm(total=self.params.get("steps"), desc=description, file=self._stream(),
                         leave=True, mininterval=0, miniters=1, unit="step", dynamic_ncols=True)

    def _advance(self, logs):
        self._seen += 1
        if self._bar is None:
            return
        self._pending += 1
        now = time.perf_counter()
        if now - self._last_refresh >= self.refresh_interval:
            self._last_refresh = now
            if logs:
                self._bar.set_postfix_str(_format_logs(logs), refresh=False)
            self._bar.update(self._pending)
            self._pending = 0

    def _close(self, title, logs):
        text = _format_logs(logs) if logs else ""
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.set_postfix_str(text, refresh=False)
            if self._pending:
                bar.update(self._pending)
            bar.close()  # draws the final line, final logs included
        elif self._mode() == 2:
            elapsed = time.perf_counter() - self._start
            per_step = _format_step_time(elapsed / self._seen) if self._seen else "0 steps"
            parts = [title, f"{elapsed:.1f}s", per_step] + ([text] if text else [])
            print(" - ".join(parts), file=self._stream(), flush=True)

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False
        if self._bar is not None:  # training stopped inside an epoch
            self._bar.close()
            self._bar = None

    def on_epoch_begin(self, epoch, logs=None):
        epochs = self.params.get("epochs")
        self._title = f"Epoch {epoch + 1}/{epochs}" if epochs else f"Epoch {epoch + 1}"
        self._open(self._title)

    def on_train_batch_end(self, batch, logs=None):
        self._advance(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._close(self._title, logs)

    # Validation inside fit shows no bar of its own; evaluate() and predict() do.
    def on_test_begin(self, logs=None):
        if not self._in_fit:
            self._open("Evaluate")

    def on_test_batch_end(self, batch, logs=None):
        if not self._in_fit:
            self._advance(logs)

    def on_test_end(self, logs=None):
        if not self._in_fit:
            self._close("Evaluate", logs)

    def on_predict_begin(self, logs=None):
        self._open("Predict")

    def on_predict_batch_end(self, batch, logs=None):
        self._advance(None)

    def on_predict_end(self, logs=None):
        self._close("Predict", None)


# ---------------------------------------------------------- ModelCheckpoint
class ModelCheckpoint(Callback):
    """Save the model (or only its weights) every epoch or every `save_freq` batches.

    `filepath` may hold format fields filled from the logs and the 1-based epoch (and batch
    when saving by batch): "ckpt/{epoch:02d}-{val_loss:.2f}.mdl". With save_best_only a
    save happens only when the monitored value beats the best seen so far (or
    initial_value_threshold)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__()
        self.filepath = _path_arg(filepath, "filepath", "ModelCheckpoint")
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = bool(save_best_only)
        self.save_weights_only = bool(save_weights_only)
        self.mode = _monitor_mode(monitor, mode, "ModelCheckpoint")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq <= 0):
            raise ValueError(f"ModelCheckpoint: save_freq must be 'epoch' or a positive number of "
                             f"batches, got {save_freq!r}")
        self.save_freq = save_freq
        if initial_value_threshold is not None:
            initial_value_threshold = _float_arg(initial_value_threshold,
                                                 "initial_value_threshold", "ModelCheckpoint")
        self.initial_value_threshold = initial_value_threshold
        self.best = self._initial_best()
        self._current_epoch = 0
        self._batches_since_save = 0

    def _initial_best(self):
        if self.initial_value_threshold is not None:
            return self.initial_value_threshold
        return math.inf if self.mode == "min" else -math.inf

    def _improved(self, current):
        return current < self.best if self.mode == "min" else current > self.best

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_save += 1
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            # Only now are the (lazy) batch logs read: formatting and monitoring need them.
            values = {key: float(value) for key, value in (logs or {}).items()}
            self._save(self._current_epoch, batch, values)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, dict(logs or {}))

    def _file_path(self, epoch, batch, logs):
        fields = dict(logs)
        fields["epoch"] = epoch + 1
        if batch is not None:
            fields["batch"] = batch + 1   # 1-based like the epoch, whatever the logs hold
        try:
            return self.filepath.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise KeyError(f"ModelCheckpoint: cannot format filepath {self.filepath!r} with the "
                           f"epoch and logs {sorted(logs)}: {exc!r}") from None

    def _save(self, epoch, batch, logs):
        path = self._file_path(epoch, batch, logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"ModelCheckpoint: can save the best model only with {self.monitor!r} "
                              f"available in the logs ({', '.join(sorted(logs))}); skipping",
                              stacklevel=3)
                return
            current = float(current)
            if not self._improved(current):
                if self.verbose > 0:
                    print(f"Epoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"Epoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                      f"{current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"Epoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


# ------------------------------------------------------------ EarlyStopping
class EarlyStopping(Callback):
    """Stop training when the monitored value has not improved by more than min_delta for
    `patience` epochs (Keras 3 semantics; epochs before start_from_epoch are ignored).
    With restore_best_weights the weights of the best epoch are put back at the end of
    training."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor = monitor
        self.min_delta = abs(_float_arg(min_delta, "min_delta", "EarlyStopping"))
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"EarlyStopping: patience must be an int >= 0, got {patience!r}")
        self.patience = patience
        self.verbose = verbose
        self.mode = _monitor_mode(monitor, mode, "EarlyStopping")
        self.baseline = None if baseline is None else _float_arg(baseline, "baseline",
                                                                   "EarlyStopping")
        self.restore_best_weights = bool(restore_best_weights)
        self.start_from_epoch = int(start_from_epoch)
        self._reset()

    def _reset(self):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        if self.mode == "min":
            return value + self.min_delta < reference
        return value - self.min_delta > reference

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        current = _monitored_value(logs, self.monitor, "EarlyStopping")
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


# ---------------------------------------------------- LearningRateScheduler
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
        if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not _is_finite_number(lr):
            raise ValueError(f"LearningRateScheduler: the schedule must return a finite float, got "
                             f"{lr!r} for epoch {epoch}")
        self.model.optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(lr)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = self._current_lr()


# ------------------------------------------------------- ReduceLROnPlateau
class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by `factor` (never below min_lr) once the monitored value
    has not improved by more than min_delta for `patience` epochs, then wait `cooldown`
    epochs before counting again."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0):
        super().__init__()
        self.monitor = monitor
        self.factor = _float_arg(factor, "factor", "ReduceLROnPlateau")
        if not 0.0 < self.factor < 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be in (0, 1), got {factor!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"ReduceLROnPlateau: patience must be an int >= 0, got {patience!r}")
        if isinstance(cooldown, bool) or not isinstance(cooldown, int) or cooldown < 0:
            raise ValueError(f"ReduceLROnPlateau: cooldown must be an int >= 0, got {cooldown!r}")
        self.patience = patience
        self.verbose = verbose
        self.mode = _monitor_mode(monitor, mode, "ReduceLROnPlateau")
        self.min_delta = abs(_float_arg(min_delta, "min_delta", "ReduceLROnPlateau"))
        self.cooldown = cooldown
        self.min_lr = _float_arg(min_lr, "min_lr", "ReduceLROnPlateau")
        if self.min_lr < 0:
            raise ValueError(f"ReduceLROnPlateau: min_lr must be >= 0, got {min_lr!r}")
        self._reset()

    def _reset(self):
        self.best = math.inf if self.mode == "min" else -math.inf
        self.wait = 0
        self.cooldown_counter = 0

    def _improved(self, current):
        if self.mode == "min":
            return current < self.best - self.min_delta
        return current > self.best + self.min_delta

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if logs is not None:
            logs["learning_rate"] = float(optimizer.current_learning_rate())
        current = _monitored_value(logs, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current):
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


# --------------------------------------------------------------- CSVLogger
class CSVLogger(Callback):
    """Write one row per epoch (the 0-based epoch, then the logs sorted by name) to a CSV file.

    The whole file is rewritten through atomic_write at each epoch end, so a crash leaves
    either the previous complete file or the new one. With append=True the rows of an
    existing file are kept and training continues after them (its header fixes the columns)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = _path_arg(filename, "filename", "CSVLogger")
        if not isinstance(separator, str) or len(separator) != 1:
            raise ValueError(f"CSVLogger: separator must be one character, got {separator!r}")
        self.sep = separator
        self.append = bool(append)
        self.keys = None
        self._rows = []      # lines already formatted, header included

    def on_train_begin(self, logs=None):
        self.keys = None
        self._rows = []
        if self.append and os.path.exists(self.filename):
            with open(self.filename, newline="") as f:
                text = f.read()
            rows = list(csv.reader(io.StringIO(text), delimiter=self.sep))
            if rows and rows[0] and rows[0][0] == "epoch":
                self.keys = rows[0][1:]
            self._rows = [self._line(row) for row in rows if row]

    def _line(self, values):
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=self.sep, lineterminator="\n").writerow(values)
        return buffer.getvalue()

    @staticmethod
    def _cell(value):
        if isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(map(str, value)) + "]"
        return value

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            # With validation every few epochs the first epoch has no val_ keys: make room.
            if not any(key.startswith("val_") for key in self.keys):
                self.keys += ["val_" + key for key in self.keys if key != "learning_rate"]
        if not self._rows:
            self._rows.append(self._line(["epoch"] + self.keys))
        self._rows.append(self._line([epoch] + [self._cell(logs.get(key, "NA")) for key in self.keys]))
        with atomic_write(self.filename, "w") as f:
            f.write("".join(self._rows))


# ----------------------------------------------------------- TerminateOnNaN
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


__all__ = ["Callback", "CallbackList", "History", "ProgressBar", "ModelCheckpoint", "EarlyStopping",
           "LearningRateScheduler", "ReduceLROnPlateau", "CSVLogger", "TerminateOnNaN"]
