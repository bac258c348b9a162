"""The sequence and attention layers as calls with contexts of their own (layers/calls.py):
a recurrent layer, a wrapper (its inner layers on child contexts), a stacked RNN or an
attention layer shared by two nodes of a graph gives each node the outputs of a separate run
and weight gradients that are the sum of the two runs', on every backend; return_state's
outputs are one node of several outputs whose unused outputs get zero gradients."""

import numpy as np
import pytest

from minidl import layers as L
from minidl.models import Model

from layer_runs import LayerRun

# name -> (layer factory, the sample shapes of one call's inputs)
SHARED = {
    "lstm": (lambda: L.LSTM(3, return_sequences=True, go_backwards=True), [(5, 2)]),
    "gru_initial_state": (lambda: L.GRU(3), [(5, 2), (3,)]),
    "bidirectional_gru": (lambda: L.Bidirectional(L.GRU(3, return_sequences=True)), [(5, 2)]),
    "bidirectional_lstm_mul": (lambda: L.Bidirectional(L.LSTM(3), merge_mode="mul"), [(5, 2)]),
    "time_distributed_dense": (lambda: L.TimeDistributed(L.Dense(3, activation="tanh")),
                               [(5, 2)]),
    "stacked_cells": (lambda: L.RNN([L.LSTMCell(3), L.GRUCell(2)], return_sequences=True),
                      [(5, 2)]),
    "multi_head_attention": (lambda: L.MultiHeadAttention(num_heads=2, key_dim=3),
                             [(4, 5), (6, 3)]),
    "attention_scaled": (lambda: L.Attention(use_scale=True), [(4, 3), (6, 3)]),
}


def _apply(layer, tensors):
    if isinstance(layer, L.MultiHeadAttention):
        return layer(tensors[0], tensors[1])
    if isinstance(layer, L.Attention):
        return layer(tensors)
    if len(tensors) > 1:
        return layer(tensors[0], initial_state=tensors[1:])
    return layer(tensors[0])


@pytest.mark.parametrize("case", sorted(SHARED))
def test_shared_layer_sums_the_gradients_of_its_calls(backend, case):
    make, shapes = SHARED[case]
    rng = np.random.default_rng(5)
    layer = make()
    first, second = [L.Input(s) for s in shapes], [L.Input(s) for s in shapes]
    model = Model(first + second, [_apply(layer, first), _apply(layer, second)])
    graph = model.graph
    graph.attach(backend)
    layer.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                       for w in layer.weights])
    feeds = [[rng.standard_normal((2,) + s).astype(np.float32) for s in shapes] for _ in range(2)]
    ys = [backend.to_numpy(y) for y in graph.forward(
        [backend.from_numpy(a) for a in feeds[0] + feeds[1]], True)]
    douts = [rng.standard_normal(y.shape).astype(np.float32) for y in ys]
    graph.backward([backend.from_numpy(d) for d in douts])
    shared_grads = [backend.to_numpy(w.grad).copy() for w in layer.trainable_weights]

    expected = [np.zeros(w.shape, np.float32) for w in layer.trainable_weights]
    for feed, y, dout in zip(feeds, ys, douts):
        run = LayerRun(layer, input_grad_needed=False)
        xs = [backend.from_numpy(a) for a in feed]
        alone = backend.to_numpy(run.forward(xs if layer.multiple_inputs else xs[0], True))
        np.testing.assert_allclose(y, alone, rtol=1e-5, atol=1e-6, err_msg="output")
        run.backward(backend.from_numpy(dout))
        for total, w in zip(expected, layer.trainable_weights):
            total += backend.to_numpy(w.grad)
    assert len(shared_grads) == len(expected) > 0
    for got, want, w in zip(shared_grads, expected, layer.trainable_weights):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=w.name)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "SimpleRNN"])
