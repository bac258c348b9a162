"""StringLookup and IntegerLookup: a vocabulary maps tokens to indices (or back), on the host.

Host preprocessing layers (host_preprocessing.py), with Keras 3's semantics:

    index 0                           the mask token, when mask_token is set and output_mode="int"
    the next num_oov_indices          out-of-vocabulary tokens (several: spread by hashing, or
                                      for integers by floormod)
    then the vocabulary               most frequent first after adapt(); ties broken by the
                                      larger token (TensorFlow's byte order), as Keras sorts

output_mode "int" gives int64 indices; "one_hot", "multi_hot" and "count" int64 encodings of
the last axis and "tf_idf" float32 counts times the idf weights, log(1 + documents /
(1 + documents holding the token)), with the mean weight for the OOV indices. invert=True maps
indices back to tokens (str or int64 arrays). The vocabulary (and idf weights), given or
learned by adapt(), are in get_config, so from_config rebuilds the layer whole.
"""

import collections

import numpy as np

from .string_hashing import MASK64, fingerprint64, siphash24
from .hashing import utf8
from ..string_tensors import STRING
from .host_preprocessing import (HostPreprocessingLayer, InModels, as_array, encode_categorical,
                                 encoded_sample_shape)

_DROPPED = -1   # a masked token in a non-int mode: counts in no bin


