"""Hashing and HashedCrossing: categories (strings or integers) hashed into a fixed number of bins.

Host preprocessing layers (host_preprocessing.py). The bins are TensorFlow's, bit for bit
(string_hashing.py): a value is written as text (integers in decimal,
floats truncated to integers first, as Keras does) and hashed with FarmHash's Fingerprint64,
or with SipHash-2-4 keyed by `salt`; a cross of features combines their fingerprints (an
integer feature's fingerprint is its value) with FingerprintCat64 from the key 0xDECAFCAFFE.
"""

import numpy as np

from .string_hashing import MASK64, fingerprint64, fingerprint_cat64, siphash24
from .host_preprocessing import (HostPreprocessingLayer, InModels, as_array, encode_categorical,
                                 encoded_sample_shape)

CROSS_HASH_KEY = 0xDECAFCAFFE   # TensorFlow's SPARSE_CROSS_DEFAULT_HASH_KEY


def utf8(value):
    """The bytes TensorFlow hashes for one element (str, bytes or a number)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return str(int(value)).encode("ascii")


def _is_text(array):
    return array.dtype.kind in "USO"


def _check_kind(array, owner):
    if array.dtype.kind not in "USObiuf":
        raise ValueError(f"{owner} expects strings or numbers, got {array.dtype}")
    if array.dtype.kind == "O":
        bad = [v for v in array.ravel()[:1000] if not isinstance(v, (str, bytes, int, np.integer))]
        if bad:
            raise ValueError(f"{owner} expects strings or integers, got a {type(bad[0]).__name__}")


class Hashing(InModels, HostPreprocessingLayer):
    """Hash strings or integers into num_bins bins (bin 0 kept for mask_value when given)."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        dtype = kwargs.pop("dtype", None)
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError("The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             f"values. Received: num_bins={num_bins}.")
        self.check_choice("output_mode", output_mode, ("int", "one_hot", "multi_hot", "count"))
        if dtype is None:
            dtype = "int64" if output_mode == "int" else "float32"
        dtype = getattr(dtype, "name", dtype)
        if output_mode == "int" and dtype not in ("int32", "int64"):
            raise ValueError('When `output_mode="int"`, `dtype` should be an integer type, '
                             f"'int32' or 'in64'. Received: dtype={dtype}")
        if sparse:
            raise ValueError("Hashing: sparse=True needs sparse tensors, which minidl does not "
                             "have; use sparse=False")
        self.salt = None
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                self.salt = list(salt)
            elif isinstance(salt, int):
                self.salt = [salt, salt]
            else:
                raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 "
                                 f"integers, or a single integer. Received: salt={salt}.")
        self.num_bins = num_bins
        self.mask_value = mask_value
        self.strong_hash = salt is not None
        self.output_mode = output_mode
        self.sparse = sparse
        self.output_dtype = dtype

    def compute(self, inputs):
        x = as_array(inputs, self.describe())
        _check_kind(x, self.describe())
        if self.output_mode == "one_hot" and x.ndim and x.shape[-1] == 1:
            x = x[..., 0]
        bins = self.hash_to_bins(x)
        return encode_categorical(bins, self.output_mode, self.num_bins, self.output_dtype) \
            .astype(self.output_dtype)

    def hash_to_bins(self, x):
        hash_bins = self.num_bins
        mask = None
        if self.mask_value is not None and hash_bins > 1:
            hash_bins -= 1
            mask = x == self.mask_value
        if x.dtype.kind == "f":
            x = np.trunc(x).astype(np.int64)   # tf.cast to int64
        if self.strong_hash:
            key0, key1 = (int(k) & MASK64 for k in self.salt)
            hash_one = lambda data: siphash24(key0, key1, data) % hash_bins
        else:
            hash_one = lambda data: fingerprint64(data) % hash_bins
        uniques, inverse = np.unique(x.ravel(), return_inverse=True)
        table = np.array([hash_one(utf8(v)) for v in uniques.tolist()], dtype=np.int64)
        out = table[inverse].reshape(x.shape) if x.size else np.zeros(x.shape, np.int64)
        if mask is not None:
            out = np.where(mask, 0, out + 1)
        return out

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        return tuple(input_shape[:-1]) + (self.num_bins,) if len(input_shape) else (self.num_bins,)

    string_inputs = True

    def output_kind(self):
        return "int" if self.output_mode == "int" else "float"

    def sample_output_shape(self, input_shape):
        """In a model (host_preprocessing.py): bins keep the shape, encodings follow
        encode_categorical on the batch."""
        return encoded_sample_shape(input_shape, self.num_bins, self.output_mode, self.describe())

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": self.sparse, "dtype": self.output_dtype}


class HashedCrossing(HostPreprocessingLayer):
    """The cross of two or more categorical features, hashed into num_bins bins."""

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.check_choice("output_mode", output_mode, ("int", "one_hot"))
        if sparse:
            raise ValueError("HashedCrossing: sparse=True needs sparse tensors, which minidl does "
                             "not have; use sparse=False")
        if isinstance(num_bins, bool) or not isinstance(num_bins, (int, np.integer)) or num_bins < 1:
            raise ValueError(f"HashedCrossing: num_bins must be an int >= 1, got {num_bins!r}")
        self.num_bins = int(num_bins)
        self.output_mode = output_mode
        self.sparse = sparse
        self.output_dtype = getattr(dtype, "name", dtype) or ("int64" if output_mode == "int"
                                                              else "float32")

    def compute(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("`HashedCrossing` should be called on a list or tuple of inputs. "
                             f"Received: inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError("`HashedCrossing` should be called on at least two inputs. "
                             f"Received: inputs={inputs}")
        arrays = [as_array(x, self.describe()) for x in inputs]
        shape = arrays[0].shape
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, `(batch_size)` "
                             f"or `(batch_size, 1)`. Received shapes: {[a.shape for a in arrays]}")
        if any(a.shape != shape for a in arrays[1:]):
            raise ValueError("All `HashedCrossing` inputs should have equal shape. Received "
                             f"shapes: {[a.shape for a in arrays]}")
        for a in arrays:
            if a.dtype.kind not in "iuUSO":
                raise ValueError("All `HashedCrossing` inputs should have an integer or string "
                                 f"dtype. Received dtypes: {[str(a.dtype) for a in arrays]}")
        columns = [self._feature_hashes(a.ravel()) for a in arrays]
        crossed = []
        for row in zip(*columns):
            hashed = CROSS_HASH_KEY
            for feature in row:
                hashed = fingerprint_cat64(hashed, feature)
            crossed.append(hashed % self.num_bins)
        bins = np.array(crossed, dtype=np.int64).reshape(shape)
        return encode_categorical(bins, self.output_mode, self.num_bins, self.output_dtype) \
            .astype(self.output_dtype)

    @staticmethod
    def _feature_hashes(values):
        if values.dtype.kind in "iu":
            return [int(v) & MASK64 for v in values.tolist()]   # an integer feature is its own hash
        return [int(v) & MASK64 if isinstance(v, (int, np.integer)) else fingerprint64(utf8(v))
                for v in values.tolist()]

    def compute_output_shape(self, input_shape):
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if first and first[-1] != 1:
            return first + (self.num_bins,)
        return first[:-1] + (self.num_bins,)

    def get_config(self):
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": self.name, "dtype": self.output_dtype}
