"""Layers of several outputs (issue 20): one node, one symbolic tensor per output, one backward
with a dL/doutput per output (zeros for an output nothing uses), in a functional graph and
inside a custom layer's call (the tape's rule of a call of several outputs), every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops


@pytest.fixture(params=[b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()])
def active_backend(request):
    backend = minidl.set_backend(request.param)
    yield backend
    minidl.set_backend("numpy")


class TwoCopies(layers.Layer):
    """A built-in style layer of two outputs: x and 3 x (its backward adds d0 + 3 d1)."""

    def compute_output_shape(self, input_shape):
        return [input_shape, input_shape]

    def forward(self, call, x, training):
        b = self.backend
        first, second = call.buffer("first", b.shape(x)), call.buffer("second", b.shape(x))
        b.copy(first, x)
        b.axpby(second, 3.0, x, 0.0, x)
        return [first, second]

    def backward(self, call, douts):
        b = self.backend
        dx = call.buffer("dx", b.shape(douts[0]))
        b.axpby(dx, 1.0, douts[0], 3.0, douts[1])
        return dx


class HalfAndSum(layers.Layer):
    """A layer written with call() returning two tensors."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(3, name="inner")

    def call(self, x):
        h = self.dense(x)
        return [h * 0.5, ops.sum(h, axis=-1, keepdims=True)]


def fd_gradient(f, w, eps=1e-2):
    g = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        plus, minus = w.copy(), w.copy()
        plus[idx] += eps
        minus[idx] -= eps
        g[idx] = (f(plus) - f(minus)) / (2 * eps)
    return g


@pytest.mark.parametrize("used", ["both", "first", "second"])
def test_builtin_layer_of_two_outputs_in_a_graph(active_backend, used):
    x = minidl.Input((4,))
    dense = layers.Dense(4, name="d")
    a, b = TwoCopies()(dense(x))
    assert a.shape == b.shape == (None, 4)
    out = {"both": layers.Add()([a, b]), "first": a, "second": b}[used]
    model = minidl.Model(x, out)
    scale = {"both": 4.0, "first": 1.0, "second": 3.0}[used]
    data = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(model.predict(data, verbose=0), scale * (data @ kernel + bias),
                               rtol=1e-5, atol=1e-5)
    model.compile(optimizer=minidl.optimizers.SGD(0.1), loss="mse")
    model.train_on_batch(data, np.zeros((5, 4), np.float32))
    # d mean((s (xK + b))^2) / dK = 2 s^2 x^T (xK + b) / (5 * 4)
    expected = kernel - 0.1 * 2 * scale ** 2 * data.T @ (data @ kernel + bias) / 20
    np.testing.assert_allclose(model.get_weights()[0], expected, rtol=2e-4, atol=2e-5)


def test_builtin_layer_of_two_outputs_inside_a_call(active_backend):
    """The same layer called on Tensors in a custom layer: the tape's rule gets both
    gradients (one of them for an output the call does not use: zeros)."""
    two = TwoCopies()

    class Uses(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(2, name="dd")
            self.two = two

        def call(self, x):
            first, second = self.two(self.dense(x))
            return second * 2.0

    x = minidl.Input((3,))
    model = minidl.Model(x, Uses()(x))
    data = np.random.default_rng(1).normal(size=(6, 3)).astype(np.float32)
    model.compile(optimizer=minidl.optimizers.SGD(0.05), loss="mse")
    kernel, bias = model.get_weights()

    def loss(k):
        return float(np.mean((6.0 * (data @ k + bias)) ** 2))
    expected = kernel - 0.05 * fd_gradient(loss, kernel.astype(np.float64))
    model.train_on_batch(data, np.zeros((6, 2), np.float32))
    np.testing.assert_allclose(model.get_weights()[0], expected, rtol=2e-3, atol=2e-4)


def test_custom_layer_of_two_outputs(active_backend):
    x = minidl.Input((4,))
    half, total = HalfAndSum()(x)
    assert half.shape == (None, 3) and total.shape == (None, 1)
    model = minidl.Model(x, [half, total])
    data = np.random.default_rng(2).normal(size=(8, 4)).astype(np.float32)
    kernel, bias = model.get_weights()
    h = data @ kernel + bias
    got = model.predict(data, verbose=0)
    np.testing.assert_allclose(got[0], h * 0.5, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], h.sum(-1, keepdims=True), rtol=1e-5, atol=1e-5)
    # only the second output trained: the first's gradient is zeros
    only = minidl.Model(x, total)
    only.compile(optimizer=minidl.optimizers.SGD(0.01), loss="mse")
    only.train_on_batch(data, np.zeros((8, 1), np.float32))

    def loss(k):
        return float(np.mean(((data @ k + bias).sum(-1)) ** 2))
    expected = kernel - 0.01 * fd_gradient(loss, kernel.astype(np.float64))
    np.testing.assert_allclose(only.get_weights()[0], expected, rtol=2e-3, atol=2e-4)
