"""Reuters newswire topics as keras.datasets.reuters returns them.

11,228 newswires, each a list of word ranks, labelled with one of 46 topics. load_data reads
Keras's reuters.npz (arrays x and y; found as locate.py says) without unpickling it, shuffles
with np.random.RandomState(seed), applies Keras's index arithmetic (word_sequences.py) and
splits off the last test_split of the shuffled newswires as the test set.
"""

import numpy as np

from . import word_sequences as ws
from .locate import ORIGIN_FOLDER, locate_file

TITLE = "Reuters"
SHA256 = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_MD5 = "4d44cc38712099c9e383dc6e5f11a921"
MAX_MEMBER_BYTES = 128 << 20   # the official x is ~8 MB pickled
LABEL_NAMES = (
    "cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply",
    "coffee", "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas",
    "cpi", "money-fx", "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin",
    "strategic-metal", "livestock", "retail", "ipi", "iron-steel", "rubber", "heat", "jobs",
    "lei", "bop", "zinc", "orange", "pet-chem", "dlr", "gas", "silver", "wpi", "hog", "lead")


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2,
              seed=113, start_char=1, oov_char=2, index_from=3):
    """((x_train, y_train), (x_test, y_test)) as keras.datasets.reuters.load_data.

    The arguments mean what they mean for imdb.load_data; test_split is the fraction of the
    (shuffled, maxlen-filtered) newswires that forms the test set.
    """
    ws.check_arguments("reuters", num_words, skip_top, maxlen)
    file_path = locate_file(TITLE, path, ORIGIN_FOLDER + "reuters.npz", SHA256)
    arrays = ws.read_arrays(TITLE, file_path, ("x", "y"), MAX_MEMBER_BYTES)
    ws.check_labels(TITLE, arrays["y"], f"{file_path}: y")
    ws.check_counts(TITLE, arrays["x"], arrays["y"], ("x", "y"))
    xs, labels = ws.shuffled(np.random.RandomState(seed), arrays["x"], arrays["y"])
    xs = ws.shift(xs, start_char, index_from)
    if maxlen:
        xs, labels = ws.remove_long(maxlen, xs, labels)
    xs = ws.limit_words(xs, num_words, skip_top, oov_char)
    idx = int(len(xs) * (1 - test_split))
    return ((ws.object_array(xs[:idx]), np.array(labels[:idx])),
            (ws.object_array(xs[idx:]), np.array(labels[idx:])))


def get_word_index(path="reuters_word_index.json"):
    """{word: rank}, as keras.datasets.reuters.get_word_index."""
    return ws.get_word_index(TITLE, path, WORD_INDEX_MD5)


def get_label_names():
    """The 46 topic names, indexed by label (keras.datasets.reuters.get_label_names)."""
    return LABEL_NAMES
