"""Keras 3's .keras zip, read and written:

    config.json        {"module", "class_name", "config", "registered_name", "build_config",
                        "compile_config"}: the model as keras.saving.serialize_keras_object
    metadata.json      {"keras_version", "date_saved"} (+ "minidl": the training position,
                        which Keras ignores)
    model.weights.h5   the weights in Keras 3's HDF5 layout (weights_h5.py)

Reading is bounded: only these members are read (an assets/ folder is skipped), the JSON
members up to a size limit, the architecture checked and its parameter count compared with
the weights member's size before a weight is allocated, then only the datasets the
architecture declares. A stored (uncompressed) weights member is read in place, through a
window on the zip file, not copied into memory.
"""

import datetime
import io
import json
import zipfile

from .. import losses as losses_mod
from .. import optimizers as optimizers_mod
from ..io import ArchiveError, atomic_write, _check_info, _open_zip, _read
from ..models.minidl_files import (ModelFileError, _check_architecture, _declared_weights,
                             _non_negative_int)
from ..models.registry import MODEL_CLASSES, model_class
from . import configs
from .optimizer_h5 import read_optimizer, write_optimizer
from .state_walk import is_subclassed
from .weights_h5 import h5py, keras_layer_order, read_keras_weights, write_keras_weights

KERAS_VERSION = "3.15.1"      # the Keras release whose format minidl writes (and was checked with)
CONFIG, METADATA, WEIGHTS = "config.json", "metadata.json", "model.weights.h5"
MAX_JSON_BYTES = 64 << 20
# HDF5's own bytes beside the data: the superblock and every group (one or two per layer:
# 8 MB hold thousands), and per dataset its header
_H5_BYTES, _H5_ENTRY_BYTES = 8 << 20, 1 << 12
# an optimizer's state is at most this many arrays per weight (Adam with amsgrad and EMA: 4)
_OPTIMIZER_COPIES = 5


# ------------------------------------------------------------------ writing
def save_keras(model, filepath, include_optimizer=True):
    """model.save("x.keras"): Keras 3's zip, which real Keras loads (keras.saving.load_model)."""
    try:
        spec = model_spec(model)
    except ValueError as exc:
        raise ValueError(f"save {filepath}: {exc}") from None
    if model.compiled:
        spec["compile_config"] = compile_to_keras(model)
    metadata = {"keras_version": KERAS_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                "minidl": {"trained_epochs": model.trained_epochs, "seed": model.seed,
                           "fit_state": model.fit_state}}
    weights = weights_bytes(model, include_optimizer and model.compiled)
    with atomic_write(filepath, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(METADATA, json.dumps(metadata))
            z.writestr(CONFIG, json.dumps(spec))
            z.writestr(WEIGHTS, weights)


def model_spec(model):
    """Keras's serialized model: a subclassed one by its class and get_config, a Sequential
    or functional one layer by layer."""
    if is_subclassed(model):
        return configs.subclassed_to_keras(model)
    return configs.model_to_keras(model)


def weights_bytes(model, include_optimizer=False):
    """The model's weights (and its optimizer's state) as a Keras 3 .weights.h5 file's bytes."""
    buf = io.BytesIO()
    with h5py().File(buf, "w") as f:
        write_keras_weights(f, model)
        if include_optimizer:
            write_optimizer(f, model)
    return buf.getvalue()


def save_weights_h5(model, filepath):
    """model.save_weights("x.weights.h5"): HDF5 in Keras 3's layout."""
    if not is_subclassed(model):
        configs.model_to_keras(model)    # refuses what Keras's layout cannot hold, before writing
    data = weights_bytes(model, model.compiled)   # Keras's save_weights writes it too
    with atomic_write(filepath, "wb") as f:
        f.write(data)


def _keras_object(serialized, module):
    return {"module": module, "class_name": serialized["class_name"],
            "config": serialized.get("config", {}), "registered_name": None}


def compile_to_keras(model):
    heads = model._heads
    loss = [_keras_object(losses_mod.serialize(h.loss), "keras.losses") for h in heads]
    if len(heads) == 1:
        loss, weights = loss[0], None
        metrics, weighted = heads[0].compiled_metrics
    else:
        loss = {h.name: spec for h, spec in zip(heads, loss)}
        weights = {h.name: h.weight for h in heads}
        metrics = {h.name: h.compiled_metrics[0] for h in heads}
        weighted = {h.name: h.compiled_metrics[1] for h in heads}
    return {"optimizer": _keras_object(optimizers_mod.serialize(model.optimizer),
                                       "keras.optimizers"),
            "loss": loss, "loss_weights": weights, "metrics": metrics or None,
            "weighted_metrics": weighted or None, "run_eagerly": False,
            "steps_per_execution": 1, "jit_compile": False}


# ------------------------------------------------------------------ reading
class _Window(io.RawIOBase):
    """Bytes [start, start + size) of an open file, as a file of their own (for h5py)."""

    def __init__(self, f, start, size):
        self._f, self._start, self._size, self._pos = f, start, size, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=0):
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, b):
        n = max(0, min(len(b), self._size - self._pos))
        self._f.seek(self._start + self._pos)
        got = self._f.readinto(memoryview(b)[:n])
        self._pos += got
        return got


