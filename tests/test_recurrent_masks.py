"""Keras masks through SimpleRNN, LSTM, GRU, RNN(cell), stacked cells and Bidirectional, and
GRU(reset_after=False), on every backend: outputs, final states and the gradients of the input,
the initial states and every weight against numbers printed by real Keras 3.15.1
(tests/fixtures/keras_recurrent_masks.py wrote tests/fixtures/keras_recurrent_masks.json);
float64 finite-difference checks on numpy; the mask reaching the layers from Embedding."""

import json
import os

import numpy as np
import pytest

from minidl import layers as L
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model

from _numeric import check_layer_run_gradients
from keras_fixture_checks import close_to_keras as close, loss_gradient, listed
from layer_runs import LayerRun


HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras_recurrent_masks.json")) as f:
    KERAS = json.load(f)
X = np.array(KERAS["x"], np.float32)
MASK = np.array(KERAS["mask"], np.float32)
U = 4

# The minidl twin of each Keras case (same constructor arguments).
LAYERS = {
    "lstm_seq": lambda: L.LSTM(U, return_sequences=True),
    "lstm_last_backwards": lambda: L.LSTM(U, go_backwards=True),
    "lstm_seq_backwards_state": lambda: L.LSTM(U, return_sequences=True, go_backwards=True,
                                               return_state=True),
    "gru_seq": lambda: L.GRU(U, return_sequences=True),
    "gru_last_state": lambda: L.GRU(U, return_state=True),
    "simple_rnn_seq": lambda: L.SimpleRNN(U, return_sequences=True),
    "simple_rnn_last_backwards": lambda: L.SimpleRNN(U, go_backwards=True),
    "rnn_lstm_cell_zero_output": lambda: L.RNN(L.LSTMCell(U), return_sequences=True,
                                               zero_output_for_mask=True),
    "rnn_gru_cell_zero_output_last": lambda: L.RNN(L.GRUCell(U), zero_output_for_mask=True),
    "stacked_backwards_seq": lambda: L.RNN([L.LSTMCell(U), L.GRUCell(3)], return_sequences=True,
                                           go_backwards=True),
    "bidirectional_lstm_concat": lambda: L.Bidirectional(L.LSTM(U, return_sequences=True)),
    "bidirectional_gru_sum_last": lambda: L.Bidirectional(L.GRU(U), merge_mode="sum"),
    "bidirectional_rnn_state_seq": lambda: L.Bidirectional(
        L.SimpleRNN(U, return_sequences=True, return_state=True), merge_mode="ave"),
}





@pytest.mark.parametrize("case", sorted(LAYERS))
def test_masked_layer_matches_keras(backend, case):
    ref = KERAS["cases"][case]
    layer = LAYERS[case]()
    layer.build_once(X.shape[1:])
    layer.attach(backend)
    assert [w.shape for w in layer.weights] == [tuple(s) for s in ref["shapes"]]
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    run = LayerRun(layer, mask=backend.from_numpy(MASK))
    ys = [backend.to_numpy(y) for y in listed(run.forward(backend.from_numpy(X), True))]
    assert len(ys) == len(ref["outputs"])
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    douts = [backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)]
    dx = run.backward(douts if len(douts) > 1 else douts[0])
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


def _model_case(backend, case, make, state_inputs, masked=True):
    """The layer built by a functional call with initial-state inputs, run on its model
    call's context with the mask (for x; none for the states): outputs, and the gradients of
    x, the initial states and the weights."""
    ref = KERAS["cases"][case]
    x_in = L.Input(X.shape[1:])
    states = [L.Input((U,)) for _ in state_inputs]
    layer = make()
    outputs = layer(x_in, initial_state=states)
    model = Model([x_in] + states, outputs if isinstance(outputs, list) else [outputs])
    graph = model.graph
    graph.attach(backend)
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    step = next(s for s in graph._steps if s.layer is layer)
    feeds = [X] + [np.array(KERAS[name], np.float32) for name in state_inputs]
    mask = backend.from_numpy(MASK) if masked else None
    run = LayerRun(layer, mask=[mask] + [None] * len(states) if masked else None)
    run.call = step.call
    ys = [backend.to_numpy(y) for y in listed(
        run.forward([backend.from_numpy(a) for a in feeds], True))]
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    douts = [backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)]
    dxs = run.backward(douts if len(douts) > 1 else douts[0])
    close(backend.to_numpy(dxs[0]), ref["dx"], "dx")
    for k, expected in enumerate(ref["dstates"]):
        close(backend.to_numpy(dxs[1 + k]), expected, f"gradient of initial state {k}")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


@pytest.mark.parametrize("case, make, states", [
    ("lstm_initial_state_seq", lambda: L.LSTM(U, return_sequences=True, return_state=True),
     ("h0", "c0")),
    ("gru_initial_state_last", lambda: L.GRU(U), ("h0",))])
