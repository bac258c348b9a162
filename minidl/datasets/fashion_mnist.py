"""Fashion-MNIST (Xiao et al., 2017) as keras.datasets.fashion_mnist returns it.

60,000 training and 10,000 test 28x28 grayscale images of 10 kinds of clothing: x uint8
(n, 28, 28), y uint8 (n,). Keras keeps the four gzipped IDX files of the official release in
~/.keras/datasets/fashion-mnist/; load_data looks for that folder in MINIDL_DATA_DIR, minidl's
cache and Keras's cache (locate.py), downloading what is missing. Each file's IDX header
(magic number, count, 28x28) is checked, and no more is inflated than it declares.
"""

import gzip
import os
import struct
import zlib

import numpy as np

from .cifar10 import CorruptDatasetError
from .locate import ORIGIN_FOLDER, locate_file

TITLE = "Fashion-MNIST"
SUBDIR = "fashion-mnist"
FILES = {"train": ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz"),
         "test": ("t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")}
SAMPLES = {"train": 60000, "test": 10000}
CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")
_LABELS_MAGIC, _IMAGES_MAGIC = 2049, 2051   # IDX: unsigned bytes, 1 and 3 dimensions


def load_data():
    """((x_train, y_train), (x_test, y_test)) as keras.datasets.fashion_mnist.load_data."""
    splits = []
    for split in ("train", "test"):
        labels_name, images_name = FILES[split]
        labels = _read_idx(_file(labels_name), _LABELS_MAGIC, (), SAMPLES[split])
        images = _read_idx(_file(images_name), _IMAGES_MAGIC, (28, 28), SAMPLES[split])
        if len(images) != len(labels):
            raise CorruptDatasetError(f"{TITLE}: {images_name} holds {len(images)} images but "
                                      f"{labels_name} {len(labels)} labels")
        if labels.size and labels.max() > 9:
            raise CorruptDatasetError(f"{TITLE}: {labels_name} holds label {int(labels.max())}; "
                                      "labels are 0 to 9")
        splits.append((images, labels))
    return tuple(splits)


def _file(name):
    return locate_file(TITLE, name, ORIGIN_FOLDER + name, None, subdir=SUBDIR)


def _read_idx(path, magic, item_shape, most):
    """The uint8 array of one gzipped IDX file, its header checked before its data is inflated."""
    header_size = 4 * (2 + len(item_shape))
    try:
        with gzip.open(path, "rb") as f:
            header = f.read(header_size)
            if len(header) != header_size:
                raise CorruptDatasetError(f"{TITLE}: {path} is shorter than an IDX header")
            found_magic, count, *dims = struct.unpack(f">{2 + len(item_shape)}I", header)
            if found_magic != magic or tuple(dims) != item_shape or count > most:
                raise CorruptDatasetError(
                    f"{TITLE}: {path} is not an IDX file of at most {most} uint8 items of shape "
                    f"{item_shape} (magic {found_magic}, count {count}, item shape {tuple(dims)})")
            size = count * int(np.prod(item_shape, dtype=np.int64))
            data = f.read(size + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise CorruptDatasetError(f"{TITLE}: cannot read {path}: {exc}") from None
    if len(data) != size:
        raise CorruptDatasetError(f"{TITLE}: {path} declares {count} items ({size} bytes) but "
                                  f"holds {len(data)} bytes after its header")
    return np.frombuffer(data, dtype=np.uint8).reshape((count,) + item_shape).copy()
