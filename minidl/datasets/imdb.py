"""IMDB movie reviews (Maas et al., 2011) as keras.datasets.imdb returns them.

25,000 training and 25,000 test reviews labelled 1 (positive) or 0 (negative), each a list
of word ranks. load_data reads Keras's imdb.npz (from `path`, MINIDL_DATA_DIR, minidl's cache
or Keras's ~/.keras/datasets, see locate.py) without unpickling it (see _ragged_npz.py) and
applies Keras's shuffling and index arithmetic (see word_sequences.py), so the same arguments
give the same arrays as Keras 3.
"""

import numpy as np

from . import word_sequences as ws
from .locate import ORIGIN_FOLDER, locate_file

TITLE = "IMDB"
SHA256 = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_MD5 = "bfafd718b763782e994055a2d397834f"
MEMBERS = ("x_train", "y_train", "x_test", "y_test")
# The official members are at most ~60 MB once inflated (25,000 pickled reviews).
MAX_MEMBER_BYTES = 256 << 20


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1,
              oov_char=2, index_from=3):
    """((x_train, y_train), (x_test, y_test)) as keras.datasets.imdb.load_data.

    x_* are object arrays of lists of ints, y_* int arrays of 0/1. num_words keeps the most
    frequent words only, skip_top drops the most frequent ones (both become oov_char, or are
    removed when oov_char is None); maxlen drops the reviews of maxlen words or more; each
    split is shuffled with np.random.RandomState(seed), the test split continuing the stream.
    """
    ws.check_arguments("imdb", num_words, skip_top, maxlen)
    file_path = locate_file(TITLE, path, ORIGIN_FOLDER + "imdb.npz", SHA256)
    arrays = ws.read_arrays(TITLE, file_path, MEMBERS, MAX_MEMBER_BYTES)
    for split in ("train", "test"):
        ws.check_labels(TITLE, arrays[f"y_{split}"], f"{file_path}: y_{split}")
        ws.check_counts(TITLE, arrays[f"x_{split}"], arrays[f"y_{split}"],
                        (f"x_{split}", f"y_{split}"))
    rng = np.random.RandomState(seed)
    x_train, labels_train = ws.shuffled(rng, arrays["x_train"], arrays["y_train"])
    x_test, labels_test = ws.shuffled(rng, arrays["x_test"], arrays["y_test"])
    x_train = ws.shift(x_train, start_char, index_from)
    x_test = ws.shift(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = ws.remove_long(maxlen, x_train, labels_train)
        x_test, labels_test = ws.remove_long(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                             "sequence was kept. Increase maxlen.")
    labels = np.concatenate([labels_train, labels_test])
    xs = ws.limit_words(x_train + x_test, num_words, skip_top, oov_char)
    idx = len(x_train)
    return ((ws.object_array(xs[:idx]), labels[:idx]),
            (ws.object_array(xs[idx:]), labels[idx:]))


def get_word_index(path="imdb_word_index.json"):
    """{word: rank} (rank 1 is the most frequent word), as keras.datasets.imdb.get_word_index."""
    return ws.get_word_index(TITLE, path, WORD_INDEX_MD5)