class IndexLookup(InModels, HostPreprocessingLayer):
    """What StringLookup and IntegerLookup share; `vocabulary_dtype` is "string" or "int64"."""

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary_dtype,
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", name=None, salt=None, **kwargs):
        frozen_size = kwargs.pop("vocabulary_size", None)
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        super().__init__(name=name, **kwargs)
        owner = type(self).__name__
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: "
                             f"max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                             f"max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        self.check_choice("oov_method", oov_method, ("floormod", "farmhash"))
        if salt is not None:
            if vocabulary_dtype != "string" and oov_method != "farmhash":
                raise ValueError("`salt` can only be used when `oov_method='farmhash'`. "
                                 f"Received: oov_method={oov_method}")
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                salt = list(salt)
            elif isinstance(salt, int):
                salt = [salt, salt]
            else:
                raise ValueError(f"The `salt` argument for `{owner}` can only be a tuple of 2 "
                                 f"integers, or a single integer. Received: salt={salt}.")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        self.check_choice("output_mode", output_mode,
                          ("int", "one_hot", "multi_hot", "count", "tf_idf"))
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if sparse:
            raise ValueError(f"{owner}: sparse=True needs sparse tensors, which minidl does not "
                             "have; use sparse=False")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("`idf_weights` should only be set if `output_mode` is `'tf_idf'`. "
                             f"Received: idf_weights={idf_weights} and output_mode={output_mode}")
        if output_mode == "tf_idf" and has_input_vocabulary and idf_weights is None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, "
                             "the `idf_weights` argument must also be provided.")
        if isinstance(vocabulary, str):
            raise ValueError(f"{owner}: a vocabulary file ({vocabulary!r}) is not read; pass the "
                             "vocabulary as a list of tokens")
        self.invert = invert
        self.max_tokens = max_tokens
        self.num_oov_indices = num_oov_indices
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = sparse
        self.pad_to_max_tokens = pad_to_max_tokens
        self.vocabulary_dtype = vocabulary_dtype
        self.oov_method = oov_method
        self.salt = salt
        self.input_vocabulary = vocabulary
        self.input_idf_weights = idf_weights
        self.has_input_vocabulary = has_input_vocabulary
        self.frozen_vocabulary_size = frozen_size
        self.tokens = []              # the learned or given vocabulary, without special tokens
        self.index = {}               # token -> index
        self.idf_weights = None       # float32 (vocabulary size or max_tokens,) in tf_idf mode
        self.reset_state()
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ---- the vocabulary -------------------------------------------------------------------

    def oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def token_start_index(self):
        return self.oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        """The number of indices: the special ones and the vocabulary."""
        return len(self.tokens) + self.token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        vocab = [self.oov_token] * self.token_start_index() + list(self.tokens)
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        return vocab if include_special_tokens else vocab[self.token_start_index():]

    def key(self, value):
        """A token as the vocabulary holds it: str for strings, int for integers."""
        raise NotImplementedError

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Set the vocabulary (and, for tf_idf, one idf weight per entry), as Keras does:
        the special tokens may lead it, in their order, or be left out."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is `'tf_idf'`. "
                             f"Received: output_mode={self.output_mode} and "
                             f"idf_weights={idf_weights}")
        if isinstance(vocabulary, str):
            raise ValueError(f"{self.describe()}: a vocabulary file ({vocabulary!r}) is not read; "
                             "pass the vocabulary as a list of tokens")
        vocabulary = [self.key(v) for v in np.asarray(vocabulary).ravel().tolist()]
        if not vocabulary:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        token_start = self.token_start_index()
        special = [self.mask_token] * self.oov_start_index() + [self.oov_token] * self.num_oov_indices
        found_special = vocabulary[:token_start] == special
        tokens = vocabulary[token_start:] if found_special else vocabulary
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please "
                             f"uniquify your dataset. The repeated terms are: {repeated}")
        for name, token, check in (("mask", self.mask_token, True),
                                   ("OOV", self.oov_token, self.invert)):
            if check and token is not None and token in tokens:
                raise ValueError(
                    f"Found reserved {name} token at unexpected location in `vocabulary`. Note "
                    "that passed `vocabulary` does not need to include the OOV and mask tokens. "
                    "Either remove all mask and OOV tokens, or include them only at the start of "
                    f"the vocabulary in precisely this order: {special}. Received: "
                    f"{name.lower()}_token={token} at vocabulary index "
                    f"{len(vocabulary) - 1 - vocabulary[::-1].index(token)}")
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab size. "
                             f"Received vocabulary size is {token_start + len(tokens)}; "
                             f"`max_tokens` is {self.max_tokens}.")
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            weights = np.asarray(idf_weights, dtype=np.float64)
            if len(vocabulary) != len(weights):
                raise ValueError("`idf_weights` must be the same length as vocabulary. "
                                 f"len(idf_weights) is {len(weights)}; len(vocabulary) is "
                                 f"{len(vocabulary)}")
            if weights.ndim != 1:
                raise ValueError(f"TF-IDF data must be a 1-index array. Received: "
                                 f"idf_weights of shape {weights.shape}")
            front = 0 if found_special else token_start
            front_value = 0 if found_special else np.average(weights)
            back = self.max_tokens - front - len(weights) if self.pad_to_max_tokens else 0
            self.idf_weights = np.pad(weights, (front, back), "constant",
                                      constant_values=(front_value, 0)).astype(np.float32)

    def _set_tokens(self, tokens):
        self.tokens = list(tokens)
        start = self.token_start_index()
        self.index = {token: start + i for i, token in enumerate(self.tokens)}
        self._record_vocabulary_size()

    def _record_vocabulary_size(self):
        # As Keras: an encoding's width, once known, is fixed (a model downstream depends on it)
        if self.output_mode != "int" and not self.pad_to_max_tokens \
                and self.frozen_vocabulary_size is not None \
                and self.frozen_vocabulary_size != self.vocabulary_size():
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, the "
                "vocabulary size cannot be changed after the layer is called. Old vocab size is "
                f"{self.frozen_vocabulary_size}, new vocab size is {self.vocabulary_size()}")
        self.frozen_vocabulary_size = self.vocabulary_size()

    # ---- adapt ----------------------------------------------------------------------------

    def adapt(self, data, steps=None):
        """Learn the vocabulary from `data`: an array (each row a document) or an iterable of
        batches (the first `steps` of them)."""
        self.reset_state()
        if isinstance(data, (list, tuple, np.ndarray)) or not hasattr(data, "__iter__"):
            array = as_array(data, self.describe())
            self.update_state(array[:, None] if array.ndim == 1 else array)
        else:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        self.finalize_state()

    def documents(self, data):
        """The rows (documents) of token lists that update_state counts."""
        array = as_array(data, self.describe())
        if array.ndim == 0:
            array = array[None]
        if array.ndim == 1:
            array = array[None]
        return [[self.key(v) for v in row] for row in array.reshape(array.shape[0], -1).tolist()]

    def update_state(self, data, documents=None):
        if self.has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary "
                             "via `vocabulary` argument or `set_vocabulary()` method.")
        for row in self.documents(data) if documents is None else documents:
            self.token_counts.update(row)
            if self.output_mode == "tf_idf":
                self.document_counts.update(set(row))
                self.num_documents += 1

    def finalize_state(self):
        if self.has_input_vocabulary or not self.token_counts:
            self._record_vocabulary_size()
            return
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                self.token_counts.pop(special, None)
        # Keras: np.lexsort((tokens, counts))[::-1]: by count, then by token, both descending
        ranked = sorted(self.token_counts.items(), key=lambda tc: (tc[1], self.sort_key(tc[0])),
                        reverse=True)
        if self.max_tokens:
            ranked = ranked[:self.max_tokens - self.token_start_index()]
        tokens = [t for t, _ in ranked]
        if self.output_mode == "tf_idf":
            counts = np.array([self.document_counts[t] for t in tokens], dtype=np.float64)
            idf = np.log(1 + self.num_documents / (1 + counts)).astype(np.float32)
            weights = np.pad(idf, (self.token_start_index(), 0), "constant",
                             constant_values=np.mean(idf, dtype=np.float32))
            if self.pad_to_max_tokens and self.max_tokens is not None:
                weights = np.pad(weights, (0, self.max_tokens - weights.size), "constant")
            self.idf_weights = weights.astype(np.float32)
        self._set_tokens(tokens)
        self.reset_state()

    def sort_key(self, token):
        return token

    def reset_state(self):
        if self.has_input_vocabulary:
            return
        self.token_counts = collections.Counter()
        self.document_counts = collections.Counter()
        self.num_documents = 0

    # ---- calling --------------------------------------------------------------------------

    def compute(self, inputs):
        x = self.check_input(as_array(inputs, self.describe()))
        if self.invert:
            return self.invert_lookup(x)
        if self.output_mode != "int" and not self.pad_to_max_tokens and not self.tokens \
                and not self.has_input_vocabulary:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you "
                "must set the layer's vocabulary before calling it. Either pass a `vocabulary` "
                "argument to the layer, or call `adapt` with some sample data.")
        return self.encode(self.lookup(x))

    def check_input(self, x):
        return x

    def lookup(self, x):
        """int64 indices of the tokens of `x` (an array of any shape)."""
        mask_value = 0 if self.output_mode == "int" else _DROPPED
        oov_start = self.oov_start_index()
        flat = x.ravel().tolist()
        out = np.empty(len(flat), dtype=np.int64)
        missing = []
        for i, value in enumerate(flat):
            token = self.key(value)
            if self.mask_token is not None and token == self.mask_token:
                out[i] = mask_value
            elif token in self.index:
                out[i] = self.index[token]
            elif self.num_oov_indices == 1:
                out[i] = oov_start
            elif self.num_oov_indices == 0:
                missing.append(token)
            else:
                out[i] = oov_start + self.oov_bucket(token)
        if missing:
            raise ValueError(f"{self.describe()}: when `num_oov_indices=0` all inputs should be in "
                             f"vocabulary, found OOV values {missing[:10]}, consider setting "
                             "`num_oov_indices=1`.")
        return out.reshape(x.shape)

    def oov_bucket(self, token):
        """Which of the num_oov_indices OOV indices an unknown token takes."""
        if isinstance(token, int) and self.oov_method != "farmhash":
            return token % self.num_oov_indices   # Python's % is floormod
        data = utf8(token)
        if self.salt is not None:
            return siphash24(int(self.salt[0]) & MASK64, int(self.salt[1]) & MASK64, data) \
                % self.num_oov_indices
        return fingerprint64(data) % self.num_oov_indices

    def encode(self, indices):
        if self.output_mode == "int":
            return indices
        depth = self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()
        mode = "count" if self.output_mode == "tf_idf" else self.output_mode
        out = encode_categorical(indices, mode, depth, "int64")
        if self.output_mode == "tf_idf":
            return out.astype(np.float32) * self.idf_weights
        return out

    def invert_lookup(self, x):
        if x.dtype.kind not in "iu":
            raise ValueError(f"{self.describe()} with invert=True expects integer indices, got "
                             f"{x.dtype} of shape {x.shape}")
        start = self.token_start_index()
        flat = []
        for i in x.ravel().tolist():
            if self.mask_token is not None and i == 0:
                flat.append(self.mask_token)
            elif start <= i < start + len(self.tokens):
                flat.append(self.tokens[i - start])
            else:
                flat.append(self.oov_token)
        if self.vocabulary_dtype == "string":
            return np.array(flat, dtype=str).reshape(x.shape)
        return np.array(flat, dtype=np.int64).reshape(x.shape)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self.frozen_vocabulary_size
        input_shape = tuple(input_shape)
        if self.output_mode == "one_hot":
            if len(input_shape) > 1 and input_shape[-1] == 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        return input_shape[:-1] + (depth,)

    def output_kind(self):
        if self.invert:
            return STRING if self.vocabulary_dtype == "string" else "int"
        return "float" if self.output_mode == "tf_idf" else "int"

    def sample_output_shape(self, input_shape):
        """In a model (host_preprocessing.py): int indices keep the shape; the encodings
        follow encode_categorical on the batch."""
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()
        mode = "count" if self.output_mode == "tf_idf" else self.output_mode
        return encoded_sample_shape(input_shape, depth, mode, self.describe())

    def get_config(self):
        def plain(values):
            return None if values is None else np.asarray(values).tolist()

        # Keras keeps a learned vocabulary in the model file's assets; a host layer has no
        # model file, so its config holds the vocabulary it has, special tokens first (the form
        # set_vocabulary takes back), and the idf weights of those entries.
        vocabulary, idf_weights = self.input_vocabulary, self.input_idf_weights
        if self.tokens:
            vocabulary = self.get_vocabulary()
            if self.idf_weights is not None:
                idf_weights = self.idf_weights[:len(vocabulary)]
        return {**super().get_config(), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
                "mask_token": self.mask_token, "output_mode": self.output_mode,
                "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
                "vocabulary_dtype": self.vocabulary_dtype,
                "idf_weights": plain(idf_weights), "vocabulary": plain(vocabulary),
                "vocabulary_size": self.frozen_vocabulary_size,
                "oov_method": self.oov_method, "salt": self.salt}


