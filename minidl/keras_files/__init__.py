"""Keras's own files: .keras zips, HDF5 (.h5, .weights.h5) models and weights, ONNX export.

minidl's own zip format stays for `.minidl` files (training position, strict checks); the
names `.keras`, `.h5` / `.hdf5` and `.weights.h5` mean Keras's formats, read and written, so
real Keras loads what minidl writes and the other way round (models/file_formats.py picks
the format: by name for writing, by content for reading):

    keras_zip.py     .keras: config.json (Keras's serialized configs), metadata.json,
                     model.weights.h5
    weights_h5.py    Keras 3's weights layout (layers/<class>/vars/<i>) and Keras 2's
                     (layer_names, weight_names), read with bounds checked first
    optimizer_h5.py  an optimizer's state in Keras 3's order (optimizer/vars/<i>)
    configs.py       minidl layer / model configs <-> Keras 3 serialized configs
    legacy_h5.py     Keras 2 / tf.keras HDF5 models (model_config, model_weights)
    pretrained.py    Keras's published application weights (weights="imagenet")
    onnx_export.py   model.export(path, format="onnx")
    onnx_qdq.py      a QuantizedModel as an ONNX QDQ model

h5py and onnx are optional: `pip install "minidl[keras-files]"`, `"minidl[onnx]"`.
"""

import os

KERAS_SUFFIXES = (".keras",)
H5_SUFFIXES = (".h5", ".hdf5")
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def kind_of_name(filepath):
    """'keras', 'h5' or None (minidl's own format) from a file name's suffix."""
    name = os.fspath(filepath).lower()
    if name.endswith(KERAS_SUFFIXES):
        return "keras"
    if name.endswith(H5_SUFFIXES):
        return "h5"
    return None


def kind_of_file(filepath):
    """'keras' (a zip holding config.json), 'h5' (HDF5's signature at 0), else None, from
    the file's first bytes and, for a zip, its directory."""
    import zipfile
    path = os.fspath(filepath)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    if head == HDF5_SIGNATURE:
        return "h5"
    if head[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return None
        if "config.json" in names and "minidl_model.json" not in names:
            return "keras"
    return None


def require(module, extra):
    """Import an optional dependency, or say which extra brings it."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"reading and writing Keras's files needs the {module} package: "
                          f'pip install "minidl[{extra}]" (or pip install {module})') from None
