"""SimpleRNN, LSTM, GRU, Bidirectional and TimeDistributed on every backend: outputs, weight
shapes and names, and the gradients of the input and every weight against numbers printed by
real Keras 3.15.1 (tests/fixtures/keras_recurrent.py wrote tests/fixtures/keras_recurrent.json);
float64 finite-difference checks on numpy; the Keras arguments (stateful, dropout, errors)."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import layers as L
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model

from _numeric import check_layer_run_gradients
from keras_fixture_checks import close_to_keras as close, loss_gradient
from layer_runs import LayerRun


HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras_recurrent.json")) as f:
    KERAS = json.load(f)
X = np.array(KERAS["x"], np.float32)
U = 5

# The minidl twin of each Keras case (same constructor arguments).
LAYERS = {
    "lstm": lambda: L.LSTM(U, return_sequences=True),
    "lstm_last_backwards": lambda: L.LSTM(U, go_backwards=True),
    "lstm_hard_no_bias": lambda: L.LSTM(U, return_sequences=True, use_bias=False,
                                        recurrent_activation="hard_sigmoid"),
    "gru": lambda: L.GRU(U, return_sequences=True),
    "gru_last_backwards": lambda: L.GRU(U, go_backwards=True),
    "simple_rnn": lambda: L.SimpleRNN(U, return_sequences=True),
    "simple_rnn_relu_last": lambda: L.SimpleRNN(U, activation="relu"),
    "bidirectional_lstm_concat": lambda: L.Bidirectional(L.LSTM(U, return_sequences=True)),
    "bidirectional_gru_sum": lambda: L.Bidirectional(L.GRU(U), merge_mode="sum"),
    "bidirectional_rnn_mul": lambda: L.Bidirectional(L.SimpleRNN(U, return_sequences=True),
                                                     merge_mode="mul"),
    "bidirectional_lstm_ave": lambda: L.Bidirectional(L.LSTM(U), merge_mode="ave"),
    "time_distributed_dense": lambda: L.TimeDistributed(L.Dense(U, activation="tanh")),
}



def attached(layer, backend, shape):
    layer.build_once(shape)
    layer.attach(backend)
    return layer



@pytest.mark.parametrize("case", sorted(LAYERS))
def test_layer_matches_keras(backend, case):
    ref = KERAS["cases"][case]
    layer = attached(LAYERS[case](), backend, X.shape[1:])
    assert [w.shape for w in layer.weights] == [tuple(s) for s in ref["shapes"]]
    # Keras's paths end in the same names: "lstm/lstm_cell/kernel" -> kernel, Bidirectional's
    # "bidirectional/forward_lstm_5/lstm_cell/kernel" -> forward_<layer>/kernel
    tails = [w.name.split("/")[-1] for w in layer.weights]
    assert tails == [name.split("/")[-1] for name in ref["names"]]
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    run = LayerRun(layer)
    y = backend.to_numpy(run.forward(backend.from_numpy(X), True))
    close(y, ref["outputs"][0], "output")
    dx = run.backward(backend.from_numpy(loss_gradient(y)))
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


def _model_case(backend, case, make, state_inputs):
    """A functional model of the layer (with initial-state inputs): outputs and weight
    gradients against Keras; returns the layer's call context after backward."""
    ref = KERAS["cases"][case]
    steps, features = X.shape[1:]
    x_in = L.Input((steps, features))
    states = [L.Input((U,)) for _ in state_inputs]
    layer = make()
    outputs = layer(x_in, initial_state=states) if states else layer(x_in)
    model = Model([x_in] + states, outputs if isinstance(outputs, list) else [outputs])
    graph = model.graph
    graph.attach(backend)
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    feeds = [X] + [np.array(KERAS[name], np.float32) for name in state_inputs]
    ys = graph.forward([backend.from_numpy(a) for a in feeds], True)
    ys = [backend.to_numpy(y) for y in ys]
    assert len(ys) == len(ref["outputs"])
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    graph.backward([backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)])
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")
    return next(step.call for step in graph._steps if step.layer is layer)


@pytest.mark.parametrize("case, make", [
    ("lstm_state", lambda: L.LSTM(U, return_state=True)),
    ("gru_state_sequences", lambda: L.GRU(U, return_state=True, return_sequences=True))])
