"""Quantized model files: one zip, written atomically, read without running code.

    minidl_quantized.json   format tag, the float model's config, the quantization steps
    weights.npz             the float model's weights (its non-int8 layers run from them)
    quantized.npz           per int8 layer: packed int8 weights, column offsets, multipliers,
                            weight scales

Reading is bounded as minidl/models/minidl_files.py's: known members only, each refused unread when
the zip directory gives it more bytes than the architecture allows, every .npy header (shape,
dtype) checked against what the architecture needs before its data is read.
"""

import json
import math
import os
import numbers
import zipfile

import numpy as np

from .. import activations
from ..backends.contract.quantized import NR
from ..io import ArchiveError, NpzArchive, ZipArchive, atomic_write
from ..models.minidl_files import (MAX_HEADER_BYTES, ModelFileError, _apply_weights, _check_architecture,
                             _declared_weights, _npz_bytes, _weights_dict)
from ..models.registry import model_class
from .calibration import METHODS
from .packing import WEIGHT_MAX
from .structure import plan_kinds

FORMAT = "minidl-quantized-model"
VERSION = 1
HEADER = "minidl_quantized.json"
MEMBERS = (HEADER, "weights.npz", "quantized.npz")
_ENTRY_BYTES, _BASE_BYTES = 4096, 1 << 16


