"""Finding a data set's file: the given path, MINIDL_DATA_DIR, minidl's cache, Keras's cache, a download.

Keras keeps its downloads in $KERAS_HOME/datasets (~/.keras/datasets by default); a machine
that already ran the Keras recipe has the files there, so they are read from there as they are.
When none of the places has the file, it is downloaded into minidl's cache (MINIDL_HOME/datasets)
and its hash checked; offline, DatasetNotFoundError lists the places searched and says where
to copy the file.
"""

import os

from .. import settings
from ..utils.file_utils import DownloadError, get_file
from .cifar10 import DatasetNotFoundError

ORIGIN_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def keras_cache_dir():
    """Keras's dataset cache: $KERAS_HOME/datasets, or ~/.keras/datasets."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.join(home, "datasets")


def search_folders():
    """The folders looked in, in order: MINIDL_DATA_DIR, minidl's cache, Keras's cache."""
    s = settings.current()
    folders = [s.data_dir] if s.data_dir else []
    return folders + [s.cache_dir, keras_cache_dir()]


def find(name, places=None):
    """The first existing `place/name` (name may hold a '/'), or None."""
    for folder in search_folders() if places is None else places:
        candidate = os.path.join(folder, name)
        if os.path.exists(candidate):
            return candidate
    return None


def locate_file(title, path, origin, file_hash, subdir=""):
    """The local path of one data set file, found or downloaded.

    `path` is Keras's `path` argument: a path to an existing file is used as it is; a plain
    name is looked for (under `subdir`) in search_folders(), then downloaded from `origin`.
    """
    path = os.fspath(path)
    if os.path.isfile(path):
        return path
    if os.sep in path or (os.altsep and os.altsep in path):
        raise DatasetNotFoundError(f"{title}: {path} does not exist", searched=[path])
    name = os.path.join(subdir, path) if subdir else path
    found = find(name)
    if found is not None:
        return found
    searched = [os.path.join(folder, name) for folder in search_folders()]
    cache = settings.current().cache_dir
    try:
        return get_file(path, origin=origin, file_hash=file_hash, cache_dir=settings.current().home,
                        cache_subdir=os.path.join("datasets", subdir) if subdir else "datasets")
    except DownloadError as exc:
        raise not_found(title, searched, os.path.join(cache, name), origin, exc) from None


def not_found(title, searched, target, origin, reason):
    """The offline error: where it looked, and where to put the file."""
    return DatasetNotFoundError(
        f"{title}: not found (looked in: {', '.join(searched)}) and downloading {origin} failed "
        f"({reason}). Without internet access, copy Keras's file from a machine that has it "
        f"(Keras keeps it in ~/.keras/datasets) to {target}, or into the folder named by "
        "MINIDL_DATA_DIR, or pass its path: load_data(path=...)",
        searched=searched, download_folder=os.path.dirname(target), url=origin, reason=str(reason))