def test_masked_initial_state_matches_keras(backend, case, make, states):
    """A first step skipped with a nonzero initial state: Keras outputs 0 there but keeps
    the state, and the state's gradient flows past the skipped steps."""
    _model_case(backend, case, make, states)


def test_mask_from_embedding_reaches_the_layers(backend):
    """Embedding(mask_zero=True) -> LSTM(return_sequences) -> GRU: each layer gets the mask of
    the padded steps (the same numbers as the layers run with that mask by hand), the GRU's
    output has no mask and the LSTM's passes it on."""
    rng = np.random.default_rng(0)
    tokens = np.array([[3, 1, 0, 2, 0], [0, 4, 2, 1, 5]], np.float32)
    inp = L.Input((5,))
    emb = L.Embedding(6, 3, mask_zero=True)
    lstm = L.LSTM(U, return_sequences=True)
    gru = L.GRU(2)
    model = Model(inp, gru(lstm(emb(inp))))
    graph = model.graph
    graph.attach(backend)
    for layer in (emb, lstm, gru):
        layer.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                           for w in layer.weights])
    y = backend.to_numpy(graph.forward([backend.from_numpy(tokens)], False)[0])
    assert graph.masked_outputs() == [False]
    assert lstm.output_has_mask(True) and not gru.output_has_mask(True)
    mask = backend.from_numpy((tokens != 0).astype(np.float32))
    embedded = backend.from_numpy(emb.get_weights()[0][tokens.astype(int)])
    h = LayerRun(lstm, mask=mask).forward(embedded, False)
    expected = backend.to_numpy(LayerRun(gru, mask=mask).forward(h, False))
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    unmasked = backend.to_numpy(LayerRun(gru).forward(LayerRun(lstm).forward(embedded, False),
                                                      False))
    assert not np.allclose(y, unmasked, atol=1e-4)


# ------------------------------------------------------------ float64 gradient checks
@pytest.mark.parametrize("make", [
    lambda: L.LSTM(3, return_sequences=True, go_backwards=True),
    lambda: L.LSTM(3, return_state=True),
    lambda: L.GRU(3, return_sequences=True),
    lambda: L.SimpleRNN(3, activation="relu"),
    lambda: L.RNN(L.GRUCell(3), return_sequences=True, zero_output_for_mask=True),
    lambda: L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="mul"),
], ids=["lstm_backwards", "lstm_state", "gru", "simple_rnn_relu", "gru_zero_output",
        "bidirectional_gru"])
def test_masked_gradients_float64(make):
    b = NumpyBackend("float64")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5, 4))
    mask = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 1, 1, 1]], np.float64)
    layer = make()
    layer.build_once(x.shape[1:])
    layer.attach(b)
    layer.set_weights([rng.standard_normal(w.shape) * 0.5 for w in layer.weights])
    run = LayerRun(layer, mask=mask)
    check_layer_run_gradients(run, x, rng)


def test_mask_of_the_wrong_shape_is_refused(backend):
    layer = L.LSTM(U)
    layer.build_once(X.shape[1:])
    layer.attach(backend)
    run = LayerRun(layer, mask=backend.from_numpy(np.ones((2, 3), np.float32)))
    with pytest.raises(ValueError, match=r"lstm.*mask must have shape \(2, 5\)"):
        run.forward(backend.from_numpy(X), False)


# ------------------------------------------------------------ GRU(reset_after=False)
RESET_BEFORE = {
    "gru_reset_before_seq": lambda: L.GRU(U, reset_after=False, return_sequences=True),
    "gru_reset_before_no_bias": lambda: L.GRU(U, reset_after=False, use_bias=False,
                                              return_sequences=True),
    "rnn_gru_cell_reset_before": lambda: L.RNN(L.GRUCell(U, reset_after=False),
                                               return_sequences=True),
}


@pytest.mark.parametrize("case", sorted(RESET_BEFORE))
def test_gru_reset_before_matches_keras(backend, case):
    ref = KERAS["cases"][case]
    layer = RESET_BEFORE[case]()
    layer.build_once(X.shape[1:])
    layer.attach(backend)
    assert [w.shape for w in layer.weights] == [tuple(s) for s in ref["shapes"]]
    assert [w.name.split("/")[-1] for w in layer.weights] == [
        n.split("/")[-1] for n in ref["names"]]
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    run = LayerRun(layer)
    y = backend.to_numpy(run.forward(backend.from_numpy(X), True))
    close(y, ref["outputs"][0], "output")
    dx = run.backward(backend.from_numpy(loss_gradient(y)))
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


def test_gru_reset_before_masked_with_state_matches_keras(backend):
    _model_case(backend, "gru_reset_before_masked_backwards",
                lambda: L.GRU(U, reset_after=False, go_backwards=True, return_state=True),
                ("h0",))


