"""MonitorCallback: the base of the callbacks that watch one logged value and act when it
improves (ModelCheckpoint with save_best_only) or stops improving (EarlyStopping,
ReduceLROnPlateau). One rule decides what an improvement is, as Keras 3's MonitorCallback
does: in "min" mode `value + min_delta < reference`, in "max" mode
`value - min_delta > reference`; NaN never improves on anything.
"""

import math
import warnings

from .arguments import float_arg
from .base import Callback


def monitor_direction(monitor, mode, owner):
    """'min' or 'max'. mode "auto" reads the direction from the monitored name, as Keras 3
    reads it from the metric: the loss goes down, the accuracies (every minidl metric) go
    up; for any other name the direction cannot be known and mode must say it."""
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"{owner}: mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode != "auto":
        return mode
    name = monitor[len("val_"):] if monitor.startswith("val_") else monitor
    if name == "loss":
        return "min"
    if name == "acc" or name.endswith("accuracy"):
        return "max"
    raise ValueError(f"{owner}: cannot tell whether monitor={monitor!r} should be minimized or "
                     "maximized; pass mode='min' or mode='max'")


class MonitorCallback(Callback):
    """Holds `monitor`, its direction `mode` ('min' or 'max' once "auto" is resolved),
    `min_delta` and `best`, the best value seen (`baseline` at first, else +inf in "min"
    mode and -inf in "max" mode)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        owner = type(self).__name__
        if not isinstance(monitor, str) or not monitor:
            raise TypeError(f"{owner}: monitor must be the name of a logged value such as "
                            f"'val_loss', got {monitor!r}")
        self.monitor = monitor
        self.mode = monitor_direction(monitor, mode, owner)
        self.min_delta = abs(float_arg(min_delta, "min_delta", owner))
        self._baseline = None if baseline is None else float_arg(baseline, "baseline", owner)
        self.best = self._initial_best()

    def _initial_best(self):
        if self._baseline is not None:
            return self._baseline
        return math.inf if self.mode == "min" else -math.inf

    def _is_improvement(self, value, reference):
        """Whether `value` beats `reference` by more than min_delta in the monitored direction."""
        if self.mode == "min":
            return value + self.min_delta < reference
        return value - self.min_delta > reference

    def _monitored_value(self, logs):
        """logs[monitor] as a float, or None (with a warning) when the logs lack it."""
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"{type(self).__name__} conditioned on metric {self.monitor!r}, which is "
                          f"not available; available metrics are: {', '.join(sorted(logs or {}))}",
                          stacklevel=3)
            return None
        return float(value)
