"""Model files: one zip holding the architecture (JSON) and the weights (npz).

    minidl_model.json   format tag, model config, compile config, training position
    weights.npz         every layer weight, named "<layer>/<weight>"
    optimizer.npz       the optimizer state (slots and iteration count), when compiled

Nothing is pickled (np.load runs with allow_pickle=False), so loading a downloaded
model file cannot execute code. Files are written through atomic_write, so a crash
never leaves half a model; a truncated or corrupted file raises ModelFileError naming it.
"""

import io
import json
import os
import zipfile

import numpy as np

from .. import layers as layers_mod
from .. import losses as losses_mod
from .. import optimizers as optimizers_mod
from ..custom_objects import custom_object_scope, get_registered_name
from ..io import atomic_write

FORMAT = "minidl-model"
WEIGHTS_FORMAT = "minidl-weights"
VERSION = 1


class ModelFileError(ValueError):
    """A model or weights file that cannot be read: missing, truncated, corrupted or foreign."""


def model_config(model):
    layers = []
    for layer in model.graph.layers:
        layers.append({"class_name": get_registered_name(layer), "config": layer.get_config(),
                       "inbound": [t.layer.name for t in layer.inbound]})
    return {"class_name": type(model).__name__, "name": model.name, "layers": layers,
            "input": model.graph.input_layer.name, "output": model.graph.output_layer.name}


def model_from_config(config):
    from .model import Model
    from .sequential import Sequential
    built = {}
    for spec in config["layers"]:
        layer = layers_mod.deserialize(spec["class_name"], spec["config"])
        if isinstance(layer, layers_mod.InputLayer):
            built[layer.name] = layer.output
            continue
        if config["class_name"] == "Sequential":
            built[layer.name] = layer
            continue
        inbound = [built[name] for name in spec["inbound"]]
        built[layer.name] = layer(inbound if layer.multiple_inputs else inbound[0])
    if config["class_name"] == "Sequential":
        return Sequential([built[s["config"]["name"]] for s in config["layers"]],
                          name=config["name"])
    return Model(built[config["input"]], built[config["output"]], name=config["name"])


