"""keras.utils.text_dataset_from_directory: a folder of class folders of .txt files as
batches of (strings, labels).

Keras returns a tf.data / grain dataset of string tensors; minidl returns a PyDataset whose
batches are numpy arrays of Python strings (dtype object) and the labels, read from the
files when a batch is asked for (so workers= reads ahead), with `class_names` and
`file_paths` attributes as Keras's dataset has. A model whose Input has dtype="string" (with
TextVectorization or StringLookup after it) takes these batches as they are.
"""

import math
import os

import numpy as np

from .image_dataset import LABEL_MODES, _encode, _files_and_labels, _split
from .py_dataset import PyDataset

WHERE = "text_dataset_from_directory"


class TextFiles(PyDataset):
    """Batches of the texts of `paths` (each cut to max_length characters) with `labels`
    (None: the texts alone); batch_size None gives one sample at a time."""

    def __init__(self, paths, labels, batch_size, max_length, class_names):
        super().__init__()
        self.file_paths, self.labels = list(paths), labels
        self.batch_size, self.max_length = batch_size, max_length
        self.class_names = class_names

    def __len__(self):
        return len(self.file_paths) if self.batch_size is None else \
            math.ceil(len(self.file_paths) / self.batch_size)

    def _read(self, path):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read() if self.max_length is None else f.read(self.max_length)
        return text

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"{WHERE}: batch {index} of {len(self)}")
        if self.batch_size is None:
            text = self._read(self.file_paths[index])
            return text if self.labels is None else (text, self.labels[index])
        part = slice(index * self.batch_size, (index + 1) * self.batch_size)
        texts = np.array([self._read(p) for p in self.file_paths[part]], dtype=object)
        return texts if self.labels is None else (texts, self.labels[part])


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                batch_size=32, max_length=None, shuffle=True, seed=None,
                                validation_split=None, subset=None, follow_links=False,
                                format="tf", verbose=True):
    """Batches (texts, labels) of the .txt files under `directory` (Keras 3's arguments):
    labels "inferred" (one class per subfolder, alphanumerical), None, or one int per file
    in sorted order; label_mode "int", "categorical", "binary" or None; subset "training",
    "validation" or "both" (a pair) with validation_split."""
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError("`labels` argument should be a list/tuple of integer labels, of the "
                         "same size as the number of text files in the target directory. If "
                         "you wish to infer the labels from the subdirectory names in the target "
                         f"directory, pass `labels=\"inferred\"`. If you wish to get a dataset "
                         f"that only contains text samples (no labels), pass `labels=None`. "
                         f"Received: labels={labels}")
    if class_names is not None and labels != "inferred":
        raise ValueError("You can only pass `class_names` if `labels=\"inferred\"`. Received: "
                         f"labels={labels}, and class_names={class_names}")
    if label_mode not in LABEL_MODES:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", '
                         f"or None. Received: label_mode={label_mode}")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                   or batch_size <= 0):
        raise ValueError(f"{WHERE}: batch_size must be a positive int or None, got {batch_size!r}")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                   or max_length <= 0):
        raise ValueError(f"{WHERE}: max_length must be a positive int or None, got {max_length!r}")
    if not os.path.isdir(directory):
        raise ValueError(f"{WHERE}: directory {directory!r} is not a folder")
    if validation_split:
        if not 0 < validation_split < 1:
            raise ValueError(f"{WHERE}: validation_split must be in (0, 1), got {validation_split!r}")
        if subset not in ("training", "validation", "both"):
            raise ValueError(f"{WHERE}: with validation_split, subset must be 'training', "
                             f"'validation' or 'both', got {subset!r}")
        if shuffle and seed is None:
            raise ValueError(f"{WHERE}: with validation_split and shuffle=True, pass a seed so "
                             "that the training and validation subsets do not overlap")
    elif subset is not None:
        raise ValueError(f"{WHERE}: subset {subset!r} needs a validation_split")
    if labels is None:
        label_mode = None
    paths, ints, names = _files_and_labels(directory, labels, class_names, follow_links,
                                           extensions=(".txt",), where=WHERE)
    if not paths:
        raise ValueError(f"No text files found in directory {directory}. Allowed format: .txt")
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={names}")
    if verbose:
        found = f"{len(paths)} files" + (f" belonging to {len(names)} classes" if names else "")
        print(f"Found {found}.")
    datasets = []
    for part, (part_paths, part_labels) in _split(paths, ints, validation_split, subset, seed,
                                                  shuffle).items():
        if verbose and part is not None:
            print(f"Using {len(part_paths)} files for {part}.")
        if not part_paths:
            raise ValueError(f"No {part} text files found in directory {directory}. Allowed "
                             "format: .txt")
        y = None if label_mode is None else _encode(part_labels, label_mode, len(names))
        datasets.append(TextFiles(part_paths, y, batch_size, max_length, names))
    return tuple(datasets) if subset == "both" else datasets[0]


__all__ = ["text_dataset_from_directory"]
