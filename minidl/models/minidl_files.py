"""Model files: one zip holding the architecture (JSON) and the weights (npz).

    minidl_model.json   format tag, model config, compile config, training position
    weights.npz         every layer weight, named "<layer>/<weight>"
    optimizer.npz       the optimizer state (slots and iteration count), when compiled

Nothing is pickled, so loading a downloaded model file cannot execute code. Reading is
bounded: only the three members above are accepted, each refused unread when the zip
directory gives it more bytes than the architecture's weights need, and every array's .npy
header is checked before its data is read. A failed load changes no weight. Files are
written through atomic_write, so a crash never leaves half a model; any bad file raises
ModelFileError naming it.
"""

import io
import json
import os
import zipfile

import numpy as np

from .. import losses as losses_mod
from .. import optimizers as optimizers_mod
from .. import layers as layers_mod
from ..layers import custom_call
from ..custom_objects import custom_object_scope
from ..io import ArchiveError, NpzArchive, ZipArchive, atomic_write, element_count
from ..layers.base import several_shapes
from .config import node_arguments, replay
from .registry import MODEL_CLASSES, model_class

FORMAT = "minidl-model"
WEIGHTS_FORMAT = "minidl-weights"
VERSION = 1


class ModelFileError(ValueError):
    """A model or weights file that cannot be read: missing, truncated, corrupted or foreign."""


def _check_architecture(config, depth=0):
    """The parts of a model config that from_config indexes, checked for type first
    (nested models' configs too, to a bounded depth)."""
    if depth > 32:
        raise ValueError("models are nested more than 32 deep")
    if not isinstance(config, dict) or not isinstance(config.get("layers"), list) \
            or not config["layers"]:
        raise ValueError("the model config must be an object with a non-empty 'layers' list")
    functional = config.get("class_name") != "Sequential"
    for i, spec in enumerate(config["layers"]):
        if not isinstance(spec, dict) or not isinstance(spec.get("class_name"), str) \
                or not isinstance(spec.get("config"), dict) \
                or not isinstance(spec["config"].get("name", ""), str):
            raise ValueError(f"layer {i} must be an object with a class_name string and a config "
                             f"object, got {spec!r:.200}")
        if spec["class_name"] in MODEL_CLASSES:
            _check_architecture(spec["config"], depth + 1)
        nodes = spec.get("inbound_nodes", [])
        if not isinstance(nodes, list) or not all(
                isinstance(n, dict) and isinstance(n.get("args"), list) and n.get("training")
                in (None, True, False) and all(isinstance(r, list) and len(r) == 3
                                               and isinstance(r[0], str) for r in n["args"])
                for n in nodes):
            raise ValueError(f"layer {i}: inbound_nodes must be a list of {{args: [[name, node, "
                             f"tensor], ...], training}}, got {nodes!r:.200}")
        if functional and spec["class_name"] != "InputLayer" and not nodes:
            raise ValueError(f"layer {i} ({spec['class_name']}) has no inbound layers "
                             "(inbound_nodes is empty)")
    if functional:
        for key in ("input_layers", "output_layers"):
            if not isinstance(config.get(key), list) or not config[key]:
                raise ValueError(f"the model config needs a non-empty {key} list")


def _declared_weights(config):
    """(weight arrays, parameters, output shapes) that a checked architecture declares, from
    its layers built for shapes only: nothing is allocated, so a huge layer is refused
    before it is."""
    counted = {}   # spec position -> (item, arrays, params), each layer or model counted once

    def start(spec):
        if spec["class_name"] != "InputLayer":
            return None
        return [layers_mod.deserialize(spec["class_name"], spec["config"]).shape]

    def call(position, spec, shapes, training, kwargs=None):
        if spec["class_name"] in MODEL_CLASSES:
            if position not in counted:
                counted[position] = (None,) + _declared_weights(spec["config"])
            return counted[position][3]
        if position not in counted:
            counted[position] = (layers_mod.deserialize(spec["class_name"], spec["config"]),)
        layer = counted[position][0]
        shapes, options = node_arguments(layer, shapes, kwargs)
        custom_call.restore_layout(layer, layer.check_call_options(options))
        layer.accept_node_inputs(len(shapes))
        if not layer.multiple_inputs and len(shapes) != 1:
            raise ValueError(f"{layer.describe()} takes one input, the config feeds it "
                             f"{len(shapes)}")
        given = list(shapes) if layer.multiple_inputs else shapes[0]
        layer.build_once(given)
        counted[position] = (layer, len(layer.weights), layer.count_params())
        # this call's output (a shared layer's calls may differ), a list of shapes for a call
        # of several outputs
        shape = layer.node_output_shape(given, options)
        return list(shape) if several_shapes(shape) else [shape]

    if config.get("class_name") == "Sequential":
        specs = config["layers"]
        if specs[0]["class_name"] != "InputLayer":
            raise ValueError("a Sequential config starts with its InputLayer")
        shapes = start(specs[0])
        for position, spec in enumerate(specs[1:], start=1):
            if spec["class_name"] == "InputLayer":
                raise ValueError("a Sequential config has one InputLayer, first")
            shapes = call(position, spec, shapes, None)
        outputs = shapes
    else:
        _, outputs = replay(config, start, call, "the model config")
    arrays = sum(entry[1] for entry in counted.values())
    params = sum(entry[2] for entry in counted.values())
    return arrays, params, outputs


