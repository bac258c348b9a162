"""TextVectorization: raw strings to token indices or bag-of-words encodings, on the host.

A host preprocessing layer (host_preprocessing.py) with Keras 3's pipeline, step by step as
TensorFlow runs it:

    standardize   "lower_and_strip_punctuation" (default), "lower", "strip_punctuation", None
                  or a callable on a numpy array of str. Lowering is ASCII only and the
                  punctuation is ASCII's, as tf.strings.lower / regex_replace do.
    split         "whitespace" (ASCII whitespace, runs collapsed), "character", None (the whole
                  string is one token) or a callable returning a list of tokens per string.
    ngrams        None, n (1..n) or a tuple of widths: each width's n-grams, joined by " ",
                  width after width.
    lookup        a StringLookup with mask_token "" (index 0 is padding in "int" mode) and
                  one OOV index "[UNK]".

output_mode "int" gives (batch, output_sequence_length) int64 indices, padded with 0 or cut
(without output_sequence_length: padded to the longest text of the batch); "multi_hot",
"count" and "tf_idf" give (batch, vocabulary size) encodings. The vocabulary (and idf weights)
learned by adapt() are in get_config, so from_config rebuilds the layer whole.
"""

import re

import numpy as np

from .host_preprocessing import HostPreprocessingLayer, InModels, as_array, encode_categorical
from .index_lookup import StringLookup

