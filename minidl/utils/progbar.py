"""keras.utils.Progbar: a progress bar for loops of your own (custom training loops).

    bar = Progbar(target=steps, stateful_metrics=["acc"])
    for step in range(steps):
        ...
        bar.update(step + 1, values=[("loss", loss), ("acc", acc)])

A metric named in stateful_metrics is shown as given; the others are averaged over the
steps since the start, weighted by how many steps each update covered (Keras's rule).
"""

import sys
import time

import numpy as np

from .interactive_logging import is_interactive_logging_enabled


class Progbar:
    """Progbar(target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
    unit_name="step"): verbose=1 redraws one line, verbose=2 prints a line at the end,
    0 prints nothing. target=None: a loop of unknown length."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 stateless_metrics=None, unit_name="step"):
        if target is not None and (isinstance(target, bool) or not isinstance(target, int)
                                   or target < 0):
            raise ValueError(f"Progbar: target must be an int >= 0 or None, got {target!r}")
        if verbose not in (0, 1, 2):
            raise ValueError(f"Progbar: verbose must be 0, 1 or 2, got {verbose!r}")
        self.target, self.width, self.verbose = target, int(width), verbose
        self.interval, self.unit_name = float(interval), unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self.stateless_metrics = set(stateless_metrics or ())
        self._values = {}         # name -> [weighted sum, weight] or the last value (stateful)
        self._order = []
        self._seen_so_far = 0
        self._start = time.time()
        self._last_update = 0.0
        self._total_width = 0
        self._finished = False

    def update(self, current, values=None, finalize=None):
        """The loop is at step `current`; values: a list of (name, value)."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or []:
            if name not in self._order:
                self._order.append(name)
            value = float(np.asarray(value).mean())
            if name in self.stateful_metrics:
                self._values[name] = value
            else:
                steps = max(current - self._seen_so_far, 1)
                total, weight = self._values.get(name, (0.0, 0))
                self._values[name] = (total + value * steps, weight + steps)
        self._seen_so_far = current
        if self.verbose == 0 or self._finished or not is_interactive_logging_enabled():
            self._finished = self._finished or finalize
            return
        now = time.time()
        if self.verbose == 1:
            if not finalize and now - self._last_update < self.interval:
                return
            line = self._bar(current) + self._timing(current, now, finalize) + self._metrics()
            pad = max(self._total_width - len(line), 0)
            self._total_width = len(line)
            sys.stdout.write("\r" + line + " " * pad + ("\n" if finalize else ""))
            sys.stdout.flush()
        elif finalize:
            sys.stdout.write(self._bar(current) + self._timing(current, now, True)
                             + self._metrics() + "\n")
            sys.stdout.flush()
        self._last_update = now
        self._finished = finalize

    def add(self, n, values=None):
        """Advance by n steps."""
        self.update(self._seen_so_far + n, values)

    def _bar(self, current):
        if self.target is None:
            return f"{current:7d}/Unknown"
        digits = len(str(self.target))
        done = int(self.width * min(current, self.target) / self.target) if self.target else \
            self.width
        return f"{current:>{digits}}/{self.target} " + "━" * done + "─" * (self.width - done)

    def _timing(self, current, now, finalize):
        elapsed = now - self._start
        per_unit = elapsed / current if current else 0.0
        if finalize or self.target is None:
            text = f" {elapsed:.0f}s"
        else:
            text = f" {per_unit * (self.target - current):.0f}s"
        if per_unit >= 1:
            return text + f" {per_unit:.0f}s/{self.unit_name}"
        if per_unit >= 1e-3:
            return text + f" {per_unit * 1e3:.0f}ms/{self.unit_name}"
        return text + f" {per_unit * 1e6:.0f}us/{self.unit_name}"

    def _metrics(self):
        parts = []
        for name in self._order:
            value = self._values[name]
            if isinstance(value, tuple):
                value = value[0] / max(value[1], 1)
            parts.append(f" - {name}: " + (f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"))
        return "".join(parts)


__all__ = ["Progbar"]
