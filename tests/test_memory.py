"""A model's memory follows the largest batch it has seen, not how many batch sizes it used.

Layers, the graph and the model keep one buffer per role sized for the largest batch and
view it for smaller ones (minidl/layers/buffers.py); conv and pooling layers keep the plan
of the latest batch size only.
"""

import tracemalloc

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend
from minidl.models import Model

SIZES = (48, 40, 32, 24, 16, 8)
BACKENDS = [name for name in ("numpy", "cpu", "opencl") if name in minidl.available_backends()]


def _model(backend):
    minidl.set_backend(backend)
    minidl.set_seed(3)
    inp = layers.Input((12, 12, 3))
    h = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    h = layers.BatchNormalization()(h)
    r = layers.Conv2D(8, 3, padding="same")(h)
    h = layers.Add()([h, r])   # h feeds two layers: the graph sums its gradients in a buffer
    h = layers.MaxPooling2D(2)(h)
    h = layers.Dropout(0.25)(h)
    h = layers.Flatten()(h)
    out = layers.Dense(5, activation="softmax")(h)
    model = Model(inp, out)
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def _data(n=64):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, 12, 12, 3)).astype(np.float32),
            rng.integers(0, 5, n).astype(np.int32))


def _use_at(model, x, y, n):
    model.train_on_batch(x[:n], y[:n])
    model.evaluate(x[:n], y[:n], batch_size=n)
    return model.predict(x[:n], batch_size=n)


class _CountingEmpty:
    """Wraps a backend's `empty` (which `zeros` and `from_numpy` call too) to count bytes."""

    def __init__(self, backend, monkeypatch):
        self.bytes = 0
        self._empty = backend.empty
        monkeypatch.setattr(backend, "empty", self)

    def __call__(self, shape, dtype="float32"):
        self.bytes += int(np.prod(shape)) * 4
        return self._empty(shape, dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_smaller_batches_allocate_no_backend_tensor(backend, monkeypatch):
    model, (x, y) = _model(backend), _data()
    _use_at(model, x, y, 64)
    counter = _CountingEmpty(get_backend(), monkeypatch)
    for n in SIZES:
        _use_at(model, x, y, n)
    assert counter.bytes == 0
    # the steady state of training: no allocation at all
    model.train_on_batch(x, y)
    counter.bytes = 0
    for _ in range(3):
        model.train_on_batch(x, y)
    assert counter.bytes == 0


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "opencl"])
def test_host_memory_does_not_grow_with_the_number_of_batch_sizes(backend):
    model, (x, y) = _model(backend), _data()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _use_at(model, x, y, 64)
        one_size = tracemalloc.get_traced_memory()[0] - before
        for n in SIZES:
            _use_at(model, x, y, n)
        more_sizes = tracemalloc.get_traced_memory()[0] - before - one_size
    finally:
        tracemalloc.stop()
    # Six more sizes used to keep six more sets of buffers (2.6 times the first set here).
    assert more_sizes < 0.1 * one_size, (one_size, more_sizes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_the_largest_batch_compute_the_same(backend):
    model, (x, y) = _model(backend), _data()
    full = model.predict(x, batch_size=64)
    for n in (48, 7, 64, 1):
        np.testing.assert_allclose(model.predict(x[:n], batch_size=n), full[:n],
                                   rtol=1e-5, atol=1e-6)
    # training at a smaller batch after a larger one: the same update as a fresh model's
    model.train_on_batch(x[:20], y[:20])
    fresh = _model(backend)
    fresh.predict(x[:3], batch_size=3)   # a different first size, so buffers grow later
    fresh.train_on_batch(x[:20], y[:20])
    for a, b in zip(model.get_weights(), fresh.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
