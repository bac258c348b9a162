"""Which format a model file is in, and the reader or writer for it.

A file's name says the format it is written in: `.keras` is Keras 3's zip, `.h5` / `.hdf5`
(so `.weights.h5`) Keras's HDF5 (minidl/keras_files), any other name minidl's own zip
(minidl_files.py, `.minidl` by convention). A file is read by what it holds, whatever its name.
"""

import os

from .. import keras_files
from . import minidl_files


def _kind_of_existing(filepath, owner):
    path = minidl_files._path(filepath, owner)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no model file at {path}")
    return keras_files.kind_of_file(path), path


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    kind = keras_files.kind_of_name(minidl_files._path(filepath, "save"))
    if kind is None:
        return minidl_files.save_model(model, filepath, overwrite, include_optimizer)
    model._require_built("save")
    filepath = minidl_files._check_target(filepath, overwrite)
    if kind == "h5":
        raise ValueError(f"save {filepath}: minidl writes whole models as .keras (Keras 3's "
                         "format) or .minidl; a .h5 name holds weights only "
                         "(model.save_weights(\"x.weights.h5\"))")
    from ..keras_files.keras_zip import save_keras
    save_keras(model, filepath, include_optimizer)


def save_weights(model, filepath, overwrite=True):
    kind = keras_files.kind_of_name(minidl_files._path(filepath, "save_weights"))
    if kind is None:
        return minidl_files.save_weights(model, filepath, overwrite)
    model._require_built("save_weights")
    filepath = minidl_files._check_target(filepath, overwrite)
    if kind == "keras":
        raise ValueError(f"save_weights {filepath}: a .keras name is a whole model "
                         "(model.save); weights go to a .weights.h5 or .minidl file")
    from ..keras_files.keras_zip import save_weights_h5
    save_weights_h5(model, filepath)


def load_model(filepath, compile=True, custom_objects=None, safe_mode=True):
    """Rebuild a saved model on the active backend: a Keras file (.keras, Keras 2 / tf.keras
    .h5) or minidl's own (see models/minidl_files.py). custom_objects ({name: class}) names classes
    of your own; a file never runs code, so safe_mode is always on."""
    from ..custom_objects import custom_object_scope
    with custom_object_scope(custom_objects):
        kind, path = _kind_of_existing(filepath, "load")
        if kind == "keras":
            from ..keras_files.keras_zip import load_keras
            return load_keras(path, compile)
        if kind == "h5":
            from ..keras_files.legacy_h5 import load_h5_model
            return load_h5_model(path, compile)
    return minidl_files.load_model(filepath, compile, custom_objects, safe_mode)


def load_weights(model, filepath, skip_mismatch=False, by_name=False):
    model._require_built("load_weights")
    kind, path = _kind_of_existing(filepath, "load_weights")
    if kind == "h5":
        from ..keras_files.legacy_h5 import load_h5_weights
        return load_h5_weights(model, path, by_name, skip_mismatch)
    if kind == "keras":   # Keras's load_weights reads a .keras file's weights too
        from ..keras_files.keras_zip import load_keras_weights
        return load_keras_weights(model, path, skip_mismatch)
    if by_name or skip_mismatch:
        raise ValueError(f"load_weights {path}: by_name and skip_mismatch are for Keras's "
                         "HDF5 files; a .minidl file's weights match strictly")
    return minidl_files.load_weights(model, filepath)
