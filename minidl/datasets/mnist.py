"""MNIST as keras.datasets.mnist returns it: (x_train, y_train), (x_test, y_test), all uint8,
images (n, 28, 28) and labels (n,).

`load_data(path="mnist.npz")` reads Keras's mnist.npz. A plain file name is looked for in
$MINIDL_DATA_DIR, then in the dataset cache (MINIDL_HOME/datasets), where it is downloaded on
first use and its sha256 checked; a path to an existing file is read as it is.

The npz is never unpickled: it is read into memory only when it is no larger than the official
file can be, every member's .npy header is checked (the four known arrays, uint8, the official
image size, at most the official number of samples) before any data is decompressed, and the
labels must be digits.
"""

import os

import numpy as np

from .sharding import shard_splits
from .. import settings
from ..io import ArchiveError, NpzArchive
from ..utils.file_utils import DownloadError, get_file
from .cifar10 import CorruptDatasetError, DatasetNotFoundError

URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
SAMPLES = {"train": 60000, "test": 10000}
IMAGE_SHAPE = (28, 28)
# The official file is 11,490,434 bytes (deflated); an uncompressed copy is 54.9 MB.
MAX_FILE_BYTES = 64 << 20


def load_data(path="mnist.npz", shard=None):
    """((x_train, y_train), (x_test, y_test)) of MNIST, as keras.datasets.mnist.load_data;
    shard=(rank, size): rank's part of each split, as cifar10.load_data."""
    file_path = _locate(os.fspath(path))
    arrays = _read(file_path)
    splits = (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"])
    return splits if shard is None else shard_splits(splits, shard)


def _locate(path):
    if os.path.isfile(path):
        return path
    if os.sep in path or (os.altsep and os.altsep in path):
        raise DatasetNotFoundError(f"MNIST: {path} does not exist", searched=[path])
    s = settings.current()
    searched = [os.path.join(s.data_dir, path)] if s.data_dir else []
    for candidate in searched:
        if os.path.isfile(candidate):
            return candidate
    folder = s.cache_dir
    searched.append(os.path.join(folder, path))
    try:
        return get_file(path, origin=URL, file_hash=SHA256, cache_dir=s.home,
                        cache_subdir="datasets")
    except DownloadError as exc:
        raise DatasetNotFoundError(
            f"MNIST: no {path} in {', '.join(searched)}, and the download failed ({exc}). "
            f"Copy Keras's mnist.npz (sha256 {SHA256}) into {folder}, or into the folder "
            "named by MINIDL_DATA_DIR, or pass its path: load_data(path=...)",
            searched=searched, download_folder=folder, url=URL, reason=str(exc)) from None


def _read(file_path):
    """The four arrays of an MNIST npz, each checked before it is read."""
    size = os.stat(file_path).st_size
    if size > MAX_FILE_BYTES:
        raise CorruptDatasetError(f"MNIST: {file_path} has {size} bytes, more than any MNIST "
                                  f"npz ({MAX_FILE_BYTES}); not read")
    with open(file_path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    try:
        npz = NpzArchive(data, file_path)
        _check_entries(npz.entries, file_path)
        arrays = {key: npz.array(key) for key in npz.entries}
    except ArchiveError as exc:
        raise CorruptDatasetError(f"MNIST: {exc}") from None
    for split in SAMPLES:
        labels = arrays[f"y_{split}"]
        if labels.size and labels.max() > 9:
            raise CorruptDatasetError(f"MNIST: {file_path}: y_{split} holds {int(labels.max())}; "
                                      "labels are the digits 0 to 9")
    return {key: np.array(value) for key, value in arrays.items()}   # writable copies


def _check_entries(entries, where):
    expected = {f"{kind}_{split}" for kind in ("x", "y") for split in SAMPLES}
    if set(entries) != expected:
        raise CorruptDatasetError(f"MNIST: {where} holds {sorted(entries)}, expected "
                                  f"{sorted(expected)}")
    for split, most in SAMPLES.items():
        (x_shape, x_dtype), (y_shape, y_dtype) = entries[f"x_{split}"], entries[f"y_{split}"]
        n = x_shape[0] if x_shape else -1
        if x_dtype != np.uint8 or y_dtype != np.uint8 or tuple(x_shape[1:]) != IMAGE_SHAPE \
                or len(x_shape) != 3 or tuple(y_shape) != (n,) or not 0 < n <= most:
            raise CorruptDatasetError(
                f"MNIST: {where}: x_{split} is {x_shape} {x_dtype} and y_{split} {y_shape} "
                f"{y_dtype}; expected uint8 arrays (n, 28, 28) and (n,) with 0 < n <= {most}")
