"""Converted binary models in a bit-packed file: lq.save_converted(model, path) /
lq.load_converted(path). One zip, written to a temporary name then renamed, read without
running code:

    minidl_binary.json   format tag, the model's config, which layers' kernels are packed,
                         whether BatchNormalizations were folded (lq.convert's fold_batchnorm)
    weights.npz          every weight except the packed kernels (float32, as model files)
    packed.npz           per packed layer "<layer index>/kernel_bits": the signs of its kernel,
                         int32 (taps * ceil(C / 32), F) in binary_pack_kernel's layout; for a
                         ternary kernel "<layer index>/kernel_planes", int32 (2, taps * ceil(C / 32),
                         F): its two bit-planes (binary_inference._kernel_planes)

A kernel whose quantizer is a larq sign only ever computes with its signs (binary inference or
the float path alike), so a file holds 1 bit per weight for it (32x smaller) and the loaded
kernel is those signs as +-1 floats: predictions equal the saved model's (converted again on
load). A ternary kernel (ste_tern, fixed or TWN threshold) computes with its values in
{-1, 0, +1}, which the quantizer maps to themselves again (TWN's threshold, 0.7 times the mean
|value|, lies in (0, 1) whenever a value is not 0), so the file holds 2 bits per weight: plane a
is the value with 0 as +1, plane b with 0 as -1, and the loaded kernel is (a + b) / 2 (a -1 in a
with a +1 in b is refused). The latent float values are not kept: a model to train further is
saved with model.save.

Reading is bounded as minidl/models/minidl_files.py's: known members only, the header's size
limited, the architecture checked (and its weight count) before anything is allocated, each
member refused unread when the zip directory says it is larger than what the architecture
needs, every .npy header (keys, shapes, dtypes) checked before its data is read, and the bits
past a kernel's last channel required to be 0. Any mismatch is a ModelFileError.
"""

import json
import math
import os
import zipfile

import numpy as np

from ..io import ArchiveError, NpzArchive, ZipArchive, atomic_write
from ..models.minidl_files import (MAX_HEADER_BYTES, ModelFileError, _apply_weights, _check_architecture,
                                   _declared_weights, _npz_bytes, _weights_dict, named_weights)
from ..models.registry import model_class
from ..layers.calls import LayerCall
from .binary_inference import SIGN_QUANTIZERS, TERNARY_QUANTIZERS, convert

FORMAT = "minidl-binary-model"
VERSION = 1
HEADER = "minidl_binary.json"
MEMBERS = (HEADER, "weights.npz", "packed.npz")
_ENTRY_BYTES, _BASE_BYTES = 4096, 1 << 16


def _packable(model):
    """[(index in model._weighted_layers, layer)] of the top-level layers whose kernel only ever
    computes as its signs or ternary values: a larq layer with a sign or ste_tern
    kernel_quantizer (a float input too)."""
    found = []
    for i, layer in enumerate(model._weighted_layers):
        quantizer = getattr(layer, "kernel_quantizer", None)
        if hasattr(layer, "graph") or quantizer is None \
                or quantizer.op not in SIGN_QUANTIZERS + TERNARY_QUANTIZERS or layer._dtype_policy is not None:
            continue
        if any(name == "kernel" for name, _ in named_weights(layer)):
            found.append((i, layer))
    return found


def _ternary(layer):
    return layer.kernel_quantizer.op in TERNARY_QUANTIZERS


def _entry(i, layer):
    """(packed.npz key, its shape) of the layer at index i."""
    shape = _packed_shape(_kernel(layer)[1].shape)
    if _ternary(layer):
        return f"{i:04d}/kernel_planes", (2,) + shape
    return f"{i:04d}/kernel_bits", shape


def _pack(b, layer, kernel):
    """packed.npz's array for the layer's latent kernel (a numpy array): its sign bits, or the
    two bit-planes of its ternary values (computed by its quantizer on the backend)."""
    *taps, c, f = kernel.shape
    tensor = b.from_numpy(kernel.reshape(math.prod(taps), 1, c, f))
    planes = []
    if _ternary(layer):
        call = LayerCall(layer, b)
        ternary, _ = layer.kernel_quantizer.quantize(call, "kernel_ternary", tensor)   # {-1, 0, +1}
        shifted = b.empty(b.shape(ternary))
        b.fill(shifted, -0.5)
        b.add(shifted, shifted, ternary)                       # 0 -> -0.5: a -1 bit in plane b
        sources = (ternary, shifted)
    else:
        sources = (tensor,)
    for source in sources:
        bits = b.empty(_packed_shape(kernel.shape), "int32")
        b.binary_pack_kernel(bits, source)
        planes.append(b.to_numpy(bits))
    return np.stack(planes) if len(planes) == 2 else planes[0]


