"""HDF5 files: Keras 2 / tf.keras whole-model files and both weights layouts.

A whole-model .h5 (Keras 2, tf.keras, or Keras 3's legacy writer) holds

    attrs model_config     the model as JSON ({"class_name", "config"}, Keras 2 or 3 style)
    attrs training_config  loss, metrics and optimizer_config (JSON)
    model_weights/         Keras 2's weights layout (layer_names, weight_names)

and a weights file holds either Keras 3's layout (layers/..., vars) or Keras 2's
(layer_names at the top). Attributes are read only after their size is checked.
"""

import json

from ..models.minidl_files import ModelFileError
from .keras_zip import build_model, compile_from_keras
from .weights_h5 import h5py, read_keras_weights, read_legacy_weights, require_every_layer

MAX_ATTR_BYTES = 64 << 20


def _open(path):
    try:
        return h5py().File(path, "r")
    except OSError as exc:
        raise ModelFileError(f"{path} is not a readable HDF5 file: {exc}") from None


def _json_attr(obj, name, path):
    """A JSON attribute, its stored size checked before it is read (None when absent)."""
    if name not in obj.attrs:
        return None
    attr_id = h5py().h5a.open(obj.id, name.encode())
    if attr_id.get_storage_size() > MAX_ATTR_BYTES:
        raise ModelFileError(f"{path}: attribute {name} has {attr_id.get_storage_size()} bytes, "
                             f"more than the {MAX_ATTR_BYTES} a config may have")
    value = obj.attrs[name]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise ModelFileError(f"{path}: attribute {name} is not a JSON string")
    try:
        return json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"{path}: attribute {name} is not readable JSON: "
                             f"{str(exc)[:200]}") from None


def load_h5_model(path, compile=True):
    with _open(path) as f:
        spec = _json_attr(f, "model_config", path)
        if spec is None:
            raise ModelFileError(f"{path} has no model_config attribute: it holds weights "
                                 "only (load them with model.load_weights)")
        make, arrays, params = build_model(spec, path)
        model = make()
        weights = f.get("model_weights")
        if not isinstance(weights, h5py().Group):
            raise ModelFileError(f"{path} has no model_weights group")
        # the model was built from this file's config: its layers are found by their names
        require_every_layer(weights, model, path)
        read_legacy_weights(weights, model, path, by_name=True)
        training = _json_attr(f, "training_config", path) if compile else None
    if isinstance(training, dict):
        c = dict(training)
        opt = c.get("optimizer_config")
        if isinstance(opt, dict):
            c["optimizer"] = opt
        compile_from_keras(model, c, path)
    return model


def load_h5_weights(model, path, by_name=False, skip_mismatch=False):
    """model.load_weights of an HDF5 file in either layout."""
    with _open(path) as f:
        # Keras 3: the model's own vars group, and layers/ or (a subclassed model) its
        # attributes' groups
        if ("layers" in f or "vars" in f) and "layer_names" not in f.attrs:
            if by_name:
                raise ValueError(f"load_weights {path}: by_name=True reads Keras 2's .h5 "
                                 "layout; this file has Keras 3's (matched by structure)")
            read_keras_weights(f, model, path, skip_mismatch=skip_mismatch)
            return
        group = f["model_weights"] if "model_weights" in f and "layer_names" not in f.attrs \
            else f
        read_legacy_weights(group, model, path, by_name=by_name, skip_mismatch=skip_mismatch)
