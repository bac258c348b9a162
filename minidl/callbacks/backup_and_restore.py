"""BackupAndRestore: survive a killed training run, as Keras's callback, on minidl's resume
machinery.

    cb = BackupAndRestore(backup_dir="/tmp/backup")
    model.fit(x, y, epochs=10, callbacks=[cb])    # killed in epoch 4 ...
    model.fit(x, y, epochs=10, callbacks=[cb])    # ... the rerun goes on from there

The backup is a full minidl model file (weights, optimizer state and model.fit_state, the
saved training position) at backup_dir/latest.minidl plus a small training_metadata.json,
each written to a temporary name then renamed. At on_train_begin an existing backup is
restored into the model, and fit continues from the saved position: the next epoch, or
with save_freq=N (batches) the step after the last backup inside its epoch, on the same
batches as the uninterrupted run would see (fit_state.py).

double_checkpoint=True keeps the previous backup (*.bkp) and falls back to it when the
latest cannot be read. delete_checkpoint=True removes the backup when fit finishes (not
when it is interrupted: Ctrl-C or SIGTERM leave a backup of where it stopped).
"""

import json
import os
import shutil

from ..models.minidl_files import ModelFileError, load_model
from .base import Callback


def _replace(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class BackupAndRestore(Callback):
    """BackupAndRestore(backup_dir, save_freq="epoch", double_checkpoint=False,
    delete_checkpoint=True); save_freq: "epoch" or every that many batches."""

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq="
                             f"{save_freq}. Expected either 'epoch' or an integer value.")
        if isinstance(save_freq, int) and save_freq < 1:
            raise ValueError(f"BackupAndRestore: save_freq must be 'epoch' or an int >= 1, got "
                             f"{save_freq}")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = bool(double_checkpoint)
        self.delete_checkpoint = bool(delete_checkpoint)
        self._model_path = os.path.join(self.backup_dir, "latest.minidl")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._batches_since_save = 0
        self._interrupted = False

    # ---------------------------------------------------------------- restore
    def on_train_begin(self, logs=None):
        self._interrupted = False
        self._batches_since_save = 0
        if not self.model.built:
            raise ValueError("To use the BackupAndRestore callback, your model must be built "
                             f"before you call `fit()`. Model {self.model.describe()} is unbuilt.")
        try:
            self._restore(self._model_path)
        except (ModelFileError, OSError):
            previous = self._model_path + ".bkp"
            if not (self.double_checkpoint and os.path.exists(previous)):
                raise
            self._restore(previous)

    def _restore(self, path):
        if not os.path.exists(path):
            return
        saved = load_model(path)
        model = self.model
        model.set_weights(saved.get_weights())
        if saved.compiled and model.compiled:
            model.optimizer.set_state(model.backend, saved.optimizer.get_state(saved.backend))
        model.trained_epochs = saved.trained_epochs
        model.fit_state = dict(saved.fit_state)
        # fit reads this after on_train_begin and starts from the restored position
        model._restored_initial_epoch = int(saved.fit_state.get("epoch", saved.trained_epochs))

    # ------------------------------------------------------------------ back up
    def _save(self):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint and os.path.exists(self._model_path):
            shutil.copyfile(self._model_path, self._model_path + ".bkp")
            if os.path.exists(self._metadata_path):
                shutil.copyfile(self._metadata_path, self._metadata_path + ".bkp")
        self.model.save(self._model_path, overwrite=True)
        state = self.model.fit_state
        _replace(self._metadata_path, json.dumps({"epoch": int(state.get("epoch", 0)),
                                                  "batch": int(state.get("step", 0))}))

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_save += 1
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save()

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save()

    def on_interrupt(self, epoch, logs=None):
        self._interrupted = True
        self._save()   # model.fit_state holds the position to resume from

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and not self._interrupted and os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir)