def test_return_state_is_one_node_of_several_outputs(backend, kind):
    """Only the final h of a return_state call used: the node gets zeros for its other
    outputs, and its gradients are those of the same layer returning its last output."""
    rng = np.random.default_rng(2)
    x_in = L.Input((5, 2))
    layer = getattr(L, kind)(3, return_state=True, return_sequences=True)
    outputs = layer(x_in)
    assert len(outputs) == 2 + (kind == "LSTM")
    assert [t.shape for t in outputs] == [(None, 5, 3)] + [(None, 3)] * (len(outputs) - 1)
    assert all(t.node is outputs[0].node for t in outputs)
    model = Model(x_in, outputs[1])
    graph = model.graph
    graph.attach(backend)
    weights = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in layer.weights]
    layer.set_weights(weights)
    x = rng.standard_normal((4, 5, 2)).astype(np.float32)
    dh = rng.standard_normal((4, 3)).astype(np.float32)
    (h,) = graph.forward([backend.from_numpy(x)], True)
    h = backend.to_numpy(h)
    graph.backward([backend.from_numpy(dh)])
    grads = [backend.to_numpy(w.grad).copy() for w in layer.weights]

    plain = getattr(L, kind)(3)
    plain.build_once((5, 2))
    plain.attach(backend)
    plain.set_weights(weights)
    run = LayerRun(plain, input_grad_needed=False)
    np.testing.assert_allclose(h, backend.to_numpy(run.forward(backend.from_numpy(x), True)),
                               rtol=1e-6, atol=1e-6)
    run.backward(backend.from_numpy(dh))
    for got, w in zip(grads, plain.weights):
        np.testing.assert_allclose(got, backend.to_numpy(w.grad), rtol=1e-5, atol=1e-6,
                                   err_msg=w.name)


def test_return_state_model_summary_and_nesting(active_backend):
    x_in = L.Input((6, 3))
    out, h, c = L.LSTM(4, return_state=True)(x_in)
    inner = Model(x_in, [out, c])
    lines = []
    inner.summary(print_fn=lines.append)
    assert any("[(None, 4), (None, 4), (None, 4)]" in line for line in lines)
    outer_in = L.Input((6, 3))
    states = inner(outer_in)
    outer = Model(outer_in, L.Dense(1)(L.Concatenate()(states)))
    x = np.random.default_rng(0).standard_normal((3, 6, 3)).astype(np.float32)
    expected = np.concatenate(inner.predict(x, verbose=0), axis=1)
    dense = outer.layers[-1]
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(outer.predict(x, verbose=0), expected @ kernel + bias,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["bidirectional_gru", "stacked_cells", "multi_head_attention"])
def test_layer_called_twice_on_a_tape_sums_its_calls(active_backend, case):
    """The same layer called twice inside a GradientTape (as in a custom layer's call or
    train_step): each call on its own context, the weight gradients of both added up."""
    import minidl
    from minidl import ops
    make, shapes = SHARED[case]
    rng = np.random.default_rng(8)
    layer = make()
    feeds = [[rng.standard_normal((2,) + s).astype(np.float32) for s in shapes] for _ in range(2)]
    apply = (lambda xs: layer(xs[0], xs[1])) if len(shapes) > 1 else (lambda xs: layer(xs[0]))
    apply(feeds[0])   # builds and attaches, as a first eager call does
    layer.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                       for w in layer.weights])
    ys = [apply(feed) for feed in feeds]
    douts = [rng.standard_normal(y.shape).astype(np.float32) for y in ys]
    weights = layer.trainable_weights
    with minidl.GradientTape() as tape:
        outs = [apply([ops.convert_to_tensor(a) for a in feed]) for feed in feeds]
        loss = ops.sum(outs[0] * douts[0]) + ops.sum(outs[1] * douts[1])
    grads = [ops.convert_to_numpy(g) for g in tape.gradient(loss, weights)]
    b = layer.backend
    expected = [np.zeros(w.shape, np.float32) for w in weights]
    for feed, dout in zip(feeds, douts):
        run = LayerRun(layer, input_grad_needed=False)
        xs = [b.from_numpy(a) for a in feed]
        run.forward(xs if layer.multiple_inputs else xs[0], True)
        run.backward(b.from_numpy(dout))
        for total, w in zip(expected, weights):
            total += b.to_numpy(w.grad)
    for got, want, w in zip(grads, expected, weights):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=w.name)