def _npz_bytes(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _weights_dict(model):
    # Keys "<layer index>/<layer name>/<weight name>": load_weights matches layers by
    # position (as Keras does), so a rebuilt model with other auto-generated names loads too.
    arrays = {}
    for i, layer in enumerate(model.layers):
        for w, value in zip(layer.weights, layer.get_weights()):
            arrays[f"{i:04d}/{layer.name}/{w.name}"] = value
    return arrays


def _path(filepath, owner):
    if not isinstance(filepath, (str, os.PathLike)):
        raise TypeError(f"{owner}: filepath must be a str or os.PathLike, "
                        f"got {type(filepath).__name__} {filepath!r}")
    return os.fspath(filepath)


def _check_target(filepath, overwrite):
    filepath = _path(filepath, "save")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    return filepath


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    model._require_built("save")
    filepath = _check_target(filepath, overwrite)
    header = {"format": FORMAT, "version": VERSION, "model": model_config(model),
              "trained_epochs": model.trained_epochs, "seed": model.seed,
              "fit_state": model.fit_state, "compile": None}
    files = {"weights.npz": _npz_bytes(_weights_dict(model))}
    if model.compiled:
        header["compile"] = {"optimizer": optimizers_mod.serialize(model.optimizer),
                             "loss": losses_mod.serialize(model.loss),
                             "metrics": [m.name for m in model.metrics]}
        if include_optimizer:
            files["optimizer.npz"] = _npz_bytes(model.optimizer.get_state(model.backend))
    files["minidl_model.json"] = json.dumps(header).encode()
    _write_zip(filepath, files)


def save_weights(model, filepath, overwrite=True):
    model._require_built("save_weights")
    filepath = _check_target(filepath, overwrite)
    _write_zip(filepath, {"weights.npz": _npz_bytes(_weights_dict(model)),
                          "minidl_model.json": json.dumps({"format": WEIGHTS_FORMAT,
                                                           "version": VERSION}).encode()})


def _write_zip(filepath, files):
    with atomic_write(filepath, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
            for name, data in files.items():
                z.writestr(name, data)


def _read_zip(filepath, expected_format):
    filepath = _path(filepath, "load")
    if not os.path.isfile(filepath):
        raise FileNotFoundError(f"no model file at {filepath}")
    try:
        with zipfile.ZipFile(filepath) as z:
            files = {name: z.read(name) for name in z.namelist()}
        header = json.loads(files["minidl_model.json"])
        if not isinstance(header, dict):
            raise ModelFileError(f"{filepath}: minidl_model.json holds a {type(header).__name__}, "
                                 "expected an object")
        if header.get("format") not in expected_format:
            raise ModelFileError(f"{filepath} is a {header.get('format')!r} file, expected "
                                 f"{' or '.join(expected_format)}")
        if header.get("version") != VERSION:
            raise ModelFileError(f"{filepath} has format version {header.get('version')}, this "
                                 f"minidl reads version {VERSION}")
        arrays = {}
        for name in ("weights.npz", "optimizer.npz"):
            if name in files:
                arrays[name] = _read_npz(files[name], filepath, name)
        return header, arrays
    except ModelFileError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, EOFError, OSError, zipfile.LargeZipFile,
            UnicodeDecodeError) as exc:
        raise ModelFileError(f"{filepath} is not a readable minidl model file (truncated or "
                             f"corrupted?): {type(exc).__name__}: {exc}") from None


def _read_npz(data, filepath, member):
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except ValueError as exc:
        if "allow_pickle" not in str(exc):
            raise
        # np.load refuses object arrays: unpickling them could run code from the file.
        raise ModelFileError(f"{filepath}: {member} holds an object (pickled) array; minidl "
                             "model files never contain pickles, so this file was not written "
                             "by minidl and is not loaded") from None
    for key, value in arrays.items():
        if not (np.issubdtype(value.dtype, np.number) or value.dtype == bool):
            raise ModelFileError(f"{filepath}: {member} entry {key!r} has dtype {value.dtype}, "
                                 "expected numbers")
    return arrays


def _non_negative_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_header(header, filepath):
    """The training position and compile settings of a model file, checked before use."""
    for field in ("trained_epochs", "seed"):
        if field in header and not _non_negative_int(header[field]):
            raise ModelFileError(f"{filepath}: {field} must be an int >= 0, got {header[field]!r}")
    state = header.get("fit_state") or {}
    if not isinstance(state, dict) or not all(_non_negative_int(state.get(k, 0))
                                              for k in ("epoch", "step")):
        raise ModelFileError(f"{filepath}: fit_state must be an object with int epoch and step "
                             f">= 0, got {state!r}")
    c = header.get("compile")
    if c is not None and (not isinstance(c, dict)
                          or not {"optimizer", "loss", "metrics"} <= set(c)):
        raise ModelFileError(f"{filepath}: compile must be null or an object with optimizer, "
                             f"loss and metrics, got {c!r}")


def _apply_weights(model, weights, filepath):
    by_position = {}
    for key, value in weights.items():
        parts = key.split("/", 2)   # "<layer index>/<layer name>/<weight name>"
        if len(parts) != 3 or not parts[0].isdigit():
            raise ModelFileError(f"{filepath}: weight entry {key!r} is not named "
                                 "'<layer index>/<layer name>/<weight name>'")
        by_position[(int(parts[0]), parts[2])] = value
    expected = sum(len(layer.weights) for layer in model.layers)
    if len(by_position) != expected:
        raise ModelFileError(f"{filepath} holds {len(by_position)} weight arrays, "
                             f"{model.describe()} has {expected}")
    for i, layer in enumerate(model.layers):
        values = []
        for w in layer.weights:
            if (i, w.name) not in by_position:
                raise ModelFileError(f"{filepath} has no weight {w.name!r} for layer {i} "
                                     f"({layer.describe()})")
            values.append(by_position[(i, w.name)])
        if values:
            try:
                layer.set_weights(values)
            except (TypeError, ValueError) as exc:
                raise ModelFileError(f"{filepath}: {exc}") from None


def load_model(filepath, compile=True, custom_objects=None, safe_mode=True):
    """Rebuild a model saved with model.save(), on the active backend, ready to resume.
    custom_objects ({name: class}) names classes of your own; a file never runs code, so
    safe_mode is always on."""
    header, arrays = _read_zip(filepath, (FORMAT,))
    _check_header(header, filepath)
    try:
        with custom_object_scope(custom_objects):
            model = model_from_config(header["model"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{filepath}: the model architecture cannot be rebuilt: {exc}") from None
    _apply_weights(model, arrays.get("weights.npz", {}), filepath)
    model.trained_epochs = int(header.get("trained_epochs", 0))
    model.seed = int(header.get("seed", model.seed))
    model.fit_state = header.get("fit_state") or {}
    if compile and header.get("compile"):
        c = header["compile"]
        try:
            model.compile(optimizer=optimizers_mod.deserialize(c["optimizer"]),
                          loss=losses_mod.get(c["loss"]), metrics=c["metrics"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{filepath}: the compile settings cannot be restored: "
                                 f"{exc}") from None
        if "optimizer.npz" in arrays:
            try:
                model.optimizer.set_state(model.backend, arrays["optimizer.npz"])
            except ValueError as exc:
                raise ModelFileError(f"{filepath}: {exc}") from None
    return model


def load_weights(model, filepath):
    model._require_built("load_weights")
    header, arrays = _read_zip(filepath, (FORMAT, WEIGHTS_FORMAT))
    _apply_weights(model, arrays.get("weights.npz", {}), filepath)