def named_weights(item):
    """[(name, Weight)] of a layer, or of a nested model as "<position>:<layer>/<weight>"
    paths; files are matched on positions and weight names (_match_key), so a model rebuilt
    with other automatic layer names loads, as Keras matches by structure."""
    if hasattr(item, "graph"):
        return [(f"{j:04d}:{layer.name}/{name}", w)
                for j, layer in enumerate(item._weighted_layers)
                for name, w in named_weights(layer)]
    weights = item.weights
    names = [w.name for w in weights]
    if len(set(names)) == len(names):
        return list(zip(names, weights))
    # a custom layer holding sublayers ("kernel" twice): the weight's position tells them apart
    return [(f"{k:04d}:{w.name}", w) for k, w in enumerate(weights)]


def _match_key(path):
    """'0001:dense_3/kernel' -> '0001/kernel': a nested path without its layer names."""
    return "/".join(part.split(":", 1)[0] for part in path.split("/"))


def _npz_bytes(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _weights_dict(model):
    # Keys "<layer index>/<layer name>/<weight name>": load_weights matches layers by
    # position (as Keras does), so a rebuilt model with other auto-generated names loads too.
    arrays = {}
    for i, layer in enumerate(model._weighted_layers):
        for (name, _), value in zip(named_weights(layer), layer.get_weights()):
            arrays[f"{i:04d}/{layer.name}/{name}"] = value
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
    # a subclassed model's architecture is its class (by name) and config (subclassing.py)
    architecture = getattr(model, "saved_architecture", model.get_config)()
    header = {"format": FORMAT, "version": VERSION, "model": architecture,
              "trained_epochs": model.trained_epochs, "seed": model.seed,
              "fit_state": model.fit_state, "compile": None}
    files = {"weights.npz": _npz_bytes(_weights_dict(model))}
    if model.compiled:
        header["compile"] = compile_config(model)
        if include_optimizer:
            files["optimizer.npz"] = _npz_bytes(model.optimizer.get_state(model.backend))
    files["minidl_model.json"] = json.dumps(header).encode()
    _write_zip(filepath, files)


def compile_config(model):
    heads = model._heads
    if not heads:   # compiled without a loss (the layers add theirs, or a train_step's own)
        return {"optimizer": optimizers_mod.serialize(model.optimizer), "loss": None,
                "loss_weights": None, "metrics": None, "weighted_metrics": None}
    if len(heads) == 1:
        loss, weights = losses_mod.serialize(heads[0].loss), None
        metrics, weighted = heads[0].compiled_metrics
    else:
        loss = {h.name: losses_mod.serialize(h.loss) for h in heads}
        weights = {h.name: h.weight for h in heads}
        metrics = {h.name: h.compiled_metrics[0] for h in heads}
        weighted = {h.name: h.compiled_metrics[1] for h in heads}
    return {"optimizer": optimizers_mod.serialize(model.optimizer), "loss": loss,
            "loss_weights": weights, "metrics": metrics, "weighted_metrics": weighted or None}


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


HEADER = "minidl_model.json"
MEMBERS = (HEADER, "weights.npz", "optimizer.npz")
MAX_HEADER_BYTES = 16 << 20
# Room an npz needs besides its data: per array the .npy header, two zip headers and the name.
_NPZ_ENTRY_BYTES = 4096
_NPZ_BYTES = 1 << 16


class _ModelFile:
    """An open model file: the checked header, and its npz members read on request, each
    refused unread when the zip directory says it is larger than what it must hold."""

    def __init__(self, filepath, formats):
        self.path = _path(filepath, "load")
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"no model file at {self.path}")
        self._archive = _checked(lambda: ZipArchive(self.path, MEMBERS), self.path)
        try:
            self.header = self._read_header(formats)
        except BaseException:
            self._archive.close()
            raise

    def _read_header(self, formats):
        if HEADER not in self._archive.members:
            raise ModelFileError(f"{self.path} is not a minidl model file: it has no {HEADER}")
        data = _checked(lambda: self._archive.read(HEADER, MAX_HEADER_BYTES), self.path)
        try:
            header = json.loads(data)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise ModelFileError(f"{self.path}: {HEADER} is not readable JSON: "
                                 f"{type(exc).__name__}: {str(exc)[:200]}") from None
        if not isinstance(header, dict):
            raise ModelFileError(f"{self.path}: {HEADER} holds a {type(header).__name__}, "
                                 "expected an object")
        if header.get("format") not in formats:
            raise ModelFileError(f"{self.path} is a {header.get('format')!r:.100} file, expected "
                                 f"{' or '.join(formats)}")
        if header.get("version") != VERSION:
            raise ModelFileError(f"{self.path} has format version {header.get('version')!r:.100}, "
                                 f"this minidl reads version {VERSION}")
        return header

    def npz(self, name, arrays, elements):
        """Member `name` as an NpzArchive (None when absent), read only if its size fits
        `arrays` arrays of `elements` numbers in all (8 bytes each at most)."""
        if name not in self._archive.members:
            return None
        limit = _NPZ_BYTES + arrays * _NPZ_ENTRY_BYTES + 8 * elements
        data = _checked(lambda: self._archive.read(name, limit), self.path)
        return _checked(lambda: NpzArchive(data, f"{self.path}: {name}"), self.path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._archive.close()


def _checked(read, filepath):
    """read(), with an ArchiveError turned into a ModelFileError (its message names the file)."""
    try:
        return read()
    except ArchiveError as exc:
        raise ModelFileError(str(exc)) from None


def _non_negative_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_header(header, filepath):
    """The training position and compile settings of a model file, checked before use."""
    for field in ("trained_epochs", "seed"):
        if field in header and not _non_negative_int(header[field]):
            raise ModelFileError(f"{filepath}: {field} must be an int >= 0, got {header[field]!r:.100}")
    state = header.get("fit_state") or {}
    if not isinstance(state, dict) or not all(_non_negative_int(state.get(k, 0))
                                              for k in ("epoch", "step")):
        raise ModelFileError(f"{filepath}: fit_state must be an object with int epoch and step "
                             f">= 0, got {state!r:.200}")
    c = header.get("compile")
    if c is not None and (not isinstance(c, dict)
                          or not {"optimizer", "loss", "metrics"} <= set(c)):
        raise ModelFileError(f"{filepath}: compile must be null or an object with optimizer, "
                             f"loss and metrics, got {c!r:.200}")
    if not isinstance(header.get("model"), dict):
        raise ModelFileError(f"{filepath}: model must be an object (the architecture)")


def _weight_keys(npz, filepath):
    """(layer index, weight name) -> npz key, for keys "<layer index>/<layer name>/<weight>"."""
    by_position = {}
    for key in (npz.entries if npz is not None else {}):
        parts = key.split("/", 2)
        if len(parts) != 3 or not parts[0].isdigit():
            raise ModelFileError(f"{filepath}: weight entry {key!r} is not named "
                                 "'<layer index>/<layer name>/<weight name>'")
        by_position[(int(parts[0]), _match_key(parts[2]))] = key
    return by_position


def _apply_weights(model, npz, filepath):
    """Check every array of `npz` against the model (shapes from the .npy headers before any
    is read, values after conversion to the backend dtype), then assign them all."""
    by_position = _weight_keys(npz, filepath)
    expected = sum(len(layer.weights) for layer in model._weighted_layers)
    if len(by_position) != expected or (npz is not None and len(npz.entries) != expected):
        raise ModelFileError(f"{filepath} holds {len(by_position)} weight arrays, "
                             f"{model.describe()} has {expected}")
    for i, layer in enumerate(model._weighted_layers):
        for name, w in named_weights(layer):
            key = by_position.get((i, _match_key(name)))
            if key is None:
                raise ModelFileError(f"{filepath} has no weight {name!r} for layer {i} "
                                     f"({layer.describe()})")
            if npz.entries[key][0] != w.shape:
                raise ModelFileError(f"{filepath}: {layer.describe()}: weight {name!r} has shape "
                                     f"{w.shape}, the file's has {npz.entries[key][0]}")
    checked = []
    for i, layer in enumerate(model._weighted_layers):
        values = [npz.array(by_position[(i, _match_key(name))])
                  for name, _ in named_weights(layer)]
        try:
            checked.append(layer.check_weights(values))
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"{filepath}: {exc}") from None
    for layer, arrays in zip(model._weighted_layers, checked):
        layer.assign_weights(arrays)