def _data_offset(f, info):
    """Where a stored member's bytes start: after its local header (name and extra field)."""
    f.seek(info.header_offset)
    header = f.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise ModelFileError(f"member {info.filename!r} has no local header")
    name_len = int.from_bytes(header[26:28], "little")
    extra_len = int.from_bytes(header[28:30], "little")
    return info.header_offset + 30 + name_len + extra_len


class KerasZip:
    """An open .keras file: its members checked, JSON members read on request."""

    def __init__(self, path):
        self.path = path
        try:
            self._zip = _open_zip(path, path)
            self.members = {}
            for info in self._zip.infolist():
                if info.filename.startswith("assets/"):
                    continue    # minidl's layers have no assets; never read
                if info.filename not in (CONFIG, METADATA, WEIGHTS):
                    raise ArchiveError(f"{path}: unknown member {info.filename!r}; a .keras "
                                       f"file holds {CONFIG}, {METADATA} and {WEIGHTS}")
                _check_info(info, path)
                self.members[info.filename] = info
        except ArchiveError as exc:
            raise ModelFileError(str(exc)) from None
        for name in (CONFIG, WEIGHTS):
            if name not in self.members:
                self.close()
                raise ModelFileError(f"{path} is not a Keras model file: it has no {name}")

    def json(self, name):
        info = self.members.get(name)
        if info is None:
            return None
        if info.file_size > MAX_JSON_BYTES:
            raise ModelFileError(f"{self.path}: {name} has {info.file_size} bytes, more than "
                                 f"the {MAX_JSON_BYTES} a config may have")
        try:
            return json.loads(_read(self._zip, info, self.path))
        except ArchiveError as exc:
            raise ModelFileError(str(exc)) from None
        except (ValueError, RecursionError) as exc:
            raise ModelFileError(f"{self.path}: {name} is not readable JSON: "
                                 f"{type(exc).__name__}: {str(exc)[:200]}") from None

    def weights(self, params, arrays):
        """The weights member as an open h5py File, refused unread when it is too small to
        hold `params` float32 numbers or larger than they, an optimizer's state (up to
        _OPTIMIZER_COPIES copies of them) and HDF5's headers need."""
        info = self.members[WEIGHTS]
        need = 4 * params
        limit = _H5_BYTES + _H5_ENTRY_BYTES * arrays * (1 + _OPTIMIZER_COPIES) \
            + 4 * params * (1 + _OPTIMIZER_COPIES)
        if info.file_size < need or info.file_size > limit:
            raise ModelFileError(f"{self.path}: {WEIGHTS} has {info.file_size} bytes, the "
                                 f"architecture's {params} parameters need {need} to {limit}")
        try:
            if info.compress_type == zipfile.ZIP_STORED:
                raw = open(self.path, "rb")
                self._raw = raw
                source = io.BufferedReader(_Window(raw, _data_offset(raw, info), info.file_size))
            else:
                source = io.BytesIO(_read(self._zip, info, self.path))
            return h5py().File(source, "r")
        except ArchiveError as exc:
            raise ModelFileError(str(exc)) from None
        except OSError as exc:
            raise ModelFileError(f"{self.path}: {WEIGHTS} is not an HDF5 file: {exc}") from None

    def close(self):
        self._zip.close()
        if getattr(self, "_raw", None) is not None:
            self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def build_model(keras_spec, path):
    """A minidl model (fresh weights) from Keras's serialized model, every part checked,
    and its (arrays, params) count."""
    if isinstance(keras_spec, dict) and keras_spec.get("class_name") not in _GRAPH_MODELS:
        model = build_subclassed(keras_spec, path)
        return (lambda: model), len(model.weights), model.count_params()
    try:
        config = configs.model_from_keras(keras_spec)
        _check_architecture(config)
        arrays, params, _ = _declared_weights(config)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise ModelFileError(f"{path}: the model architecture cannot be rebuilt: "
                             f"{type(exc).__name__}: {str(exc)[:300]}") from None

    def make():
        try:
            return model_class(config["class_name"]).from_config(config)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{path}: the model architecture cannot be rebuilt: "
                                 f"{exc}") from None
    return make, arrays, params


_GRAPH_MODELS = ("Sequential", "Functional", "Model")


