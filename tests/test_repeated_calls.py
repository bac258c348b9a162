"""Issue 20's check of one execution model: one layer called many times within one call (a
recurrent-style cell applied 20 times in a Python loop, in a custom layer's call and in a
subclassed model's call) trains to the same weights as the equivalent functional graph (the
layer shared by 20 nodes), on every backend: each call has its own context and the weight
gradients of the calls add up."""

import numpy as np

import minidl
from minidl import layers as L
from minidl.models import Model

STEPS = 20


class Loop(L.Layer):
    """h = cell(h), STEPS times."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cell = L.Dense(4, activation="tanh")

    def call(self, x):
        h = x
        for _ in range(STEPS):
            h = self.cell(h)
        return h


class LoopModel(minidl.Model):
    """The same loop, then a head, as a subclassed model."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cell = L.Dense(4, activation="tanh")
        self.head = L.Dense(1)

    def call(self, x):
        h = x
        for _ in range(STEPS):
            h = self.cell(h)
        return self.head(h)


def trained(model, weights, x, y):
    model.set_weights(weights)
    model.compile(optimizer=minidl.optimizers.SGD(0.1), loss="mse")
    model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    return model.get_weights()


def test_a_cell_called_many_times_trains_as_the_shared_graph(active_backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    inp = L.Input((4,))
    cell, head = L.Dense(4, activation="tanh"), L.Dense(1)
    h = inp
    for _ in range(STEPS):
        h = cell(h)
    graph = Model(inp, head(h))
    weights = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in graph.get_weights()]
    want = trained(graph, weights, x, y)
    custom = minidl.Sequential([L.Input((4,)), Loop(), L.Dense(1)])
    sub = LoopModel()
    sub(x[:2])
    for model in (custom, sub):
        got = trained(model, weights, x, y)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
