"""CIFAR-10 (Krizhevsky, 2009): 50,000 training and 10,000 test 32x32 colour images in 10 classes.

load_data() reads the official "CIFAR-10 python version", either the tarball
cifar-10-python.tar.gz or the folder cifar-10-batches-py/ it extracts to, and returns the
arrays Keras returns: ((x_train, y_train), (x_test, y_test)) with x uint8 (N, 32, 32, 3) and
y uint8 (N, 1).

Where it looks, in order:
  1. the `path` argument, when given (and only there: a folder that holds
     cifar-10-batches-py/ or the tarball, the cifar-10-batches-py/ folder itself, or the tarball);
  2. the folder named by the MINIDL_DATA_DIR environment variable (settings.data_dir);
  3. the cache folder ~/.minidl/datasets (settings.cache_dir; MINIDL_HOME replaces ~/.minidl).
When none holds the data it downloads the official tarball into the cache folder (or into
`path`), checks its md5 and only then moves it into place.

The batches are pickles. They are never unpickled: _batch_pickle interprets the few opcodes
a batch is made of and builds plain values and uint8/integer arrays only, so a tampered file
can neither run code nor make the loader build object arrays. A file larger than a batch of
MAX_BATCH_IMAGES images can be, or one that is not a regular file, is refused unread.
"""

import http.client
import os
import stat
import tarfile
from urllib.error import URLError
from urllib.request import urlopen

import numpy as np

from .. import settings
from ..utils.file_utils import DownloadError, file_digest, save_response
from . import _batch_pickle
from .sharding import shard_splits

URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
TARBALL_NAME = "cifar-10-python.tar.gz"
TARBALL_MD5 = "c58f30108f718f92721af3b95e74349a"
FOLDER_NAME = "cifar-10-batches-py"
TRAIN_FILES = tuple(f"data_batch_{i}" for i in range(1, 6))
TEST_FILE = "test_batch"
CLASS_NAMES = ("airplane", "automobile", "bird", "cat", "deer",
               "dog", "frog", "horse", "ship", "truck")
NUM_CLASSES = 10
IMAGE_SHAPE = (32, 32, 3)
_ROW_LENGTH = 3 * 32 * 32  # one image: the red, then green, then blue 32x32 plane
# The official batches hold 10,000 images each. Python 3's protocol 2 writes the pixels as
# latin-1 text in UTF-8 (up to 2 bytes a pixel); 512 bytes an image leave room for a label
# and a filename.
MAX_BATCH_IMAGES = 10_000
MAX_BATCH_BYTES = MAX_BATCH_IMAGES * (2 * _ROW_LENGTH + 512) + (1 << 16)
MIN_BATCH_BYTES = _ROW_LENGTH  # at least one image


class DatasetNotFoundError(FileNotFoundError):
    """The data set is in none of the places searched and could not be downloaded.

    `searched` lists the places looked in, `download_folder` where the download would have
    gone, `url` the download tried and `reason` why it failed, for callers that word their
    own message (examples/cifar10.py names its --data-dir flag).
    """

    def __init__(self, message, searched=(), download_folder=None, url=None, reason=None):
        super().__init__(message)
        self.searched = list(searched)
        self.download_folder = download_folder
        self.url = url
        self.reason = reason


class CorruptDatasetError(ValueError):
    """A data file exists but does not hold what the official release holds."""


def cache_dir():
    """The folder data sets are downloaded into: settings.current().cache_dir."""
    return settings.current().cache_dir


def load_data(path=None, shard=None):
    """Load CIFAR-10 as ((x_train, y_train), (x_test, y_test)).

    shard=(rank, size) (a minidl extension, for minidl.distributed) returns rank's equal,
    interleaved part of each split (minidl.distributed.shard).

    x_* are uint8 arrays of shape (N, 32, 32, 3) (height, width, RGB); y_* are uint8 class
    indices 0..9 of shape (N, 1). See the module docstring for where the files are looked for.
    Raises DatasetNotFoundError when the data is nowhere and cannot be downloaded, and
    CorruptDatasetError (naming the file) when a file is damaged or malformed.
    """
    if shard is not None:
        return shard_splits(load_data(path), shard)
    if path is not None:
        places = [os.path.expanduser(os.fspath(path))]
        download_folder = places[0]
    else:
        places = [p for p in (settings.current().data_dir, cache_dir()) if p]
        download_folder = cache_dir()

    for place in places:
        found = _locate(place)
        if found is not None:
            return _load_from(found)

    if os.path.isfile(download_folder):
        raise DatasetNotFoundError(
            f"CIFAR-10: {download_folder!r} is a file but neither {TARBALL_NAME} nor a "
            f"{FOLDER_NAME}/ folder; pass the folder that holds them")
    tarball = _download(download_folder, places)
    return _load_tarball(tarball, verified=True)