def test_return_state_matches_keras(backend, case, make):
    _model_case(backend, case, make, ())


@pytest.mark.parametrize("case, make, states", [
    ("lstm_initial_state", lambda: L.LSTM(U, return_sequences=True), ("h0", "c0")),
    ("gru_initial_state", lambda: L.GRU(U), ("h0",))])
def test_initial_state_matches_keras(backend, case, make, states):
    call = _model_case(backend, case, make, states)
    ref = KERAS["cases"][case]
    n = X.shape[0]
    for name, expected in zip(("dh0", "dc0"), ref["dstates"]):
        close(backend.to_numpy(call.buffer(name, (n, U))), expected, f"gradient of {name}")


with open(os.path.join(HERE, "fixtures", "keras_return_state.json")) as f:
    RETURN_STATES = json.load(f)["cases"]


@pytest.mark.parametrize("case, make", [
    ("bidirectional_lstm_state", lambda: L.Bidirectional(L.LSTM(U, return_state=True))),
    ("bidirectional_gru_state_sequences_sum", lambda: L.Bidirectional(
        L.GRU(U, return_state=True, return_sequences=True), merge_mode="sum")),
    ("stacked_lstm_gru_state_backwards", lambda: L.RNN(
        [L.LSTMCell(U), L.GRUCell(3)], return_state=True, go_backwards=True)),
    ("stacked_gru_rnn_state_sequences", lambda: L.RNN(
        [L.GRUCell(3), L.SimpleRNNCell(U)], return_state=True, return_sequences=True))])
def test_wrapped_return_state_matches_keras(backend, case, make):
    """Bidirectional's [merged output, forward states, backward states] and stacked cells'
    [output, each cell's states] as Keras, and every gradient (each output weighs in the
    loss, tests/fixtures/keras_return_state.py)."""
    ref = RETURN_STATES[case]
    layer = attached(make(), backend, X.shape[1:])
    assert [w.name.split("/")[-1] for w in layer.weights] == [n.split("/")[-1] for n in ref["names"]]
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    run = LayerRun(layer)
    ys = [backend.to_numpy(y) for y in run.forward(backend.from_numpy(X), True)]
    assert len(ys) == len(ref["outputs"])
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    dx = run.backward([backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)])
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")
    outputs = make()(L.Input(X.shape[1:]))
    if case.startswith("stacked"):   # Keras's structure: an LSTMCell's [h, c], another's h
        cells = [sub.state_count for sub in layer._subs]
        assert [len(t) if isinstance(t, list) else 0 for t in outputs] == [
            0] + [count if count > 1 else 0 for count in cells]
        outputs = [outputs[0]] + [t for item in outputs[1:]
                                  for t in (item if isinstance(item, list) else [item])]
    assert [t.shape[1:] for t in outputs] == [np.shape(o)[1:] for o in ref["outputs"]]


def test_eager_call_with_return_state():
    minidl.set_backend("numpy")
    ref = KERAS["cases"]["lstm_state"]
    layer = L.LSTM(U, return_state=True)
    layer.build((None,) + X.shape[1:])
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    out, h, c = layer(X)
    for k, y in enumerate((out, h, c)):
        close(y, ref["outputs"][k], f"output {k}")


# ------------------------------------------------------------ float64 gradient checks
@pytest.mark.parametrize("make", [
    lambda: L.LSTM(3, return_sequences=True, go_backwards=True),
    lambda: L.GRU(3, return_sequences=True),
    lambda: L.SimpleRNN(3),
    lambda: L.LSTM(3, activation="relu", recurrent_activation="hard_sigmoid"),
    lambda: L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="mul"),
], ids=["lstm", "gru", "simple_rnn", "lstm_relu_hard", "bidirectional_gru"])
def test_gradients_float64(make):
    b = NumpyBackend("float64")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4))
    layer = attached(make(), b, x.shape[1:])
    weights = [rng.standard_normal(w.shape) * 0.5 for w in layer.weights]
    layer.set_weights(weights)
    run = LayerRun(layer)
    check_layer_run_gradients(run, x, rng)