_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_ASCII_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ngrams(tokens, widths):
    """Every width's n-grams of one text, in order, joined by spaces (tf.strings.ngrams)."""
    out = []
    for n in widths:
        out.extend(" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    return out


class TextVectorization(InModels, HostPreprocessingLayer):
    """Turn strings into token indices or encodings (see the module docstring)."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int", output_sequence_length=None,
                 pad_to_max_tokens=False, vocabulary=None, idf_weights=None, sparse=False,
                 ragged=False, encoding="utf-8", name=None, **kwargs):
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        super().__init__(name=name, **kwargs)
        if sparse or ragged:
            raise ValueError("TextVectorization: sparse=True and ragged=True need sparse or ragged "
                             "tensors, which minidl does not have; use output_sequence_length to "
                             "fix the width instead")
        if not (standardize is None or callable(standardize)):
            self.check_choice("standardize", standardize,
                              ("lower_and_strip_punctuation", "lower", "strip_punctuation"))
        if not (split is None or callable(split)):
            self.check_choice("split", split, ("whitespace", "character"))
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        self.check_choice("output_mode", output_mode,
                          ("int", "one_hot", "multi_hot", "count", "tf_idf"))
        if not (ngrams is None or isinstance(ngrams, int)
                or isinstance(ngrams, tuple) and all(isinstance(n, int) for n in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. "
                             f"Received: ngrams={ngrams}")
        if output_mode == "int" and not (output_sequence_length is None
                                         or isinstance(output_sequence_length, int)):
            raise ValueError("`output_sequence_length` must be either None or an integer when "
                             "`output_mode` is 'int'. Received: "
                             f"output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not "
                             f"'int'. Received output_sequence_length={output_sequence_length}.")
        if output_mode == "one_hot" and split is not None:
            raise ValueError("TextVectorization: output_mode='one_hot' with a split gives one "
                             "row per token, a ragged result minidl does not have; use "
                             "'multi_hot' or 'count', or split=None")
        self.max_tokens = max_tokens
        self.standardize = standardize
        self.split = split
        self.ngrams = ngrams
        self.ngram_widths = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self.output_mode = output_mode
        self.output_sequence_length = output_sequence_length
        self.encoding = encoding
        self.lookup_layer = StringLookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
            has_input_vocabulary=has_input_vocabulary, encoding=encoding,
            vocabulary_size=vocabulary_size, name=f"{self.name}_lookup")

    # ---- the text pipeline ----------------------------------------------------------------

    def texts(self, inputs):
        """A 1-D array of str (rank 0 and (batch, 1) inputs are accepted, as in Keras)."""
        x = as_array(inputs, self.describe())
        if x.dtype.kind == "S" or x.dtype.kind == "O":
            x = np.array([v.decode(self.encoding) if isinstance(v, bytes) else v
                          for v in x.ravel().tolist()], dtype=object).reshape(x.shape)
        if x.size and not all(isinstance(v, str) for v in x.ravel().tolist()):
            raise ValueError(f"{self.describe()} expects strings, got {x.dtype} of shape {x.shape}")
        return x

    def standardized(self, x):
        if callable(self.standardize):
            return np.asarray(self.standardize(np.asarray(x, dtype=str)), dtype=object)
        if self.standardize is None:
            return x
        lower = self.standardize in ("lower", "lower_and_strip_punctuation")
        strip = self.standardize in ("strip_punctuation", "lower_and_strip_punctuation")
        out = [v.translate(_ASCII_LOWER) if lower else v for v in x.ravel().tolist()]
        out = [_PUNCTUATION.sub("", v) if strip else v for v in out]
        return np.array(out, dtype=object).reshape(x.shape)

    def tokens(self, inputs):
        """(texts as token lists, or the standardized array when split is None; squeeze)."""
        x = self.standardized(self.texts(inputs))
        if self.split is None:
            if self.ngram_widths is not None:
                raise ValueError(f"{self.describe()}: ngrams need a split")
            return x, False
        squeeze = x.ndim == 0
        if x.ndim == 0:
            x = x[None]
        if x.ndim > 1:
            if x.shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the input "
                                 "rank must be 1 or the last shape dimension must be 1. Received: "
                                 f"inputs.shape={x.shape} with rank={x.ndim}")
            x = x[..., 0]
        if x.ndim != 1:
            raise ValueError(f"{self.describe()} tokenizes a batch of strings of shape (batch,) "
                             f"or (batch, 1); got shape {x.shape + (1,)}")
        if self.split == "whitespace":
            rows = [[t for t in _ASCII_WHITESPACE.split(v) if t] for v in x.tolist()]
        elif self.split == "character":
            rows = [list(v) for v in x.tolist()]
        else:
            rows = [list(self.split(v)) for v in x.tolist()]
        if self.ngram_widths is not None:
            rows = [ngrams(row, self.ngram_widths) for row in rows]
        return rows, squeeze

    # ---- adapt and the vocabulary ---------------------------------------------------------

    def adapt(self, data, batch_size=None, steps=None):
        """Learn the vocabulary from strings: an array or list (each string one document) or
        an iterable of batches (the first `steps` of them)."""
        self.reset_state()
        if isinstance(data, (list, tuple, np.ndarray, str)) or not hasattr(data, "__iter__"):
            self.update_state(data)
        else:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        rows, _ = self.tokens(data)
        if self.split is None:
            rows = rows.reshape(rows.shape[0] if rows.ndim else 1, -1).tolist()
        self.lookup_layer.update_state(None, documents=rows)

    def finalize_state(self):
        self.lookup_layer.finalize_state()

    def reset_state(self):
        self.lookup_layer.reset_state()

    def get_vocabulary(self, include_special_tokens=True):
        return self.lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self.lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self.lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    # ---- calling --------------------------------------------------------------------------

    def compute(self, inputs):
        rows, squeeze = self.tokens(inputs)
        lookup = self.lookup_layer
        if self.split is None:
            out = lookup.compute(np.asarray(rows, dtype=str))
            if self.output_mode == "int" and self.output_sequence_length is not None:
                out = self._fit_length(out[..., :self.output_sequence_length])
            return out
        if self.output_mode == "int":
            indices = [lookup.lookup(np.array(row, dtype=str)) for row in rows]
            width = self.output_sequence_length
            if width is None:
                width = max((len(r) for r in indices), default=0)
            out = np.zeros((len(indices), width), dtype=np.int64)
            for i, row in enumerate(indices):
                out[i, :min(width, len(row))] = row[:width]
            return out[0] if squeeze else out
        if not lookup.tokens and not lookup.pad_to_max_tokens:
            lookup.compute(np.array([], dtype=str))   # raises Keras's "set the vocabulary" error
        depth = lookup.max_tokens if lookup.pad_to_max_tokens else lookup.vocabulary_size()
        width = max((len(r) for r in rows), default=0)
        indices = np.full((len(rows), width), -1, dtype=np.int64)   # -1: no token
        for i, row in enumerate(rows):
            if row:
                indices[i, :len(row)] = lookup.lookup(np.array(row, dtype=str))
        mode = "count" if self.output_mode == "tf_idf" else self.output_mode
        out = encode_categorical(indices, mode, depth, "int64")
        if self.output_mode == "tf_idf":
            out = out.astype(np.float32) * lookup.idf_weights
        return out[0] if squeeze else out

    def _fit_length(self, x):
        pad = self.output_sequence_length - x.shape[-1]
        if pad <= 0:
            return x
        return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)])

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return (input_shape[0], self.output_sequence_length)
        depth = self.max_tokens if self.lookup_layer.pad_to_max_tokens else self.vocabulary_size()
        return (input_shape[0], depth)

    string_inputs = needs_strings = True

    def output_kind(self):
        return "float" if self.output_mode == "tf_idf" else "int"

    def sample_output_shape(self, input_shape):
        """In a model (host_preprocessing.py): one string per sample (shape () or (1,)) to
        output_sequence_length indices, or to an encoding of the vocabulary's size."""
        if len(input_shape) > 1 or (input_shape and input_shape[0] != 1):
            raise ValueError(f"{self.describe()} takes one string per sample (shape () or (1,)) "
                             f"in a model, got samples of shape {tuple(input_shape)}")
        if self.output_mode == "int" and self.split is None:
            return tuple(input_shape)
        if self.output_mode == "int":
            if self.output_sequence_length is None:
                raise ValueError(f"{self.describe()}: in a model, output_mode='int' needs "
                                 "output_sequence_length (minidl's graph has no ragged "
                                 "tensors: each batch would have its own width)")
            return (self.output_sequence_length,)
        lookup = self.lookup_layer
        return (lookup.max_tokens if lookup.pad_to_max_tokens else self.vocabulary_size(),)

    def get_config(self):
        lookup = self.lookup_layer
        learned = lookup.get_config()   # the vocabulary it has (see IndexLookup.get_config)
        return {**super().get_config(), "max_tokens": lookup.max_tokens,
                "standardize": self.standardize, "split": self.split, "ngrams": self.ngrams,
                "output_mode": self.output_mode,
                "output_sequence_length": self.output_sequence_length,
                "pad_to_max_tokens": lookup.pad_to_max_tokens, "sparse": False, "ragged": False,
                "vocabulary": learned["vocabulary"], "idf_weights": learned["idf_weights"],
                "encoding": self.encoding,
                "vocabulary_size": self.vocabulary_size()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        return cls(**config)