def _locate(place):
    """The batches folder or tarball found at `place`, or None."""
    if os.path.isfile(place):
        return place  # a tarball given directly
    if os.path.isfile(os.path.join(place, TEST_FILE)):
        return place  # the cifar-10-batches-py folder itself
    folder = os.path.join(place, FOLDER_NAME)
    if os.path.isdir(folder):
        return folder
    tarball = os.path.join(place, TARBALL_NAME)
    if os.path.isfile(tarball):
        return tarball
    return None


def _load_from(found):
    if os.path.isdir(found):
        return _load_folder(found)
    return _load_tarball(found, verified=False)


def _load_folder(folder):
    def read(name):
        file_path = os.path.join(folder, name)
        try:
            # O_NONBLOCK: opening a named pipe must not wait for a writer; fstat then refuses it
            fd = os.open(file_path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with open(fd, "rb") as f:
                info = os.fstat(f.fileno())
                _check_batch_size(info.st_size, file_path, stat.S_ISREG(info.st_mode))
                raw = f.read(info.st_size + 1)  # one more, to see a file that grew since
        except FileNotFoundError:
            raise CorruptDatasetError(
                f"CIFAR-10: {file_path} is missing; {folder} must hold "
                f"{', '.join(TRAIN_FILES)} and {TEST_FILE}") from None
        if len(raw) != info.st_size:
            raise CorruptDatasetError(f"CIFAR-10: {file_path} changed while it was read")
        return _parse_batch(raw, file_path)

    return _assemble([read(name) for name in TRAIN_FILES], read(TEST_FILE))


def _load_tarball(tarball, verified):
    if not verified:
        _check_md5(tarball)
    wanted = {f"{FOLDER_NAME}/{name}": name for name in TRAIN_FILES + (TEST_FILE,)}
    batches = {}
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            for member in archive:
                name = wanted.get(member.name.lstrip("./"))
                if name is None or not member.isfile():
                    continue
                _check_batch_size(member.size, f"{tarball}:{member.name}", True)
                raw = archive.extractfile(member).read()
                batches[name] = _parse_batch(raw, f"{tarball}:{member.name}")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CorruptDatasetError(f"CIFAR-10: cannot read the tarball {tarball}: {exc}") from exc
    missing = [n for n in TRAIN_FILES + (TEST_FILE,) if n not in batches]
    if missing:
        raise CorruptDatasetError(
            f"CIFAR-10: the tarball {tarball} lacks {', '.join(f'{FOLDER_NAME}/{n}' for n in missing)}")
    return _assemble([batches[n] for n in TRAIN_FILES], batches[TEST_FILE])


def _check_md5(tarball):
    digest = file_digest(tarball, "md5")
    if digest != TARBALL_MD5:
        raise CorruptDatasetError(
            f"CIFAR-10: {tarball} has md5 {digest}, the official {TARBALL_NAME} has {TARBALL_MD5}; "
            f"the file is damaged or incomplete (delete it to download it again), or it is not the "
            f"official release (then extract it: a {FOLDER_NAME}/ folder is read without an md5 check)")


def _check_batch_size(size, where, regular):
    """Refuse, before reading it, what cannot be a batch: a device, a pipe, a huge file."""
    if not regular:
        raise CorruptDatasetError(f"CIFAR-10: {where} is not a regular file")
    if not MIN_BATCH_BYTES <= size <= MAX_BATCH_BYTES:
        raise CorruptDatasetError(
            f"CIFAR-10: {where} has {size} bytes; a batch of 1 to {MAX_BATCH_IMAGES} images has "
            f"{MIN_BATCH_BYTES} to {MAX_BATCH_BYTES} (truncated, or not a batch file?)")


def _parse_batch(raw, where):
    """(images uint8 (n, 32, 32, 3), labels uint8 (n,)) from the bytes of one pickled batch."""
    try:
        batch = _batch_pickle.loads(raw)
    except _batch_pickle.PickleFormatError as exc:
        raise CorruptDatasetError(
            f"CIFAR-10: {where} is not a readable batch file: {exc}") from None
    data = batch.get(b"data", batch.get("data"))
    labels = batch.get(b"labels", batch.get("labels"))
    if data is None or labels is None:
        raise CorruptDatasetError(
            f"CIFAR-10: {where} lacks the b'data' or b'labels' entry (keys: {sorted(map(repr, batch))})")
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 \
            or data.shape[1] != _ROW_LENGTH:
        shape = getattr(data, "shape", None)
        dtype = getattr(data, "dtype", type(data).__name__)
        raise CorruptDatasetError(
            f"CIFAR-10: {where}: b'data' must be a uint8 array of shape (n, {_ROW_LENGTH}), "
            f"got {dtype} of shape {shape}")
    if isinstance(labels, list):
        if not all(type(v) is int for v in labels):  # the reader makes ints of at most 64 bits
            raise CorruptDatasetError(f"CIFAR-10: {where}: b'labels' must be a list of ints")
        labels = np.array(labels, dtype=np.int64)
    elif not isinstance(labels, np.ndarray):
        raise CorruptDatasetError(f"CIFAR-10: {where}: b'labels' must be a list of ints, "
                                  f"got {type(labels).__name__}")
    if labels.ndim != 1 or labels.shape[0] != data.shape[0] or labels.dtype.kind not in "iu":
        raise CorruptDatasetError(
            f"CIFAR-10: {where}: b'labels' must be {data.shape[0]} ints (one per row of b'data'), "
            f"got {labels.dtype} of shape {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= NUM_CLASSES):
        bad = labels[(labels < 0) | (labels >= NUM_CLASSES)]
        raise CorruptDatasetError(
            f"CIFAR-10: {where}: labels must lie in 0..{NUM_CLASSES - 1}, found {bad[:5].tolist()}")
    images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)  # planar RGB rows -> (n, H, W, C)
    return images, labels.astype(np.uint8)


def _assemble(train_batches, test_batch):
    return _stack(train_batches), _stack([test_batch])


def _stack(batches):
    """One C-contiguous (N, 32, 32, 3) image array and (N, 1) label array from several batches."""
    total = sum(len(labels) for _, labels in batches)
    x = np.empty((total,) + IMAGE_SHAPE, dtype=np.uint8)
    y = np.empty((total, 1), dtype=np.uint8)
    start = 0
    for images, labels in batches:
        x[start:start + len(labels)] = images
        y[start:start + len(labels), 0] = labels
        start += len(labels)
    return x, y


def _download(folder, searched):
    """Download the official tarball into `folder`; return its path once its md5 matched."""
    target = os.path.join(folder, TARBALL_NAME)
    try:
        response = urlopen(URL, timeout=60)
    except (URLError, OSError, http.client.HTTPException) as exc:
        reason = f"{type(exc).__name__}: {exc}"
        raise DatasetNotFoundError(_not_found_message(searched, folder, reason), searched=searched,
                                   download_folder=folder, url=URL, reason=reason) from None
    save_response(response, target, URL, "md5", TARBALL_MD5, "CIFAR-10")
    return target


def _not_found_message(searched, folder, reason):
    return (
        f"CIFAR-10 was not found (looked in: {', '.join(searched)}) and downloading {URL} failed "
        f"({reason}). Without internet access, put the official 'CIFAR-10 python version' in "
        f"{folder}, either as the extracted folder {os.path.join(folder, FOLDER_NAME)}/ "
        f"(data_batch_1..5, test_batch) or as the tarball {os.path.join(folder, TARBALL_NAME)} "
        f"(md5 {TARBALL_MD5}), copied from a machine that has it; or set MINIDL_DATA_DIR (or pass "
        f"path=) to the folder that holds them.")