def test_wrapper_in_a_custom_layer_trains(active_backend):
    """A wrapper built inside a custom layer's call (its shape probed on zero weights first)."""
    import minidl
    from minidl import ops

    class Twice(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.rnn = L.Bidirectional(L.GRU(3, return_sequences=True))

        def call(self, x):
            return ops.mean(self.rnn(x) + self.rnn(x * 2.0), axis=1)

    minidl.set_seed(3)
    model = minidl.Sequential([L.Input((5, 2)), Twice(), L.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(0).standard_normal((8, 5, 2)).astype(np.float32)
    losses = model.fit(x, np.ones((8, 1), np.float32), epochs=4, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("make, states", [
    (lambda: L.LSTM(3, return_sequences=True, return_state=True, go_backwards=True), 2),
    (lambda: L.GRU(3, return_state=True), 1),
    (lambda: L.Bidirectional(L.LSTM(2, return_state=True, return_sequences=True), merge_mode="ave"),
     0),
    (lambda: L.RNN([L.LSTMCell(2), L.GRUCell(3)], return_state=True, go_backwards=True), 0),
], ids=["lstm_initial_state", "gru_initial_state", "bidirectional_lstm", "stacked_cells"])
def test_return_state_gradients_float64(make, states):
    """Every output of a return_state call weighs in the loss (with initial states as inputs
    where given): dL/dx, dL/d(initial states) and the weights' against central differences."""
    from minidl.backends.numpy_backend import NumpyBackend
    from _numeric import central_differences
    b = NumpyBackend("float64")
    rng = np.random.default_rng(4)
    layer = make()
    x = rng.standard_normal((2, 4, 3))
    given = [rng.standard_normal((2, 3)) for _ in range(states)]
    if states:   # as layer(x, initial_state=[...]) makes it
        layer.multiple_inputs = True
    layer.build_once([(4, 3)] + [(3,)] * states if states else (4, 3))
    layer.attach(b)
    layer.set_weights([rng.standard_normal(w.shape) * 0.5 for w in layer.weights])
    run = LayerRun(layer)
    inputs = [x] + given if states else x
    ys = run.forward(inputs, True)
    douts = [rng.standard_normal(y.shape) for y in ys]
    d = run.backward(douts)
    analytic = [a.copy() for a in (d if states else [d])]
    grads = [w.grad.copy() for w in layer.weights]

    def loss():
        return float(sum(np.sum(y * g) for y, g in zip(run.forward(inputs, True), douts)))
    for a, array in zip(analytic, [x] + given):
        np.testing.assert_allclose(a, central_differences(loss, array), rtol=1e-6, atol=1e-8)
    for g, w in zip(grads, layer.weights):
        np.testing.assert_allclose(g, central_differences(loss, w.value), rtol=1e-6, atol=1e-8,
                                   err_msg=w.name)


@pytest.mark.parametrize("suffix", [".keras", ".minidl"])
def test_states_of_wrappers_save_and_load(tmp_path, suffix):
    """Models reading the states of stacked cells and of a Bidirectional layer (nodes of
    several outputs) load from both file formats and predict the same."""
    import minidl
    minidl.set_backend("numpy")
    x_in = L.Input((6, 3))
    y, (h1, c1), h2 = L.RNN([L.LSTMCell(4), L.GRUCell(3)], return_state=True,
                            return_sequences=True)(x_in)
    z, hf, hb = L.Bidirectional(L.GRU(2, return_state=True))(y)
    model = Model(x_in, [z, L.Dense(1)(L.Concatenate()([c1, h2, hf, hb]))])
    x = np.random.default_rng(1).standard_normal((3, 6, 3)).astype(np.float32)
    path = str(tmp_path / f"states{suffix}")
    model.save(path)
    loaded = minidl.saving.load_model(path)
    for a, b in zip(model.predict(x, verbose=0), loaded.predict(x, verbose=0)):
        np.testing.assert_array_equal(a, b)