@pytest.mark.parametrize("masked", [False, True])
def test_gru_reset_before_gradients_float64(masked):
    b = NumpyBackend("float64")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 5, 4))
    mask = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 1, 1, 1]], np.float64)
    layer = L.GRU(3, reset_after=False, return_sequences=True, activation="relu",
                  recurrent_activation="hard_sigmoid" if masked else "sigmoid")
    layer.build_once(x.shape[1:])
    layer.attach(b)
    layer.set_weights([rng.standard_normal(w.shape) * 0.5 for w in layer.weights])
    run = LayerRun(layer, mask=mask if masked else None)
    check_layer_run_gradients(run, x, rng)


# ------------------------------------------------------------ recurrent_dropout
RECURRENT_DROPOUT = {
    "lstm_recurrent_dropout_seq": lambda: L.LSTM(U, recurrent_dropout=0.5,
                                                 return_sequences=True),
    "gru_recurrent_dropout_masked": lambda: L.GRU(U, recurrent_dropout=0.25, return_state=True),
    "simple_rnn_recurrent_dropout_seq": lambda: L.SimpleRNN(U, recurrent_dropout=0.5,
                                                            return_sequences=True),
    "lstm_dropout_recurrent_dropout_masked": lambda: L.LSTM(
        U, dropout=0.3, recurrent_dropout=0.5, return_sequences=True),
    "gru_dropout_recurrent_dropout": lambda: L.GRU(U, dropout=0.3, recurrent_dropout=0.25),
    "gru_reset_before_dropouts_masked": lambda: L.GRU(
        U, reset_after=False, dropout=0.2, recurrent_dropout=0.3, return_sequences=True),
}


def _with_recurrent_masks(layer, backend, masks, input_masks=None):
    """The layer with Keras's per-gate masks (the fixture's) instead of drawn ones."""
    def joined(arrays):
        return backend.from_numpy(np.concatenate([np.array(m, np.float32) for m in arrays], 1))
    fixed = joined(masks)
    layer._recurrent_dropout_mask = lambda call, n: fixed
    if input_masks is not None:
        fixed_inputs = joined(input_masks)
        layer._gate_input_dropout_mask = lambda call, n, features: fixed_inputs
    return layer


@pytest.mark.parametrize("case", sorted(RECURRENT_DROPOUT))
def test_recurrent_dropout_matches_keras(backend, case):
    """Training with recurrent_dropout: h_{t-1} times one mask per gate in each gate's
    projection, and with dropout too the inputs times one mask per gate, the same at every
    step (as Keras 3's cells), given Keras's masks."""
    ref = KERAS["cases"][case]
    layer = RECURRENT_DROPOUT[case]()
    layer.build_once(X.shape[1:])
    layer.attach(backend)
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    _with_recurrent_masks(layer, backend, ref["recurrent_masks"], ref["input_masks"])
    run = LayerRun(layer, mask=backend.from_numpy(MASK) if ref["masked"] else None)
    ys = [backend.to_numpy(y) for y in listed(run.forward(backend.from_numpy(X), True))]
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    douts = [backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)]
    dx = run.backward(douts if len(douts) > 1 else douts[0])
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


def test_recurrent_dropout_draws_one_mask_per_gate_and_sequence(backend):
    """The mask is drawn in training only, per gate (N, k u), kept with probability 1 - rate
    and scaled by 1 / (1 - rate); inference runs without it."""
    layer = L.LSTM(64, recurrent_dropout=0.25)
    layer.build_once(X.shape[1:])
    layer.attach(backend)
    run = LayerRun(layer)
    x = backend.from_numpy(np.repeat(X, 32, axis=0))
    run.forward(x, True)
    mask = backend.to_numpy(run.call.recurrent_mask)
    assert mask.shape == (64, 4 * 64)
    assert set(np.unique(mask)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < np.mean(mask == 0) < 0.3
    assert not np.array_equal(mask[:, :64], mask[:, 64:128])   # a mask per gate
    run.forward(x, False)
    assert run.call.recurrent_mask is None


@pytest.mark.parametrize("make", [
    lambda: L.LSTM(3, recurrent_dropout=0.4, return_sequences=True, go_backwards=True),
    lambda: L.GRU(3, recurrent_dropout=0.4, dropout=0.3),
    lambda: L.SimpleRNN(3, recurrent_dropout=0.4, return_sequences=True),
    lambda: L.GRU(3, reset_after=False, recurrent_dropout=0.4, dropout=0.3,
                  return_sequences=True),
], ids=["lstm", "gru_dropout", "simple_rnn", "gru_reset_before"])
def test_recurrent_dropout_gradients_float64(make):
    """Training mode with a masked sequence: the masks are drawn from the call's seed, the
    same on every forward, so finite differences see one function."""
    b = NumpyBackend("float64")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 5, 4))
    mask = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 1, 1, 1]], np.float64)
    layer = make()
    layer.build_once(x.shape[1:])
    layer.attach(b)
    layer.set_weights([rng.standard_normal(w.shape) * 0.5 for w in layer.weights])
    run = LayerRun(layer, mask=mask)
    check_layer_run_gradients(run, x, rng)
    assert np.any(run.call.recurrent_mask == 0)
