"""CIFAR-100 (Krizhevsky, 2009) as keras.datasets.cifar100 returns it.

50,000 training and 10,000 test 32x32 colour images in 100 fine classes grouped into 20
coarse ones: x uint8 (n, 32, 32, 3), y int64 (n, 1) holding the fine or coarse label
(label_mode). The official "CIFAR-100 python version" holds two pickled batches, train and
test; they are read by _batch_pickle, which never unpickles (see cifar10.py).

Where it looks, in each of MINIDL_DATA_DIR, minidl's cache and Keras's cache (locate.py):
the folder cifar-100-python/ (also inside Keras 3's cifar-100-python-target/), then the
tarball cifar-100-python.tar.gz (or Keras 3's download of it, cifar-100-python-target_archive),
read without extracting it. When none is found the tarball is downloaded into minidl's cache.
"""

import os
import stat
import tarfile

import numpy as np

from . import _batch_pickle
from .cifar10 import CorruptDatasetError
from .locate import find, locate_file, search_folders

TITLE = "CIFAR-100"
URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
SHA256 = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"
FOLDER = "cifar-100-python"
FOLDERS = (FOLDER, os.path.join("cifar-100-python-target", FOLDER))
TARBALLS = ("cifar-100-python.tar.gz", "cifar-100-python-target_archive")
SAMPLES = {"train": 50000, "test": 10000}
_ROW = 3 * 32 * 32
LABEL_COUNTS = {"fine": 100, "coarse": 20}


def _max_bytes(images):
    # latin-1 text in UTF-8 (up to 2 bytes a pixel), plus two labels and a filename an image
    return images * (2 * _ROW + 512) + (1 << 16)


def load_data(label_mode="fine"):
    """((x_train, y_train), (x_test, y_test)) as keras.datasets.cifar100.load_data."""
    if label_mode not in ["fine", "coarse"]:
        raise ValueError('`label_mode` must be one of `"fine"`, `"coarse"`. '
                         f"Received: label_mode={label_mode}.")
    batches = _read_batches()
    return tuple(_parse(batches[split], split, label_mode) for split in ("train", "test"))


def _read_batches():
    """{'train': bytes, 'test': bytes} from the first folder or tarball found."""
    for folder in search_folders():
        for name in FOLDERS:
            found = find(name, [folder])
            if found is not None and os.path.isdir(found):
                return {split: _read_file(os.path.join(found, split), split) for split in SAMPLES}
        for name in TARBALLS:
            found = find(name, [folder])
            if found is not None:
                return _read_tarball(found)
    return _read_tarball(locate_file(TITLE, TARBALLS[0], URL, SHA256))


def _check_size(size, where, split, regular=True):
    if not regular:
        raise CorruptDatasetError(f"{TITLE}: {where} is not a regular file")
    most = _max_bytes(SAMPLES[split])
    if not _ROW <= size <= most:
        raise CorruptDatasetError(f"{TITLE}: {where} has {size} bytes; the {split} batch has "
                                  f"{_ROW} to {most} (truncated, or not a batch file?)")


def _read_file(path, split):
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a pipe must not block
        with open(fd, "rb") as f:
            info = os.fstat(f.fileno())
            _check_size(info.st_size, path, split, stat.S_ISREG(info.st_mode))
            raw = f.read(info.st_size + 1)
    except FileNotFoundError:
        raise CorruptDatasetError(f"{TITLE}: {path} is missing; the folder must hold train "
                                  "and test") from None
    if len(raw) != info.st_size:
        raise CorruptDatasetError(f"{TITLE}: {path} changed while it was read")
    return raw


def _read_tarball(path):
    batches = {}
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                parts = member.name.lstrip("./").split("/")
                if len(parts) != 2 or parts[0] != FOLDER or parts[1] not in SAMPLES \
                        or not member.isfile():
                    continue
                _check_size(member.size, f"{path}:{member.name}", parts[1])
                batches[parts[1]] = archive.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CorruptDatasetError(f"{TITLE}: cannot read the tarball {path}: {exc}") from None
    missing = [f"{FOLDER}/{split}" for split in SAMPLES if split not in batches]
    if missing:
        raise CorruptDatasetError(f"{TITLE}: the tarball {path} lacks {', '.join(missing)}")
    return batches


def _parse(raw, split, label_mode):
    """x uint8 (n, 32, 32, 3) and y int64 (n, 1) of one batch."""
    where = f"the {split} batch"
    try:
        # an image costs at most ~10 opcodes (filename, two labels, memo entries)
        batch = _batch_pickle.loads(raw, max_opcodes=10 * SAMPLES[split] + 4096)
    except _batch_pickle.PickleFormatError as exc:
        raise CorruptDatasetError(f"{TITLE}: {where} is not a readable batch file: {exc}") from None
    key = f"{label_mode}_labels"
    data = batch.get(b"data", batch.get("data"))
    labels = batch.get(key.encode(), batch.get(key))
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 \
            or data.shape[1] != _ROW or data.shape[0] > SAMPLES[split]:
        raise CorruptDatasetError(f"{TITLE}: {where}: b'data' must be a uint8 array (n, {_ROW}), "
                                  f"got {getattr(data, 'dtype', type(data).__name__)} of shape "
                                  f"{getattr(data, 'shape', None)}")
    if not isinstance(labels, list) or len(labels) != len(data) \
            or not all(type(v) is int and 0 <= v < LABEL_COUNTS[label_mode] for v in labels):
        raise CorruptDatasetError(f"{TITLE}: {where}: b'{key}' must be a list of {len(data)} ints "
                                  f"in 0..{LABEL_COUNTS[label_mode] - 1}")
    x = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)   # planar RGB rows -> (n, H, W, C)
    return np.ascontiguousarray(x), np.array(labels, dtype=np.int64).reshape(-1, 1)
