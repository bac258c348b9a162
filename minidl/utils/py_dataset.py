"""keras.utils.PyDataset (and its old name Sequence): a dataset of batches by index,
loaded in parallel.

    class Batches(minidl.utils.PyDataset):
        def __init__(self, x, y, batch_size, **kwargs):
            super().__init__(**kwargs)          # workers, use_multiprocessing, max_queue_size
            ...
        def __len__(self):
            return math.ceil(len(self.x) / self.batch_size)
        def __getitem__(self, idx):
            return self.x[idx * bs:(idx + 1) * bs], self.y[idx * bs:(idx + 1) * bs]

    model.fit(Batches(x, y, 32, workers=4), epochs=3)

fit / evaluate / predict take one as x. Each epoch calls on_epoch_begin(), reads every
batch (in a shuffled order when fit's shuffle=True, as Keras), then on_epoch_end().
With workers > 1 (or workers >= 1 and use_multiprocessing=True) batches are read ahead by
that many threads (processes), at most max_queue_size batches in flight, and come back in
order: __getitem__ runs while the model trains on earlier batches.
"""

import concurrent.futures
import multiprocessing
import numbers

import numpy as np

from ..random import mix_seed

_dataset_in_worker = None   # the dataset, in a worker process (set by _init_worker)


def _init_worker(dataset):
    global _dataset_in_worker
    _dataset_in_worker = dataset


def _get_in_worker(index):
    return _dataset_in_worker[index]


class PyDataset:
    """Base class of datasets of batches: define __len__ (the number of batches) and
    __getitem__(index) (a batch: x, (x,), (x, y) or (x, y, sample_weight))."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        owner = type(self).__name__
        for name, value, low in (("workers", workers, 0), ("max_queue_size", max_queue_size, 1)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"{owner}: {name} must be an int >= {low}, got {value!r}")
        if not isinstance(use_multiprocessing, bool):
            raise TypeError(f"{owner}: use_multiprocessing must be True or False, "
                            f"got {use_multiprocessing!r}")
        self._workers = int(workers)
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = int(max_queue_size)

    # the attributes are read through properties, as Keras (a subclass that forgot to call
    # super().__init__ gets the defaults)
    @property
    def workers(self):
        return getattr(self, "_workers", 1)

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        return getattr(self, "_use_multiprocessing", False)

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        return getattr(self, "_max_queue_size", 10)

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    @property
    def num_batches(self):
        """The number of batches (len(self)), or None when __len__ is not defined."""
        if type(self).__len__ is PyDataset.__len__:
            return None
        return len(self)

    def __len__(self):
        # Keras 3 lets a subclass give num_batches instead of __len__
        if type(self).num_batches is not PyDataset.num_batches:
            count = self.num_batches
            if count is not None:
                return int(count)
            raise ValueError(f"{type(self).__name__}: num_batches is None (an endless dataset); "
                             "minidl needs the number of batches of an epoch")
        raise NotImplementedError(f"{type(self).__name__} must define __len__ (the number of "
                                  "batches) or num_batches")

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index) "
                                  "(one batch)")

    def on_epoch_begin(self):
        """Called at the start of every epoch."""

    def on_epoch_end(self):
        """Called at the end of every epoch (e.g. to shuffle the samples)."""

    def __iter__(self):
        """The batches in order (loaded in parallel as the workers settings say)."""
        return self._minidl_batches(range(len(self)))

    def _minidl_batches(self, order):
        """The batches at the indices of `order`, in that order."""
        order = list(order)
        parallel = self.workers > 1 or (self.workers > 0 and self.use_multiprocessing)
        if not parallel:
            for index in order:
                yield self[index]
            return
        if self.use_multiprocessing:
            # fork: the workers inherit the dataset as it is now (nothing is pickled but
            # the batches coming back), as Keras's multiprocessing loader
            pool = concurrent.futures.ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("fork"),
                initializer=_init_worker, initargs=(self,))
            get = _get_in_worker
        else:
            pool = concurrent.futures.ThreadPoolExecutor(self.workers,
                                                         thread_name_prefix="minidl-pydataset")
            get = self.__getitem__
        in_flight = []
        try:
            position = 0
            while position < len(order) or in_flight:
                while position < len(order) and len(in_flight) < self.max_queue_size:
                    in_flight.append(pool.submit(get, order[position]))
                    position += 1
                yield in_flight.pop(0).result()
        finally:
            for future in in_flight:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)

    def _minidl_epoch_batches(self, epoch, skip=0, shuffle=False, seed=0):
        """One epoch of fit: on_epoch_begin(), the batches (their order shuffled from
        (seed, epoch) when shuffle is set) after the first `skip`, on_epoch_end()."""
        n = len(self)
        order = (np.random.default_rng(mix_seed(seed, epoch)).permutation(n) if shuffle
                 else np.arange(n))
        self.on_epoch_begin()
        yield from self._minidl_batches(int(i) for i in order[skip:])
        self.on_epoch_end()


Sequence = PyDataset

__all__ = ["PyDataset", "Sequence"]
