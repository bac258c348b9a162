"""keras.utils.Progbar: a progress bar for loops of your own (custom training loops).

    bar = Progbar(target=steps, stateful_metrics=["acc"])
    for step in range(steps):
        ...
        bar.update(step + 1, values=[("loss", loss), ("acc", acc)])

Keras's rules: a metric named in stateful_metrics is shown as given; the others are
averaged over the steps so far, weighted by how many steps each update covered, and the
final update (current >= target, or finalize=True) shows the value it was given (Keras 3's
metrics are running averages already). With stateless_metrics instead, only the metrics it
names are averaged. verbose=1 redraws one line (Keras's bold count and green / grey bar),
verbose=2 prints "4/4 - 0s - 2ms/step - loss: ..." once at the end, 0 prints nothing;
nothing is printed while interactive logging is disabled.
"""

import math
import sys
import time

import numpy as np

from .interactive_logging import is_interactive_logging_enabled

_BOLD, _GREEN, _GREY, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[37m", "\x1b[0m"


def _format_time(time_per_unit, unit_name):
    if time_per_unit >= 1 or time_per_unit == 0:
        return f" {time_per_unit:.0f}s/{unit_name}"
    if time_per_unit >= 1e-3:
        return f" {time_per_unit * 1e3:.0f}ms/{unit_name}"
    return f" {time_per_unit * 1e6:.0f}us/{unit_name}"


class Progbar:
    """Progbar(target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
    stateless_metrics=None, unit_name="step"); target=None: a loop of unknown length."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 stateless_metrics=None, unit_name="step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be "
                             "provided.")
        if target is not None and (isinstance(target, bool) or not isinstance(target, int)
                                   or target < 0):
            raise ValueError(f"Progbar: target must be an int >= 0 or None, got {target!r}")
        if verbose not in (0, 1, 2):
            raise ValueError(f"Progbar: verbose must be 0, 1 or 2, got {verbose!r}")
        self.target, self.width, self.verbose = target, int(width), verbose
        self.interval, self.unit_name = float(interval), unit_name
        if stateless_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = None, set(stateless_metrics)
        else:
            self.stateful_metrics = set(stateful_metrics or ())
            self.stateless_metrics = None
        self._values = {}          # name -> [weighted sum, weight]
        self._values_order = []
        self._seen_so_far = 0
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step = None
        self._prev_total_width = 0

    def _stateless(self, name):
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def update(self, current, values=None, finalize=None):
        """The loop is at step `current`; values: a list of (name, value of the last step)."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or []:
            if name not in self._values_order:
                self._values_order.append(name)
            value = float(np.mean(np.asarray(value)))
            if self._stateless(name) and not finalize:
                steps = max(current - self._seen_so_far, 1)
                total, weight = self._values.get(name, (0.0, 0))
                self._values[name] = [total + value * steps, weight + steps]
            else:
                self._values[name] = [value, 1]
        self._seen_so_far = current
        now = time.time()
        per_unit = self._step_duration(current, now)
        if self.verbose == 0 or not is_interactive_logging_enabled():
            self._last_update = now
            return
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, per_unit, finalize)
        elif finalize and self.target:
            digits = int(math.log10(self.target)) + 1
            line = (f"{current:{digits}d}/{self.target} - {now - self._start:.0f}s -"
                    f"{_format_time(per_unit, self.unit_name)}"
                    + "".join(f" - {name}: {self._formatted(name, signed=False)}"
                              for name in self._values_order))
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        self._last_update = now

    def add(self, n, values=None):
        """Advance by n steps."""
        self.update(self._seen_so_far + n, values)

    def _step_duration(self, current, now):
        """Seconds a step takes; the first step (often slow: set-up) is left out once there
        are others."""
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit

    def _formatted(self, name, signed=True):
        total, weight = self._values[name]
        avg = total / max(1, weight)
        big = abs(avg) > 1e-3 if signed else avg > 1e-3
        return f"{avg:.4f}" if big else f"{avg:.4e}"

    def _draw(self, current, now, per_unit, finalize):
        hidden = 0   # the ANSI escape characters, which take no width on the terminal
        if self.target:
            digits = int(math.log10(self.target)) + 1
            bar = f"{_BOLD}{current:{digits}d}/{self.target}{_RESET} "
            hidden += 8
            done = int(self.width * current / self.target)
            if done > 0:
                bar += f"{_GREEN}{'━' * done}{_RESET}"
                hidden += 9
            bar += f"{_GREY}{'━' * max(self.width - done, 0)}{_RESET}"
            hidden += 9
        else:
            bar = f"{current:7d}/Unknown"
        if self.target and not finalize:
            eta = per_unit * (self.target - current)
            if eta > 3600:
                text = f"{int(eta // 3600)}:{int(eta % 3600 // 60):02d}:{int(eta % 60):02d}"
            elif eta > 60:
                text = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                text = f"{int(eta)}s"
        else:
            text = f"{now - self._start:.0f}s"
        info = f" {_BOLD}{text}{_RESET}" + _format_time(per_unit, self.unit_name)
        hidden += 8
        info += "".join(f" - {name}: {self._formatted(name)}" for name in self._values_order)
        width = len(bar) + len(info) - hidden
        message = "\b" * self._prev_total_width + "\r" + bar + info
        if self._prev_total_width > width:
            message += " " * (self._prev_total_width - width)
        if finalize:
            message += "\n"
        sys.stdout.write(message)
        sys.stdout.flush()
        self._prev_total_width = width


__all__ = ["Progbar"]