def _packed_shape(kernel_shape):
    """(taps * ceil(C / 32), F) of a kernel (..., C, F) (Dense (C, F), Conv1D (k, C, F), Conv2D)."""
    *taps, c, f = kernel_shape
    return (math.prod(taps) * -(-c // 32), f)


def _kernel(layer):
    """(position among the layer's weights, Weight) of its kernel (Keras's 1-D layout for
    QuantConv1D: (k, C, F))."""
    return next((i, w) for i, (name, w) in enumerate(named_weights(layer)) if name == "kernel")


def save_converted(model, filepath, overwrite=True):
    """Write `model` (converted with lq.convert) with its binary kernels packed 32 to a word."""
    filepath = os.fspath(filepath)
    if getattr(model, "binary_layers", None) is None:
        raise ValueError(f"save_converted: {model.describe()} is not converted; call lq.convert(model) first")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    b = model.backend
    arrays = _weights_dict(model)
    packed = {}
    for i, layer in _packable(model):
        position, _ = _kernel(layer)
        packed[_entry(i, layer)[0]] = _pack(b, layer, layer.get_weights()[position])
        del arrays[f"{i:04d}/{layer.name}/kernel"]
    header = {"format": FORMAT, "version": VERSION, "model": model.get_config(),
              "packed": sorted(packed), "fold_batchnorm": bool(getattr(model, "folded_batchnorms", []))}
    files = {HEADER: json.dumps(header).encode(), "weights.npz": _npz_bytes(arrays),
             "packed.npz": _npz_bytes(packed)}
    with atomic_write(filepath, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
            for name, data in files.items():
                z.writestr(name, data)


def _unpack(bits, kernel_shape):
    """+-1 float32 kernel of kernel_shape from its packed bits (taps * words, F)."""
    *taps, c, f = kernel_shape
    words = -(-c // 32)
    flat = bits.view(np.uint32).reshape(math.prod(taps), words, f)
    negative = (flat[:, :, None, :] >> np.arange(32, dtype=np.uint32)[None, None, :, None]) & 1
    negative = negative.reshape(math.prod(taps), words * 32, f)
    if negative[:, c:, :].any():
        raise ValueError(f"bits are set past the kernel's {c} channels")
    return (1.0 - 2.0 * negative[:, :c, :]).astype(np.float32).reshape(kernel_shape)


def _unpack_planes(planes, kernel_shape):
    """{-1, 0, +1} float32 kernel from its two bit-planes (2, taps * words, F): (a + b) / 2."""
    a, b = _unpack(planes[0], kernel_shape), _unpack(planes[1], kernel_shape)
    if np.any((a < 0) & (b > 0)):
        raise ValueError("its planes hold a -1 with 0 as +1 where 0 as -1 has +1, which no ternary value gives")
    return ((a + b) / 2).astype(np.float32)


class _WithKernels:
    """weights.npz plus the unpacked kernels, as the NpzArchive _apply_weights reads."""

    def __init__(self, npz, kernels):
        self._npz, self._kernels = npz, kernels
        self.entries = dict(npz.entries)
        self.entries.update({key: (k.shape, k.dtype) for key, k in kernels.items()})

    def array(self, key):
        return self._kernels[key] if key in self._kernels else self._npz.array(key)


def load_converted(filepath):
    """The model save_converted wrote, on the active backend, converted (lq.convert)."""
    path = os.fspath(filepath)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no converted binary model file at {path}")
    try:
        with ZipArchive(path, MEMBERS) as z:
            return _load(z, z.where)
    except ArchiveError as exc:
        raise ModelFileError(str(exc)) from None


def _load(z, path):
    if HEADER not in z.members:
        raise ModelFileError(f"{path} is not a minidl converted binary model file: it has no {HEADER}")
    try:
        header = json.loads(z.read(HEADER, MAX_HEADER_BYTES))
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"{path}: {HEADER} is not readable JSON: {str(exc)[:200]}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION:
        raise ModelFileError(f"{path} is not a {FORMAT} file of version {VERSION}")
    config, listed, fold = header.get("model"), header.get("packed"), header.get("fold_batchnorm")
    if not isinstance(fold, bool) or not isinstance(listed, list) or not all(isinstance(k, str) for k in listed):
        raise ModelFileError(f"{path}: fold_batchnorm must be true/false and packed a list of names")
    try:
        _check_architecture(config)
        arrays, params, _ = _declared_weights(config)
        model = model_class(config.get("class_name")).from_config(config)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise ModelFileError(f"{path}: the model architecture cannot be rebuilt: "
                             f"{type(exc).__name__}: {str(exc)[:300]}") from None
    if "weights.npz" not in z.members or "packed.npz" not in z.members:
        raise ModelFileError(f"{path} lacks weights.npz or packed.npz")
    packable = _packable(model)
    expected = {key: (shape, i, layer) for i, layer in packable for key, shape in [_entry(i, layer)]}
    if sorted(expected) != sorted(listed):
        raise ModelFileError(f"{path}: the header lists packed kernels {sorted(listed)[:6]}, the "
                             f"architecture's binary layers are {sorted(expected)[:6]}")
    limit = _BASE_BYTES + len(expected) * _ENTRY_BYTES + 4 * sum(math.prod(s) for s, _, _ in expected.values())
    packed = NpzArchive(z.read("packed.npz", limit), f"{path}: packed.npz")
    if set(packed.entries) != set(expected):
        raise ModelFileError(f"{path}: packed.npz holds {sorted(packed.entries)[:6]}, expected "
                             f"{sorted(expected)[:6]}")
    for key, (shape, _, _) in expected.items():
        if packed.entries[key] != (shape, np.dtype(np.int32)):
            raise ModelFileError(f"{path}: packed.npz array {key!r} is {packed.entries[key]}, expected "
                                 f"({shape}, int32)")
    weights = NpzArchive(z.read("weights.npz", _BASE_BYTES + arrays * _ENTRY_BYTES + 8 * params),
                         f"{path}: weights.npz")
    kernels = {}
    for key, (_, i, layer) in expected.items():
        unpack = _unpack_planes if _ternary(layer) else _unpack
        try:
            kernels[f"{i:04d}/{layer.name}/kernel"] = unpack(packed.array(key), _kernel(layer)[1].shape)
        except ValueError as exc:
            raise ModelFileError(f"{path}: packed kernel {key!r} of {layer.describe()}: {exc}") from None
    clash = sorted(set(kernels) & set(weights.entries))
    if clash:
        raise ModelFileError(f"{path}: weights.npz holds the packed kernels {clash[:6]} too")
    _apply_weights(model, _WithKernels(weights, kernels), path)
    return convert(model, fold_batchnorm=fold)


__all__ = ["load_converted", "save_converted"]