def save_quantized(qmodel, filepath, overwrite=True):
    filepath = os.fspath(filepath)
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    header = {"format": FORMAT, "version": VERSION, "model": qmodel.float_model.get_config(),
              "method": qmodel.method, "steps": qmodel.steps}
    files = {HEADER: json.dumps(header).encode(),
             "weights.npz": _npz_bytes(_weights_dict(qmodel.float_model)),
             "quantized.npz": _npz_bytes(qmodel.arrays)}
    with atomic_write(filepath, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
            for name, data in files.items():
                z.writestr(name, data)


def _expected_arrays(model, steps):
    """{key: (shape, dtype)} of quantized.npz for the rebuilt float model's int8 layers."""
    expected = {}
    for i, (node, step) in enumerate(zip(model.graph.nodes, steps)):
        if step["kind"] not in ("conv", "dense"):
            continue
        shape = node.layer.kernel.shape
        k, n = math.prod(shape[:-1]), shape[-1]
        packed = (-(-k // 4) * 4) * (-(-n // NR) * NR)
        expected.update({f"{i}/w": ((packed,), np.int8), f"{i}/column_offset": ((n,), np.int32),
                         f"{i}/multiplier": ((n,), np.float32), f"{i}/weight_scale": ((n,), np.float32)})
    return expected


def _qparams_ok(value):
    return (isinstance(value, list) and len(value) == 2 and isinstance(value[0], numbers.Real)
            and not isinstance(value[0], bool) and math.isfinite(value[0]) and value[0] > 0
            and isinstance(value[1], int) and not isinstance(value[1], bool) and 0 <= value[1] <= 255)


def _check_steps(steps, path):
    if not isinstance(steps, list) or not all(isinstance(s, dict) and isinstance(s.get("kind"), str)
                                              for s in steps):
        raise ModelFileError(f"{path}: steps must be a list of objects with a kind")
    for i, s in enumerate(steps):
        if s["kind"] == "add":
            qin, mults = s.get("inputs"), s.get("multipliers")
            if not (isinstance(qin, list) and len(qin) == 2 and all(map(_qparams_ok, qin))
                    and _qparams_ok(s.get("output")) and isinstance(s.get("relu"), bool)
                    and isinstance(mults, list) and len(mults) == 2
                    and all(isinstance(m, int) and not isinstance(m, bool) and 0 < m < 2 ** 31
                            for m in mults)):
                raise ModelFileError(f"{path}: step {i} (add) needs two inputs and an output "
                                     f"[scale > 0, zero point 0..255], relu true/false and two "
                                     f"multipliers in (0, 2**31), got {s!r:.300}")
            continue
        if s["kind"] not in ("conv", "dense"):
            continue
        act = s.get("float_activation")
        if not (_qparams_ok(s.get("input")) and (s.get("output") is None or _qparams_ok(s["output"]))
                and isinstance(s.get("relu"), bool)
                and (act is None or (isinstance(act, str) and act in activations.ACTIVATIONS))):
            raise ModelFileError(f"{path}: step {i} ({s['kind']}) needs input [scale > 0, zero "
                                 f"point 0..255], output null or the same, relu true/false and a "
                                 f"known float_activation or null, got {s!r:.300}")


def _check_kinds(model, steps, path):
    """Each step's kind is the one quantize gives its layer (a "conv" step on a Flatten would
    otherwise be read as a layer with a kernel)."""
    try:
        kinds, _ = plan_kinds(model.graph)
    except ValueError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    for i, (node, step, kind) in enumerate(zip(model.graph.nodes, steps, kinds)):
        if step["kind"] != kind["kind"]:
            raise ModelFileError(f"{path}: step {i} is {step['kind']!r}, but layer "
                                 f"{node.layer.name!r} ({type(node.layer).__name__}) quantizes "
                                 f"as {kind['kind']!r}")


def _check_arrays(model, steps, arrays, path):
    """The values quantize can write: weights within the 7-bit range every kernel path sums
    exactly (AVX2's vpmaddubsw saturates beyond it, packing.py), and finite positive
    multipliers and weight scales (a zero, NaN or inf one makes every output 0, NaN or inf)."""
    for i, (node, step) in enumerate(zip(model.graph.nodes, steps)):
        if step["kind"] not in ("conv", "dense"):
            continue
        name = node.layer.name
        w = arrays[f"{i}/w"]
        if w.size and (int(w.min()) < -WEIGHT_MAX or int(w.max()) > WEIGHT_MAX):
            raise ModelFileError(f"{path}: layer {name!r} has int8 weights in [{int(w.min())}, "
                                 f"{int(w.max())}], outside the 7-bit range [-{WEIGHT_MAX}, "
                                 f"{WEIGHT_MAX}] the int8 kernels assume")
        for key in ("multiplier", "weight_scale"):
            a = arrays[f"{i}/{key}"]
            bad = ~(np.isfinite(a) & (a > 0))
            if bad.any():
                raise ModelFileError(f"{path}: layer {name!r} has {key} {a[bad][0]!r} at column "
                                     f"{int(np.argmax(bad))}; each must be finite and > 0")


def load_quantized(filepath, build):
    """build(float model, steps, arrays, method) of what filepath holds, the float model on the
    active backend (build is QuantizedModel: this module does not import it)."""
    path = os.fspath(filepath)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no quantized model file at {path}")
    try:
        with ZipArchive(path, MEMBERS) as z:
            return _load(z, z.where, build)
    except ArchiveError as exc:
        raise ModelFileError(str(exc)) from None


def _load(z, path, build):
    if HEADER not in z.members:
        raise ModelFileError(f"{path} is not a minidl quantized model file: it has no {HEADER}")
    try:
        header = json.loads(z.read(HEADER, MAX_HEADER_BYTES))
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"{path}: {HEADER} is not readable JSON: {str(exc)[:200]}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION:
        raise ModelFileError(f"{path} is not a {FORMAT} file of version {VERSION}")
    config, steps = header.get("model"), header.get("steps")
    if header.get("method") not in METHODS:
        raise ModelFileError(f"{path}: method must be one of {', '.join(METHODS)}, got "
                             f"{header.get('method')!r:.100}")
    _check_steps(steps, path)
    try:
        _check_architecture(config)
        arrays, params, _ = _declared_weights(config)
        model = model_class(config.get("class_name")).from_config(config)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise ModelFileError(f"{path}: the model architecture cannot be rebuilt: "
                             f"{type(exc).__name__}: {str(exc)[:300]}") from None
    if "weights.npz" not in z.members or "quantized.npz" not in z.members:
        raise ModelFileError(f"{path} lacks weights.npz or quantized.npz")
    weights = NpzArchive(z.read("weights.npz", _BASE_BYTES + arrays * _ENTRY_BYTES + 8 * params),
                         f"{path}: weights.npz")
    _apply_weights(model, weights, path)
    if len(steps) != len(model.graph.nodes):
        raise ModelFileError(f"{path}: {len(steps)} steps for {len(model.graph.nodes)} layers")
    _check_kinds(model, steps, path)
    expected = _expected_arrays(model, steps)
    limit = _BASE_BYTES + len(expected) * _ENTRY_BYTES + sum(
        math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in expected.values())
    npz = NpzArchive(z.read("quantized.npz", limit), f"{path}: quantized.npz")
    if set(npz.entries) != set(expected):
        raise ModelFileError(f"{path}: quantized.npz holds {sorted(npz.entries)[:6]}, the int8 "
                             f"layers need {sorted(expected)[:6]}")
    for key, (shape, dtype) in expected.items():
        if npz.entries[key] != (shape, np.dtype(dtype)):
            raise ModelFileError(f"{path}: quantized.npz array {key!r} is {npz.entries[key]}, "
                                 f"expected {(shape, np.dtype(dtype))}")
    arrays = {key: npz.array(key).copy() for key in expected}
    _check_arrays(model, steps, arrays, path)
    try:
        return build(model, steps, arrays, header.get("method"))
    except ValueError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
