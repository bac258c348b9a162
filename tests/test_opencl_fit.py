"""The opencl backend keeps a whole fit() on the device: count every host<->device transfer."""

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers
from minidl.models import Sequential

pytestmark = pytest.mark.skipif("opencl" not in minidl.available_backends(),
                                reason="no OpenCL platform (apt-get install pocl-opencl-icd)")


@pytest.fixture
def opencl():
    backend = minidl.set_backend("opencl")
    yield backend
    minidl.set_backend("numpy")


def model():
    return Sequential([layers.Input((10, 10, 3)),
                       layers.Conv2D(8, 3, padding="same", activation="relu"),
                       layers.BatchNormalization(), layers.MaxPooling2D(2), layers.Dropout(0.25),
                       layers.Flatten(), layers.Dense(16, activation="relu"),
                       layers.Dense(4, activation="softmax")])


def test_fit_epoch_moves_only_batches_up_and_epoch_metrics_down(opencl):
    rng = np.random.default_rng(0)
    n, batch = 70, 16
    x = rng.normal(size=(n, 10, 10, 3)).astype(np.float32)
    y = rng.integers(0, 4, size=n)
    m = model()
    m.compile(optimizer=optimizers.Adam(), loss="sparse_categorical_crossentropy",
              metrics=["accuracy", "sparse_top_k_categorical_accuracy"])
    opencl.synchronize()
    opencl.reset_stats()
    m.fit(x, y, batch_size=batch, epochs=1, verbose=0)
    stats = opencl.stats()
    steps = -(-n // batch)
    # up: each step's input batch and its labels; nothing else
    assert stats["h2d_count"] == 2 * steps
    assert stats["h2d_bytes"] == x.nbytes + n * 4
    # down: the epoch's loss and two metric counters, read once at the epoch's end
    assert stats["d2h_count"] == 3
    assert stats["d2h_bytes"] == 3 * 4


def test_fit_with_validation_counts(opencl):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 10, 10, 3)).astype(np.float32)
    y = rng.integers(0, 4, size=32)
    m = model()
    m.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    opencl.reset_stats()
    m.fit(x, y, batch_size=8, epochs=2, verbose=0, validation_data=(x[:16], y[:16]))
    stats = opencl.stats()
    # per epoch: 4 training steps + 2 validation steps up (x and y each); 2 + 2 values down
    assert stats["h2d_count"] == 2 * (2 * (4 + 2))
    assert stats["d2h_count"] == 2 * (2 + 2)
