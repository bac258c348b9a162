"""Layers written with minidl.ops train like the built-in ones, on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops, optimizers
from minidl.models import Sequential


@pytest.fixture(params=[b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()])
def active_backend(request):
    backend = minidl.set_backend(request.param)
    yield backend
    minidl.set_backend("numpy")


class Linear(layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        return dict(super().get_config(), units=self.units)


def test_linear_from_ops_trains_to_the_weights_of_dense(active_backend):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    minidl.set_seed(1)
    custom = Sequential([layers.Input((8,)), Linear(16), layers.Activation("relu"),
                         layers.Dense(3, activation="softmax")])
    assert custom.layers[0].output_shape == (16,)    # inferred by running call
    minidl.set_seed(1)
    dense = Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"),
                        layers.Dense(3, activation="softmax")])
    dense.set_weights(custom.get_weights())
    for m in (custom, dense):
        m.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
        m.fit(x, y, batch_size=16, epochs=3, verbose=0)
    for a, b in zip(custom.get_weights(), dense.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_custom_layer_on_opencl_moves_nothing_inside_a_step():
    if "opencl" not in minidl.available_backends():
        pytest.skip("no OpenCL platform")
    backend = minidl.set_backend("opencl")
    try:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(32, 8)).astype(np.float32)
        y = rng.integers(0, 3, 32)
        m = Sequential([layers.Input((8,)), Linear(16), layers.Dense(3, activation="softmax")])
        m.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        m.fit(x, y, batch_size=16, epochs=1, verbose=0)   # builds the programs
        backend.synchronize()
        backend.reset_stats()
        m.fit(x, y, batch_size=16, epochs=1, verbose=0)
        stats = backend.stats()
        assert stats["h2d_count"] == 2 * 2      # each step's x and y
        assert stats["d2h_count"] == 1          # the epoch's loss
    finally:
        minidl.set_backend("numpy")