class StringLookup(IndexLookup):
    """Map strings to int64 indices through a vocabulary (see the module docstring)."""

    @property
    def string_inputs(self):
        return not self.invert   # invert=True maps indices back to strings

    needs_strings = string_inputs

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 pad_to_max_tokens=False, sparse=False, encoding="utf-8", name=None, salt=None,
                 **kwargs):
        kwargs.pop("vocabulary_dtype", None)
        self.encoding = encoding
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         salt=salt, vocabulary_dtype="string", **kwargs)

    def key(self, value):
        if isinstance(value, bytes):
            return value.decode(self.encoding)
        if isinstance(value, str):
            return value
        raise ValueError(f"{self.describe()} expects strings, got a {type(value).__name__} "
                         f"({value!r})")

    def sort_key(self, token):
        return token.encode("utf-8")   # TensorFlow compares the bytes

    def check_input(self, x):
        if x.dtype.kind not in "USO" and not (self.invert and x.dtype.kind in "iu"):
            raise ValueError(f"{self.describe()} expects strings, got {x.dtype} of shape {x.shape}")
        return x

    def get_config(self):
        config = super().get_config()
        del config["vocabulary_dtype"]
        config["encoding"] = self.encoding
        return config


class IntegerLookup(IndexLookup):
    """Map integers to int64 indices through a vocabulary (see the module docstring)."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, oov_method="floormod",
                 salt=None, name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError("If `max_tokens` is set for `IntegerLookup`, it must be greater than "
                             f"1. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("The value of `num_oov_indices` argument for `IntegerLookup` must "
                             f">= 0. Received: num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError("Only `vocabulary_dtype='int64'` is supported at this time. "
                             f"Received: vocabulary_dtype={vocabulary_dtype}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=None if mask_token is None else int(mask_token),
                         oov_token=None if oov_token is None else int(oov_token),
                         vocabulary=vocabulary, vocabulary_dtype=vocabulary_dtype,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         sparse=sparse, pad_to_max_tokens=pad_to_max_tokens,
                         oov_method=oov_method, salt=salt, name=name, **kwargs)

    def key(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{self.describe()} expects integers, got a {type(value).__name__} "
                             f"({value!r})")
        return int(value)

    @property
    def string_inputs(self):
        return False

    def from_host(self, array):
        """A model's integer input arrives as float32 (exact up to 2**24): back to int64."""
        if array.dtype.kind == "f" and np.all(np.mod(array, 1) == 0):
            return array.astype(np.int64)
        return array

    def check_input(self, x):
        if x.dtype.kind not in "iu":
            raise ValueError(f"{self.describe()} expects integers, got {x.dtype} of shape {x.shape}")
        return x

    def get_config(self):
        config = super().get_config()
        if config["vocabulary"] is not None:
            config["vocabulary"] = [int(v) for v in config["vocabulary"]]
        return config
