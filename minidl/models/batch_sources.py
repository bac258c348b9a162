"""Where fit/evaluate/predict take their batches from: host arrays (ArrayBatches) or a
data iterator such as minidl.data.ArrayIterator (IteratorBatches).

Both yield (x, y) batches of one epoch, optionally skipping its first steps (a resumed
run), and describe themselves by a `signature` that a saved training position records,
so that a later fit resumes only on data arranged the same way.
"""

from collections.abc import Mapping

import numpy as np

from ..random import mix_seed


def is_iterator(x):
    # str, bytes and dicts have __iter__ and __len__ too, but are malformed data, not iterators.
    return (not isinstance(x, (np.ndarray, list, tuple, str, bytes, Mapping))
            and hasattr(x, "__iter__") and hasattr(x, "__len__"))


def _plain(value):
    """A JSON-safe int or bool (a file records it), or None for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None


class ArrayBatches:
    """Batches of validated host arrays in an order fixed by (seed, epoch): x and y are
    lists of arrays (one per model input / output) of one length, y may be None; with
    sample weights (one array per output, or None). Batches are (x, y, sample_weight),
    already validated (`validated`), so the loops take them as they are; with `pack`
    (step_data.StepArrays.pack) each batch's lists get back the nesting the data had."""

    validated = True

    def __init__(self, x, y, batch_size, shuffle, seed, sample_weight=None, pack=None):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.shuffle, self.seed = shuffle, seed
        self.sample_weight = sample_weight   # None, or a list of arrays like y
        self.pack = pack
        self.samples = len(x[0])

    def __len__(self):
        return -(-self.samples // self.batch_size)

    def signature(self):
        return {"samples": self.samples, "batch_size": self.batch_size,
                "shuffle": bool(self.shuffle), "steps": len(self)}

    def state(self):
        return None   # the order is a function of (seed, epoch): nothing to record

    def restore(self, state):
        pass

    def epoch(self, epoch, skip=0):
        n = self.samples
        order = (np.random.default_rng(mix_seed(self.seed, epoch)).permutation(n)
                 if self.shuffle else None)
        for i in range(skip, len(self)):
            lo, hi = i * self.batch_size, min(n, (i + 1) * self.batch_size)
            part = slice(lo, hi) if order is None else order[lo:hi]
            batch = ([a[part] for a in self.x],
                     None if self.y is None else [a[part] for a in self.y],
                     None if self.sample_weight is None else [a[part] for a in self.sample_weight])
            yield batch if self.pack is None else self.pack(*batch)


class IteratorBatches:
    """Batches from a data iterator (e.g. minidl.data.ArrayIterator); with `unpack`
    (step_data.iterator_batch, for a step of your own) each batch is taken apart as Keras
    does and passed on unchecked."""

    def __init__(self, iterator, shuffle=False, seed=0, unpack=None):
        self.iterator = iterator
        self.unpack = unpack
        self.validated = unpack is not None
        # a PyDataset's batch order is shuffled per epoch by fit, as Keras; other iterators
        # order their batches themselves
        self.shuffle, self.seed = bool(shuffle), seed

    def __len__(self):
        return len(self.iterator)

    def signature(self):
        it = self.iterator
        return {"samples": _plain(getattr(it, "num_samples", None)),
                "batch_size": _plain(getattr(it, "batch_size", None)),
                "shuffle": _plain(getattr(it, "shuffle", None)), "steps": len(it)}

    def state(self):
        get_state = getattr(self.iterator, "get_state", None)
        return get_state() if get_state else None

    def restore(self, state):
        if state is not None and hasattr(self.iterator, "set_state"):
            self.iterator.set_state(state)

    def epoch(self, epoch, skip=0):
        for batch in self._batches(epoch, skip):
            yield batch if self.unpack is None else self.unpack(batch)

    def _batches(self, epoch, skip):
        if hasattr(self.iterator, "_minidl_epoch_batches"):   # a minidl.utils.PyDataset
            yield from self.iterator._minidl_epoch_batches(epoch, skip, self.shuffle, self.seed)
            return
        begin = getattr(self.iterator, "on_epoch_begin", None)
        if begin is not None:
            begin(epoch)
        for i, batch in enumerate(self.iterator):
            if i >= skip:
                yield batch