# ------------------------------------------------------------ Keras arguments
def test_defaults_and_config_as_keras():
    lstm = L.LSTM(4)
    config = lstm.get_config()
    for key, value in {"units": 4, "activation": "tanh", "recurrent_activation": "sigmoid",
                       "use_bias": True, "unit_forget_bias": True, "return_sequences": False,
                       "return_state": False, "go_backwards": False, "stateful": False,
                       "unroll": False, "dropout": 0.0, "recurrent_dropout": 0.0,
                       "recurrent_initializer": "orthogonal"}.items():
        assert config[key] == value, key
    assert L.GRU(4).get_config()["reset_after"] is True
    assert type(L.LSTM.from_config(config)) is L.LSTM


def test_unit_forget_bias_and_orthogonal_recurrent_kernel():
    minidl.set_backend("numpy")
    layer = L.LSTM(4)
    layer.build((None, 3, 2))
    kernel, recurrent, bias = layer.get_weights()
    np.testing.assert_array_equal(bias, np.r_[np.zeros(4), np.ones(4), np.zeros(8)])
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(4), atol=1e-5)


def test_stateful_carries_states_until_reset(backend):
    ref = KERAS["cases"]["lstm"]
    layer = attached(L.LSTM(U, return_sequences=True, stateful=True), backend, X.shape[1:])
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    whole = np.concatenate([X, X], axis=1)
    plain = attached(L.LSTM(U, return_sequences=True), backend, whole.shape[1:])
    plain.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    expected = backend.to_numpy(LayerRun(plain).forward(backend.from_numpy(whole), False))
    run = LayerRun(layer)
    first = backend.to_numpy(run.forward(backend.from_numpy(X), False))
    second = backend.to_numpy(run.forward(backend.from_numpy(X), False))
    np.testing.assert_allclose(np.concatenate([first, second], axis=1), expected, rtol=1e-5,
                               atol=1e-6)
    layer.reset_states()
    again = backend.to_numpy(run.forward(backend.from_numpy(X), False))
    np.testing.assert_allclose(again, first, rtol=1e-6, atol=1e-7)


def test_dropout_in_training_only(backend):
    layer = attached(L.GRU(U, dropout=0.5, return_sequences=True), backend, X.shape[1:])
    x = backend.from_numpy(X)
    run = LayerRun(layer)
    inference = backend.to_numpy(run.forward(x, False))
    layer.step_seed = 11
    trained = backend.to_numpy(run.forward(x, True))
    assert not np.allclose(trained, inference)
    # the dropped inputs: the same mask at every step, scaled by 1 / (1 - rate)
    mask = backend.to_numpy(run.call.dropout_mask)
    assert set(np.unique(mask)) <= {0.0, 2.0}
    dx = backend.to_numpy(run.backward(backend.from_numpy(np.ones_like(trained))))
    assert np.all(dx[mask[:, None, :].repeat(X.shape[1], 1) == 0] == 0)


