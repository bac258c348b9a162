"""ModelCheckpoint: save the model (or its weights) during training, and when fit is
interrupted."""

import re
import string
import warnings

import numpy as np

from ..distributed import world
from .arguments import float_arg, path_arg
from .monitor import MonitorCallback


# A format spec of the mini-language without nested fields: [[fill]align][sign][z][#][0]
# [width][grouping][.precision][type].
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?"
                          r"[bcdeEfFgGnosxX%]?", re.DOTALL)
MAX_FIELD_WIDTH = 255   # a file name's length limit: a wider field could never make a usable name


def checked_template(filepath):
    """filepath if its format fields are plain names with a format spec ("{epoch:02d}",
    "{val_loss:.2f}") of width and precision up to MAX_FIELD_WIDTH; else a ValueError naming
    it. str.format would otherwise follow attributes and indices of the values
    ("{epoch.__class__}", "{epoch[0]}") or pad to any width ("{epoch:>1000000000}")."""
    def refuse(why):
        raise ValueError(f"ModelCheckpoint: filepath {filepath!r:.300} {why}; its fields must be "
                         f"plain names of the epoch, batch or logs with an optional format spec, "
                         f"such as {{epoch:02d}} or {{val_loss:.2f}} ({{{{ and }}}} write braces)")
    try:
        fields = [(name, conversion, spec)
                  for _, name, spec, conversion in string.Formatter().parse(filepath)
                  if name is not None]
    except ValueError as exc:            # a single "{" or "}"
        refuse(f"is not a format string ({exc})")
    for name, conversion, spec in fields:
        if not name.isidentifier():
            refuse(f"has the field {{{name}}}: attribute, index and positional fields are refused")
        if conversion is not None:
            refuse(f"converts the field {{{name}!{conversion}}}")
        match = _FORMAT_SPEC.fullmatch(spec)
        if match is None:
            refuse(f"has the format spec {spec!r:.40} for {{{name}}}")
        for part in ("width", "precision"):
            if match.group(part) and int(match.group(part)) > MAX_FIELD_WIDTH:
                refuse(f"asks {{{name}}} for a {part} of {match.group(part)}, more than "
                       f"{MAX_FIELD_WIDTH}")
    return filepath


class ModelCheckpoint(MonitorCallback):
    """Save the model (or only its weights) every epoch or every `save_freq` batches.

    `filepath` may hold format fields filled from the logs and the 1-based epoch (and batch
    when saving by batch): "ckpt/{epoch:02d}-{val_loss:.2f}.mdl" (checked_template says which
    fields are accepted). With save_best_only a
    save happens only when the monitored value beats the best seen so far (or
    initial_value_threshold), by the rule of MonitorCallback.

    A save never replaces a file with one that minidl would refuse to load: when the
    model's weights hold NaN or infinite values (training diverged) the save is skipped
    with a warning and the previous file stays. When fit() is interrupted (Ctrl-C,
    SIGTERM) every checkpoint that does not save the best only writes the model with its
    position inside the epoch, so that load_model + fit(initial_epoch=...) resumes there.
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        if initial_value_threshold is not None:
            initial_value_threshold = float_arg(initial_value_threshold,
                                                "initial_value_threshold", "ModelCheckpoint")
        super().__init__(monitor, mode, baseline=initial_value_threshold)
        self.filepath = checked_template(path_arg(filepath, "filepath", "ModelCheckpoint"))
        self.verbose = verbose
        self.save_best_only = bool(save_best_only)
        self.save_weights_only = bool(save_weights_only)
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq <= 0):
            raise ValueError(f"ModelCheckpoint: save_freq must be 'epoch' or a positive number of "
                             f"batches, got {save_freq!r}")
        self.save_freq = save_freq
        self.initial_value_threshold = initial_value_threshold
        self._current_epoch = 0
        self._batches_since_save = 0

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

    def on_interrupt(self, epoch, logs=None):
        if self.save_best_only:   # an interrupted epoch is no candidate for the best
            return
        # The epoch's running loss and metrics fill file names such as "{epoch}-{loss:.2f}".
        try:
            path = self._file_path(epoch, None, dict(logs or {}))
        except KeyError as exc:  # e.g. a val_ value, which only an epoch end provides
            print(f"\nInterrupted: nothing saved for {exc.args[0]}")
            return
        if self._loadable(path):
            self._write(path)
            print(f"\nInterrupted: saved the model to {path}; resume with "
                  f"load_model({path!r}) then fit(..., initial_epoch=model.trained_epochs)")

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
        current = None
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"ModelCheckpoint: can save the best model only with {self.monitor!r} "
                              f"available in the logs ({', '.join(sorted(logs))}); skipping",
                              stacklevel=3)
                return
            current = float(current)
            if not self._is_improvement(current, self.best):
                if self.verbose > 0:
                    print(f"Epoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}")
                return
        if not self._loadable(path):
            return
        if current is not None:
            if self.verbose > 0:
                print(f"Epoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                      f"{current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"Epoch {epoch + 1}: saving model to {path}")
        self._write(path)

    def _loadable(self, path):
        """Whether a file saved now would load (load_model refuses non-finite weights); if
        not, says why nothing is saved to path."""
        if all(np.all(np.isfinite(w)) for w in self.model.get_weights()):
            return True
        warnings.warn(f"ModelCheckpoint: not saving {path}: the model's weights hold NaN or "
                      "infinite values (training diverged) and such a file would not load; "
                      "the previous file stays", stacklevel=4)
        return False

    def _write(self, path):
        if not world.is_primary():   # under minidl.distributed the files are rank 0's
            return
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
