"""ProgressBar: the progress display of fit, evaluate and predict."""

import math
import sys
import time

from .base import Callback


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


def format_logs(logs):
    """'loss: 0.1234 - accuracy: 0.9000' (reads every value of a lazy batch mapping)."""
    return " - ".join(f"{key}: {_format_value(logs[key])}" for key in logs if key not in _NOT_SHOWN)


def _format_step_time(seconds):
    """'12ms/step', or '850us/step' for steps under a millisecond (as Keras prints them)."""
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


class ProgressBar(Callback):
    """The progress display of fit/evaluate/predict.

    verbose=1: a tqdm bar per epoch over params["steps"] whose text shows the running loss
    and metrics, read from the (lazy) batch logs at most once per `refresh_interval`
    seconds; at the end of the epoch the bar shows the epoch's final logs, val_ metrics
    included. verbose=2: one line per epoch, no bar. verbose=0: nothing.
    verbose=None takes params["verbose"]. `file` defaults to sys.stdout at the time of use.

    An epoch's time is shown in two labelled parts: "train 10.2s" (its training steps) and,
    when it was validated, "+ validation 1.5s" (the rest of the epoch); the time per step
    counts training only. A fit that resumes inside an epoch starts that epoch's bar at the
    step it resumes from and says "resumed at step S of N".
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
        self._start = self._last_step = 0.0
        self._seen = 0

    def _mode(self):
        return self.verbose if self.verbose is not None else self.params.get("verbose", 1)

    def _stream(self):
        return self.file if self.file is not None else sys.stdout

    def _open(self, description, initial=0):
        self._start = self._last_step = time.perf_counter()
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
        self._bar = tqdm(total=self.params.get("steps"), initial=initial, desc=description,
                         file=self._stream(), leave=True, mininterval=0, miniters=1, unit="step",
                         dynamic_ncols=True)

    def _advance(self, logs):
        self._seen += 1
        now = self._last_step = time.perf_counter()
        if self._bar is None:
            return
        self._pending += 1
        if now - self._last_refresh >= self.refresh_interval:
            self._last_refresh = now
            if logs:
                self._bar.set_postfix_str(format_logs(logs), refresh=False)
            self._bar.update(self._pending)
            self._pending = 0

    def _timing(self, logs, epoch):
        """('train 10.2s + validation 1.5s', seconds per step) for an epoch, else the
        elapsed time of an evaluate or predict."""
        now = time.perf_counter()
        if not epoch:
            return f"{now - self._start:.1f}s", now - self._start
        train = self._last_step - self._start
        text = f"train {train:.1f}s"
        if logs and any(str(key).startswith("val_") for key in logs):
            text += f" + validation {now - self._last_step:.1f}s"
        return text, train

    def _close(self, title, logs, epoch=False):
        text = format_logs(logs) if logs else ""
        timing, busy = self._timing(logs, epoch)
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.set_postfix_str(" - ".join(p for p in (text, timing if epoch else "") if p),
                                refresh=False)
            if self._pending:
                bar.update(self._pending)
            bar.close()  # draws the final line, final logs included
        elif self._mode() == 2:
            per_step = _format_step_time(busy / self._seen) if self._seen else "0 steps"
            parts = [title, timing, per_step] + ([text] if text else [])
            print(" - ".join(parts), file=self._stream(), flush=True)

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False
        if self._bar is not None:  # training stopped inside an epoch
            self._bar.close()
            self._bar = None

    def on_epoch_begin(self, epoch, logs=None):
        epochs, steps = self.params.get("epochs"), self.params.get("steps")
        self._title = f"Epoch {epoch + 1}/{epochs}" if epochs else f"Epoch {epoch + 1}"
        initial = (self.params.get("initial_step", 0)
                   if epoch == self.params.get("initial_epoch", 0) else 0)
        if initial:
            self._title += f" (resumed at step {initial} of {steps})"
        self._open(self._title, initial)

    def on_train_batch_end(self, batch, logs=None):
        self._advance(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._close(self._title, logs, epoch=True)

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