def test_model_fits_a_sequence_task(active_backend):
    minidl.set_seed(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6, 3)).astype(np.float32)
    y = (x[:, :, 0].sum(axis=1) > 0).astype(np.float32)[:, None]
    model = minidl.Sequential([L.Input((6, 3)), L.LSTM(8, return_sequences=True), L.GRU(8),
                               L.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=25, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.85


@pytest.mark.parametrize("make, message", [
    (lambda: L.LSTM(0), "units"),
    (lambda: L.LSTM(3, activation="softmax"), "activation"),
    (lambda: L.LSTM(3, use_cudnn="yes"), "use_cudnn"),
    (lambda: L.GRU(3, dropout=1.0), "dropout"),
    (lambda: L.SimpleRNN(3, recurrent_dropout=1.0), "recurrent_dropout"),
    (lambda: L.Bidirectional(L.LSTM(3), merge_mode="max"), "merge_mode"),
    (lambda: L.Bidirectional(L.Dense(3)), "recurrent"),
])
def test_bad_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_input_rank_names_the_layer():
    with pytest.raises(ValueError, match=r"LSTM 'my_lstm'.*rank 3"):
        L.LSTM(3, name="my_lstm")(L.Input((4,)))


# ------------------------------------------------------------ cells and RNN(cell)
with open(os.path.join(HERE, "fixtures", "keras_rnn_cells.json")) as f:
    CELLS = json.load(f)


def test_lstm_cell_step_matches_keras(active_backend):
    ref = CELLS["lstm_cell"]
    cell = L.LSTMCell(4)
    assert cell.state_size == [4, 4]
    x, h, c = (np.array(ref[k], np.float32) for k in ("x", "h", "c"))
    cell(x, [h, c])   # builds the cell's weights, as Keras's first call
    cell.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    out, (h_new, c_new) = cell(x, [h, c])
    close(out, ref["out"], "h")
    close(h_new, ref["out"], "h state")
    close(c_new, ref["c_new"], "c state")


def test_rnn_of_a_cell_matches_keras_and_shares_its_weights(active_backend):
    ref = CELLS["rnn_gru_cell"]
    cell = L.GRUCell(4)
    rnn = L.RNN(cell, return_sequences=True)
    x = np.array(ref["x"], np.float32)
    rnn.build((None,) + x.shape[1:])
    rnn.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    assert [w.name for w in rnn.weights] == [n.split("/")[-1] for n in ref["names"]]
    close(rnn(x), ref["y"], "outputs")
    assert cell.weights == rnn.weights
    with pytest.raises(ValueError, match="already runs in an RNN"):
        L.RNN(cell)
    with pytest.raises(TypeError, match="return_sequences is an argument of RNN"):
        L.LSTMCell(3, return_sequences=True)


# ------------------------------------------------------------ the C gate kernels' twins
def test_vector_gate_rows_match_the_reference_twin(isa):
    """The AVX2 / AVX-512 rows (tanh with sigmoid) against the plain C reference rows that the
    generic ISA runs, on odd widths (vector tails) and a threaded batch."""
    from minidl.backends.cpu import create
    from conftest import isa_selected
    cpu = create()
    rng = np.random.default_rng(9)
    for n, u in ((3, 13), (130, 700)):
        gates = (rng.standard_normal((n, 4 * u)) * 3).astype(np.float32)
        c_prev, dh, dc = (rng.standard_normal((n, u)).astype(np.float32) for _ in range(3))
        rec = rng.standard_normal((n, 3 * u)).astype(np.float32)

        def run():
            g, c, h = gates.copy(), np.empty((n, u), np.float32), np.empty((n, u), np.float32)
            cpu.lstm_gates_forward(h, c, g, c_prev, "tanh", "sigmoid")
            dg, dcp = np.empty_like(g), np.empty_like(c)
            cpu.lstm_gates_backward(dg, dcp, dh, dc, g, c, c_prev, "tanh", "sigmoid")
            g3, h3 = gates[:, :3 * u].copy(), np.empty((n, u), np.float32)
            cpu.gru_gates_forward(h3, g3, rec, c_prev, "tanh", "sigmoid")
            dg3, dq3, dhp = np.empty_like(g3), np.empty_like(g3), np.empty_like(h3)
            cpu.gru_gates_backward(dg3, dq3, dhp, dh, g3, rec, c_prev, "tanh", "sigmoid")
            return [g, c, h, dg, dcp, g3, h3, dg3, dq3, dhp]

        fast = run()
        with isa_selected("generic"):
            reference = run()
        for a, b in zip(fast, reference):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)


def test_save_and_load_round_trip(tmp_path):
    minidl.set_backend("numpy")
    x_in = L.Input((6, 3))
    y = L.Bidirectional(L.LSTM(4, return_sequences=True))(x_in)
    y = L.TimeDistributed(L.Dense(2))(y)
    y = L.Dense(1)(L.GRU(3, go_backwards=True)(y))
    model = Model(x_in, y)
    # Keras's parameter counts: 2 * 4 * (3 + 4 + 1) * 4, 4 * 2 + 2, 3 * 3 * (2 + 3) + 2 * 9, 4
    assert [layer.count_params() for layer in model.layers[1:]] == [256, 18, 63, 4]
    x = np.random.default_rng(0).standard_normal((5, 6, 3)).astype(np.float32)
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = minidl.saving.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_wrapped_dropout_draws_new_masks_every_step():
    minidl.set_backend("numpy")
    layer = L.Bidirectional(L.GRU(U, dropout=0.5))
    model = minidl.Sequential([L.Input(X.shape[1:]), layer])
    model.compile(optimizer="sgd", loss="mse")
    masks = []
    for _ in range(2):
        model.train_on_batch(X, np.zeros((X.shape[0], 2 * U), np.float32))
        call = next(step.call for step in model.graph._steps if step.layer is layer)
        masks.append([layer.backend.to_numpy(call.children[key].dropout_mask).copy()
                      for key in ("forward", "backward")])
    assert not np.array_equal(masks[0][0], masks[0][1])   # forward and backward layers differ
    assert not np.array_equal(masks[0][0], masks[1][0])   # and every step draws anew


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "SimpleRNN"])
def test_training_step_allocates_nothing_and_memory_is_linear_in_time(kind):
    """After the first step a training step allocates no tensor (only a few Python objects),
    and the layer's buffers grow linearly with the sequence length."""
    import tracemalloc
    from minidl.backends.cpu import create
    b = create()
    totals = {}
    for steps in (10, 40):
        layer = attached(getattr(L, kind)(32, return_sequences=True), b, (steps, 8))
        x = np.random.default_rng(0).standard_normal((16, steps, 8)).astype(np.float32)
        x = b.from_numpy(x)
        dout = b.from_numpy(np.ones((16, steps, 32), np.float32))
        run = LayerRun(layer)
        run.forward(x, True)
        run.backward(dout)
        tracemalloc.start()
        run.forward(x, True)
        run.backward(dout)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 16384, f"{kind} over {steps} steps allocated {peak} bytes in a training step"
        totals[steps] = sum(slot[0].nbytes for slot in run.call.buffers._slots.values())
    assert 3.0 < totals[40] / totals[10] < 4.2


