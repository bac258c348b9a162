"""What imdb and reuters share: reading their npz and word index, and Keras's index arithmetic.

Both data sets store each text as a list of word ranks (1 = the most frequent word). Keras's
loaders shuffle with np.random.RandomState(seed), prepend start_char, shift every rank by
index_from, drop sequences of maxlen words or more, and replace the ranks outside
[skip_top, num_words) by oov_char (or drop them when oov_char is None). The functions here do
exactly that, in Keras's order, so the same seed gives the same arrays.
"""

import json
import os

import numpy as np

from ..io import ArchiveError
from ._ragged_npz import RaggedFormatError, read_npz
from .cifar10 import CorruptDatasetError
from .locate import ORIGIN_FOLDER, locate_file

# A word index (imdb's is 1.6 MB, reuters' 0.5 MB) is read whole: refuse anything far larger.
MAX_WORD_INDEX_BYTES = 64 << 20


def read_arrays(title, path, members, max_member_bytes):
    """The named arrays of the data set's npz, each checked before it is read."""
    try:
        return read_npz(path, members, max_member_bytes)
    except (ArchiveError, RaggedFormatError) as exc:
        raise CorruptDatasetError(f"{title}: {exc}") from None


def shuffled(rng, *arrays):
    """The arrays in the order Keras's rng.shuffle(np.arange(n)) gives."""
    indices = np.arange(len(arrays[0]))
    rng.shuffle(indices)
    return [a[indices] for a in arrays]


def shift(sequences, start_char, index_from):
    """Keras's start_char / index_from step: lists of Python ints."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in sequences]
    if index_from:
        return [[w + index_from for w in x] for x in sequences]
    return [[w for w in x] for x in sequences]


def remove_long(maxlen, sequences, labels):
    """Keep the sequences strictly shorter than maxlen (Keras's remove_long_seq)."""
    kept = [(x, y) for x, y in zip(sequences, labels) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def limit_words(sequences, num_words, skip_top, oov_char):
    """Ranks outside [skip_top, num_words) become oov_char, or are dropped when it is None.

    As in Keras, num_words=None (or 0) means the largest index present, which is itself
    excluded by the strict bound.
    """
    if not num_words:
        num_words = max((max(x) for x in sequences if x), default=0)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in sequences]
    return [[w for w in x if skip_top <= w < num_words] for x in sequences]


def check_labels(title, labels, where):
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise CorruptDatasetError(f"{title}: {where}: labels must be a 1-D integer array, got "
                                  f"{labels.dtype} of shape {labels.shape}")


def check_counts(title, sequences, labels, names):
    if len(sequences) != len(labels):
        raise CorruptDatasetError(f"{title}: {names[0]} holds {len(sequences)} sequences but "
                                  f"{names[1]} {len(labels)} labels")


def check_arguments(title, num_words, skip_top, maxlen):
    for name, value in (("num_words", num_words), ("maxlen", maxlen)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                  or value < 0):
            raise ValueError(f"{title}.load_data: {name} must be None or an int >= 0, got {value!r}")
    if isinstance(skip_top, bool) or not isinstance(skip_top, (int, np.integer)) or skip_top < 0:
        raise ValueError(f"{title}.load_data: skip_top must be an int >= 0, got {skip_top!r}")


def object_array(sequences):
    """np.array(sequences, dtype='object'), as Keras returns them."""
    return np.array(sequences, dtype="object")


def get_word_index(title, path, file_hash):
    """{word: rank} from Keras's word-index json, read only when of a sane size."""
    file_path = locate_file(title, path, ORIGIN_FOLDER + os.path.basename(os.fspath(path)), file_hash)
    size = os.stat(file_path).st_size
    if size > MAX_WORD_INDEX_BYTES:
        raise CorruptDatasetError(f"{title}: {file_path} has {size} bytes, more than a word index "
                                  f"can ({MAX_WORD_INDEX_BYTES}); not read")
    with open(file_path, "rb") as f:
        raw = f.read(MAX_WORD_INDEX_BYTES + 1)
    try:
        index = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptDatasetError(f"{title}: {file_path} is not a JSON word index: {exc}") from None
    if not isinstance(index, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in index.values()):
        raise CorruptDatasetError(f"{title}: {file_path} must hold one object of word: int entries")
    return index