def build_subclassed(spec, path):
    """A subclassed model from Keras's spec (its class, registered or in custom_objects,
    from_config, then built for the shape in build_config), fresh weights. A class that
    cannot be found is Keras's TypeError."""
    SubclassedModel = MODEL_CLASSES["SubclassedModel"]
    if not isinstance(spec.get("config"), dict):
        raise ModelFileError(f"{path}: the model spec has no config object: {spec!r:.200}")
    key, cls = configs.subclassed_class(spec)
    if cls is None:
        raise TypeError(f"Could not locate class {spec.get('class_name')!r}. Make sure custom "
                        "classes and functions are decorated with "
                        "`@keras.saving.register_keras_serializable()`. If they are already "
                        "decorated, make sure they are all imported so that the decorator is "
                        "run before trying to load them. Full object config: "
                        f"{str(spec)[:1000]}")
    if not issubclass(cls, SubclassedModel):
        raise ModelFileError(f"{path}: {cls.__name__} is not a Model subclass that defines "
                             "call(); minidl rebuilds such models, and Sequential and "
                             "functional ones")
    shape = (spec.get("build_config") or {}).get("input_shape")
    many = isinstance(shape, list) and bool(shape) and all(isinstance(s, list) for s in shape)
    if not isinstance(shape, list) or not shape:
        raise ModelFileError(f"{path}: {spec.get('class_name')} was saved before it was "
                             "built (no build_config input_shape), so its weights cannot be "
                             "matched")
    shapes = [s[1:] for s in shape] if many else [shape[1:]]
    try:
        config = configs.subclassed_config(spec)
    except ValueError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    return SubclassedModel.restore({"class": key, "config": config, "input_shapes": shapes,
                                    "input_structure": "list" if many else "single"},
                                   path, ModelFileError)


def load_keras(path, compile=True):
    with KerasZip(path) as z:
        spec = z.json(CONFIG)
        metadata = z.json(METADATA) or {}
        make, arrays, params = build_model(spec, path)
        with z.weights(params, arrays) as f:
            model = make()
            orders = keras_layer_order(spec)
            read_keras_weights(f, model, path, orders=orders, stream=True)
            if compile and isinstance(spec, dict) and spec.get("compile_config"):
                compile_from_keras(model, spec["compile_config"], path)
                read_optimizer(f, model, path, orders)
    _restore_position(model, metadata.get("minidl") if isinstance(metadata, dict) else None)
    return model


def _restore_position(model, state):
    if not isinstance(state, dict):
        return
    if _non_negative_int(state.get("trained_epochs")):
        model.trained_epochs = state["trained_epochs"]
    if _non_negative_int(state.get("seed")):
        model.seed = state["seed"]
    fit = state.get("fit_state")
    if isinstance(fit, dict) and all(_non_negative_int(fit.get(k, 0)) for k in ("epoch", "step")):
        model.fit_state = fit


def _known_arguments(cls, config):
    import inspect
    params = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in config.items() if k in params}


def _loss_from_keras(spec):
    if isinstance(spec, dict) and isinstance(spec.get("class_name"), str):
        cls = losses_mod._CLASSES.get(spec["class_name"])
        if cls is not None:
            return cls(**_known_arguments(cls, spec.get("config") or {}))
    return losses_mod.get(spec)


# Keras optimizer settings minidl has no argument for, ignored while they hold these values
_KERAS_ONLY_OPTIMIZER = {"loss_scale_factor": None, "gradient_accumulation_steps": None,
                         "centered": False}


def _optimizer_spec(spec):
    """minidl's {"class_name", "config"} of Keras's serialized optimizer."""
    config = dict(spec.get("config") or {})
    for key, neutral in _KERAS_ONLY_OPTIMIZER.items():
        if key in config and config[key] == neutral:
            del config[key]
    lr = config.get("learning_rate")
    if isinstance(lr, dict):   # a schedule: {"module", "class_name", "config", ...}
        config["learning_rate"] = {"class_name": lr.get("class_name"), "config": lr.get("config")}
    return {"class_name": spec.get("class_name"), "config": config}


def compile_from_keras(model, c, path):
    """model.compile from Keras's compile_config (a setting minidl cannot take, or a class
    of your own not passed in custom_objects, is a ModelFileError)."""
    try:
        opt = c.get("optimizer")
        if isinstance(opt, dict):
            opt = optimizers_mod.deserialize(_optimizer_spec(opt))
        loss = c.get("loss")
        if isinstance(loss, dict) and "class_name" not in loss:
            loss = {name: _loss_from_keras(spec) for name, spec in loss.items()}
        elif isinstance(loss, list):
            loss = [_loss_from_keras(spec) for spec in loss]
        elif loss is not None:
            loss = _loss_from_keras(loss)
        model.compile(optimizer=opt, loss=loss, loss_weights=c.get("loss_weights"),
                      metrics=c.get("metrics"), weighted_metrics=c.get("weighted_metrics"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"{path}: the compile settings cannot be restored: "
                             f"{type(exc).__name__}: {str(exc)[:300]}") from None


def load_keras_weights(model, path, skip_mismatch=False):
    """model.load_weights("x.keras"): the weights of a Keras zip, matched by structure."""
    with KerasZip(path) as z:
        params = model.count_params()
        arrays = sum(len(layer.weights) for layer in model._weighted_layers)
        with z.weights(params, arrays) as f:
            read_keras_weights(f, model, path, skip_mismatch=skip_mismatch)