def test_model_returning_states_saves_and_loads(tmp_path):
    minidl.set_backend("numpy")
    x_in = L.Input((6, 3))
    out, h, c = L.LSTM(4, return_state=True)(x_in)
    model = Model(x_in, [out, L.Dense(1)(c)])
    x = np.random.default_rng(1).standard_normal((3, 6, 3)).astype(np.float32)
    path = str(tmp_path / "states.keras")
    model.save(path)
    loaded = minidl.saving.load_model(path)
    for a, b in zip(model.predict(x, verbose=0), loaded.predict(x, verbose=0)):
        np.testing.assert_array_equal(a, b)


def test_stacked_cells_match_keras(backend):
    ref = CELLS["stacked"]
    x = np.array(ref["x"], np.float32)
    layer = L.RNN([L.LSTMCell(4), L.GRUCell(3)], return_sequences=True, go_backwards=True)
    attached(layer, backend, x.shape[1:])
    assert [w.shape for w in layer.weights] == [tuple(np.shape(w)) for w in ref["weights"]]
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    run = LayerRun(layer)
    y = backend.to_numpy(run.forward(backend.from_numpy(x), True))
    close(y, ref["y"], "outputs")
    dx = run.backward(backend.from_numpy(loss_gradient(y)))
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


def test_stacked_cells_step_and_config():
    minidl.set_backend("numpy")
    cells = L.StackedRNNCells([L.SimpleRNNCell(3), L.LSTMCell(2)])
    assert cells.state_size == [3, 2, 2]
    x = np.ones((2, 4), np.float32)
    out, states = cells(x, [np.zeros((2, 3), np.float32)] + [np.zeros((2, 2), np.float32)] * 2)
    assert out.shape == (2, 2) and [s.shape for s in states] == [(2, 3), (2, 2), (2, 2)]
    layer = L.RNN(cells)
    clone = type(layer).from_config(layer.get_config())
    assert [type(s).__name__ for s in clone._subs] == ["SimpleRNN", "LSTM"]


@pytest.mark.parametrize("wrap", [False, True])
def test_a_masked_input_skips_the_padding(wrap):
    """Keras skips masked steps: a model with Embedding(mask_zero=True) gives a padded
    sequence the output of the sequence without its padding (Bidirectional's backward
    direction meets the padding first and skips it too)."""
    import minidl
    from minidl import layers
    from minidl.models import Sequential
    minidl.set_backend("numpy")
    rnn = layers.Bidirectional(layers.LSTM(3)) if wrap else layers.LSTM(3)
    model = Sequential([layers.Input((None,), dtype="int32"),
                        layers.Embedding(10, 4, mask_zero=True), rnn])
    padded = model.predict(np.array([[1, 2, 0, 0, 0]]), verbose=0)
    short = model.predict(np.array([[1, 2]]), verbose=0)
    np.testing.assert_allclose(padded, short, rtol=1e-5, atol=1e-6)
