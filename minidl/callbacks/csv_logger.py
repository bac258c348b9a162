"""CSVLogger: one row of logs per epoch, the whole file rewritten crash-safely each time."""

import csv
import io
import os

from ..distributed import world
from ..io import atomic_write
from .arguments import path_arg
from .base import Callback


class CSVLogger(Callback):
    """Write one row per epoch (the 0-based epoch, then the logs sorted by name) to a CSV file.

    The whole file is rewritten through atomic_write at each epoch end, so a crash leaves
    either the previous complete file or the new one. With append=True the rows of an
    existing file are kept and training continues after them (its header fixes the columns)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = path_arg(filename, "filename", "CSVLogger")
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
        if not world.is_primary():   # under minidl.distributed the file is rank 0's
            return
        with atomic_write(self.filename, "w") as f:
            f.write("".join(self._rows))