def _optimizer_state(model, npz, filepath):
    """The optimizer state arrays of `npz`, their keys and shapes checked before any is read."""
    expected = model.optimizer.state_shapes()
    given = set(npz.entries) - {"iterations"}
    if given != set(expected) or "iterations" not in npz.entries:
        raise ModelFileError(f"{filepath}: optimizer.npz does not match {model.describe()}'s "
                             f"optimizer: missing {sorted(set(expected) - given)[:6]}, "
                             f"unexpected {sorted(given - set(expected))[:6]}")
    for key, shape in expected.items():
        if npz.entries[key][0] != shape:
            raise ModelFileError(f"{filepath}: optimizer state {key!r} has shape "
                                 f"{npz.entries[key][0]}, its weight has shape {shape}")
    if npz.entries["iterations"][0] not in ((), (1,)):
        raise ModelFileError(f"{filepath}: optimizer iterations must be one integer")
    return {key: npz.array(key) for key in npz.entries}


def load_model(filepath, compile=True, custom_objects=None, safe_mode=True):
    """Rebuild a model saved with model.save(), on the active backend, ready to resume.

    Everything is checked before it is used: the zip directory (known members, sizes), the
    architecture against the weights (their count and total size, before any weight is
    allocated), each array's header before its data is read, then values.
    custom_objects ({name: class}) names classes of your own; a file never runs code, so
    safe_mode is always on.
    """
    with custom_object_scope(custom_objects):
        return _load_model(filepath, compile)


