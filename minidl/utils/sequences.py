"""keras.utils.pad_sequences and timeseries_dataset_from_array: host-side data preparation
(numpy arrays in, numpy batches out; no backend is involved)."""

import math
import numbers

import numpy as np

from .py_dataset import PyDataset


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """A (len(sequences), maxlen, ...) array of the sequences, each cut to maxlen (from the
    start with truncating="pre", the end with "post") and filled with `value` before
    ("pre") or after ("post") it; maxlen defaults to the longest sequence."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    if padding not in ("pre", "post"):
        raise ValueError(f'Padding type "{padding}" not understood')
    if truncating not in ("pre", "post"):
        raise ValueError(f'Truncating type "{truncating}" not understood')
    if maxlen is not None and (isinstance(maxlen, bool) or not isinstance(maxlen, numbers.Integral)
                               or maxlen < 0):
        raise ValueError(f"pad_sequences: maxlen must be an int >= 0 or None, got {maxlen!r}")
    lengths, sample_shape = [], None
    for i, s in enumerate(sequences):
        if not hasattr(s, "__len__"):
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {s!r}")
        lengths.append(len(s))
        if sample_shape is None and len(s):
            sample_shape = np.asarray(s).shape[1:]
    sample_shape = sample_shape or ()
    if maxlen is None:
        maxlen = max(lengths, default=0)
    is_text = np.issubdtype(np.dtype(dtype), np.str_) or np.dtype(dtype) == object
    if isinstance(value, str) and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
                         "You should set `dtype=object` for variable length strings.")
    out = np.full((len(lengths), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or not maxlen:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is "
                             f"different from expected shape {tuple(sample_shape)}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out


class TimeseriesDataset(PyDataset):
    """Batches of windows of a series: x[b] = data[p : p + sequence_length * sampling_rate :
    sampling_rate] and y[b] = targets[p] for each window start p (see
    timeseries_dataset_from_array)."""

    def __init__(self, data, targets, starts, sequence_length, sampling_rate, batch_size):
        super().__init__()
        self.data, self.targets, self.starts = data, targets, starts
        self.offsets = np.arange(sequence_length) * sampling_rate
        self.batch_size = len(starts) if batch_size is None else batch_size

    def __len__(self):
        return math.ceil(len(self.starts) / self.batch_size) if len(self.starts) else 0

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"TimeseriesDataset: batch {index} of {len(self)}")
        starts = self.starts[index * self.batch_size:(index + 1) * self.batch_size]
        x = self.data[starts[:, None] + self.offsets]
        return x if self.targets is None else (x, self.targets[starts])


def _positive(value, name, limit=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
    if limit is not None and value >= limit:
        raise ValueError(f"`{name}` must be lower than the length of the data. Received: "
                         f"{name}={value}, for data of length {limit}")


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None, format="tf"):
    """Sliding windows over `data` (and the target at each window's start) as Keras builds
    them, batched: a PyDataset that fit / evaluate / predict take (Keras returns a
    tf.data or grain dataset; format is checked and does not change that)."""
    data = np.asarray(data)
    if data.ndim == 0:
        raise ValueError("timeseries_dataset_from_array: data must be an array with a time axis")
    targets = None if targets is None else np.asarray(targets)
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= len(data):
            raise ValueError(f"`start_index` must be lower than the length of the data. "
                             f"Received: start_index={start_index}, for data of length {len(data)}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= len(data):
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {len(data)}")
    _positive(sequence_length, "sequence_length")
    _positive(sampling_rate, "sampling_rate", len(data))
    _positive(sequence_stride, "sequence_stride", len(data))
    if batch_size is not None:
        _positive(batch_size, "batch_size")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    start_index = start_index or 0
    end_index = len(data) if end_index is None else end_index
    data = data[start_index:end_index]
    count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = targets[start_index:end_index]
        count = min(count, len(targets))
    starts = np.arange(0, max(count, 0), sequence_stride)
    if shuffle:
        np.random.RandomState(np.random.randint(1e6) if seed is None else seed).shuffle(starts)
    return TimeseriesDataset(data, targets, starts, sequence_length, sampling_rate, batch_size)


__all__ = ["pad_sequences", "timeseries_dataset_from_array"]
