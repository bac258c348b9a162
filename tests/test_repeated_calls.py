"""One layer called many times within one call (issue 20): a loop in a custom layer's call, a
recurrent-style cell applied 20 times in a subclassed model, trains to the same weights as the
functional graph that calls the same layer 20 times as shared nodes, on every backend.

Each call runs on a context of its own (minidl/layers/calls.py) and the calls' weight
gradients add up, so nothing in these models is special-cased.
"""

import numpy as np
import pytest

import minidl
from minidl import layers, ops
from minidl.models import Model

STEPS = 20
FEATURES = 6


@pytest.fixture(params=[b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()])
def active_backend(request):
    backend = minidl.set_backend(request.param)
    yield backend
    minidl.set_backend("numpy")


class Unrolled(layers.Layer):
    """h <- tanh(h @ W + b) + x, STEPS times, with one Dense: a cell in a Python loop."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cell = layers.Dense(FEATURES, activation="tanh", name="cell")

    def call(self, x):
        h = x
        for _ in range(STEPS):
            h = self.cell(h) + x
        return h


class UnrolledModel(Model):
    """The same loop in a subclassed model, the readout outside the loop."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cell = layers.Dense(FEATURES, activation="tanh", name="cell")
        self.readout = layers.Dense(1, name="readout")

    def call(self, x):
        h = x
        for _ in range(STEPS):
            h = ops.add(self.cell(h), x)
        return self.readout(h)


def functional():
    x = minidl.Input((FEATURES,))
    cell = layers.Dense(FEATURES, activation="tanh", name="cell")
    h = x
    for _ in range(STEPS):
        h = layers.Add()([cell(h), x])
    return minidl.Model(x, layers.Dense(1, name="readout")(h))


def in_custom_layer():
    x = minidl.Input((FEATURES,))
    return minidl.Model(x, layers.Dense(1, name="readout")(Unrolled()(x)))


def data():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, FEATURES)).astype(np.float32) * 0.5
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
    return x, y


def trained(model, initial):
    x, y = data()
    if isinstance(model, UnrolledModel):   # a subclassed model makes its weights at build
        model.build((None, FEATURES))
    model.set_weights(initial)
    model.compile(optimizer=minidl.optimizers.SGD(0.05), loss="mse")
    model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return model.get_weights()


@pytest.mark.parametrize("make", [in_custom_layer, UnrolledModel], ids=["custom_layer", "subclassed"])
def test_loop_of_one_layer_trains_as_the_shared_graph(active_backend, make):
    reference = functional()
    rng = np.random.default_rng(0)
    initial = [rng.normal(scale=0.3, size=w.shape).astype(np.float32)
               for w in reference.get_weights()]
    expected = trained(reference, initial)
    got = trained(make(), initial)
    assert [w.shape for w in got] == [w.shape for w in expected]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=2e-5)
    # the weights moved: the test compares training, not two untouched copies
    assert max(np.abs(e - i).max() for e, i in zip(expected, initial)) > 1e-3


def test_loop_gradient_is_the_sum_over_calls(active_backend):
    """The cell's kernel gradient after one loop equals the finite-difference slope."""
    model = in_custom_layer()
    x, y = data()
    rng = np.random.default_rng(1)
    model.set_weights([rng.normal(scale=0.3, size=w.shape).astype(np.float32)
                       for w in model.get_weights()])
    model.compile(optimizer="sgd", loss="mse")
    with minidl.GradientTape() as tape:
        loss = ops.mean(ops.square(model(ops.convert_to_tensor(x[:8]), training=True) - y[:8]))
    kernel = next(w for w in model.trainable_weights if w.shape == (FEATURES, FEATURES))
    grad = ops.convert_to_numpy(tape.gradient(loss, [kernel])[0])
    base = kernel.numpy().copy()

    def loss_at(k):
        kernel.assign(k)
        return float(np.mean((np.asarray(model(x[:8])) - y[:8]) ** 2))

    eps = 1e-2
    for idx in [(0, 0), (2, 3), (5, 1)]:
        plus, minus = base.copy(), base.copy()
        plus[idx] += eps
        minus[idx] -= eps
        slope = (loss_at(plus) - loss_at(minus)) / (2 * eps)
        assert abs(slope - grad[idx]) < 2e-2 * max(1.0, abs(slope)), (idx, slope, grad[idx])
    kernel.assign(base)