def _load_model(filepath, compile):
    with _ModelFile(filepath, (FORMAT,)) as f:
        header, path = f.header, f.path
        _check_header(header, path)
        config = header["model"]
        kind = config.get("class_name")
        restore = getattr(MODEL_CLASSES.get(kind), "restore", None) if isinstance(kind, str) else None
        if restore is not None:   # a subclassed model: rebuilt by its own class's code
            model = restore(config, path, ModelFileError)
            _apply_weights(model, f.npz("weights.npz", sum(len(layer.weights) for layer in
                                                           model._weighted_layers),
                                        model.count_params()), path)
            return _restore_state(model, header, f, path, compile)
        try:
            _check_architecture(config)
            cls = model_class(config.get("class_name"))
            arrays, params, _ = _declared_weights(config)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
            raise ModelFileError(f"{path}: the model architecture cannot be rebuilt: "
                                 f"{type(exc).__name__}: {str(exc)[:300]}") from None
        weights = f.npz("weights.npz", arrays, params)
        held = _weight_keys(weights, path)
        entries = weights.entries.values() if weights is not None else ()
        numbers = sum(element_count(shape) for shape, _ in entries)
        if (len(held), numbers) != (arrays, params):
            raise ModelFileError(f"{path}: the architecture declares {arrays} weight arrays of "
                                 f"{params} parameters, the file holds {len(held)} of {numbers}")
        try:
            model = cls.from_config(config)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{path}: the model architecture cannot be rebuilt: {exc}") from None
        _apply_weights(model, weights, path)
        return _restore_state(model, header, f, path, compile)


def _restore_state(model, header, f, path, compile):
    """The training position and (compile=True) the compile settings and optimizer state."""
    model.trained_epochs = int(header.get("trained_epochs", 0))
    model.seed = int(header.get("seed", model.seed))
    model.fit_state = header.get("fit_state") or {}
    if compile and header.get("compile"):
        _compile_from(model, header["compile"], f, path)
    return model


def compile_from_config(model, c, optimizer=None):
    """model.compile with the settings compile_config() wrote; `optimizer` (an optimizer
    object) replaces the saved one (minidl.distributed.load_model wraps it)."""
    loss = c["loss"]
    if loss is None or loss == {}:
        loss = None
    elif isinstance(loss, dict) and "class_name" not in loss:   # one loss per output
        loss = {name: losses_mod.get(spec) for name, spec in loss.items()}
    else:
        loss = losses_mod.get(loss)
    model.compile(optimizer=optimizer or optimizers_mod.deserialize(c["optimizer"]), loss=loss,
                  loss_weights=c.get("loss_weights"), metrics=c["metrics"],
                  weighted_metrics=c.get("weighted_metrics"))


def _compile_from(model, c, f, path):
    try:
        compile_from_config(model, c)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"{path}: the compile settings cannot be restored: {exc}") from None
    shapes = model.optimizer.state_shapes()
    state = f.npz("optimizer.npz", len(shapes) + 1,
                  sum(element_count(s) for s in shapes.values()) + 1)
    if state is not None:
        try:
            model.optimizer.set_state(model.backend, _optimizer_state(model, state, path))
        except ValueError as exc:
            raise ModelFileError(f"{path}: {exc}") from None


def load_weights(model, filepath):
    model._require_built("load_weights")
    with _ModelFile(filepath, (FORMAT, WEIGHTS_FORMAT)) as f:
        weights = f.npz("weights.npz", sum(len(layer.weights) for layer in model._weighted_layers),
                        model.count_params())
        _apply_weights(model, weights, f.path)
