"""ConvLSTM1D / ConvLSTM2D / ConvLSTM3D called with initial_state=[h0, c0] and built with
unroll=True, on every backend. Outputs and gradients (input, h0, c0, weights) against numbers
printed by real Keras 3.15.1 (tests/fixtures/keras_conv_lstm_initial_state.py wrote
tests/fixtures/keras_conv_lstm_initial_state.json; its dropout cases recorded Keras's masks,
which are given to minidl's layer instead of its own draw); float64 finite differences on
numpy; an encoder-decoder model (return_state -> initial_state) that trains, saves and loads,
and the one real Keras wrote (tests/fixtures/keras_files/conv_lstm_encoder_decoder.keras)."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import layers as L
from minidl.autodiff import Tensor
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model, load_model

from _numeric import check_layer_run_gradients
from layer_runs import LayerRun
from test_conv_lstm_options import close, listed, loss_gradient, with_keras_masks

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras_conv_lstm_initial_state.json")) as f:
    KERAS = json.load(f)

# The minidl twin of each Keras case (same constructor arguments).
LAYERS = {
    "2d_seq_same_masked": lambda: L.ConvLSTM2D(2, 3, padding="same", return_sequences=True),
    "2d_valid_strides_state_backwards": lambda: L.ConvLSTM2D(2, (2, 3), strides=2,
                                                             return_state=True,
                                                             go_backwards=True),
    "2d_pixels_last": lambda: L.ConvLSTM2D(2, (3, 2), padding="same"),
    "1d_seq_state": lambda: L.ConvLSTM1D(3, 3, padding="same", return_sequences=True,
                                         return_state=True),
    "3d_last_masked": lambda: L.ConvLSTM3D(2, 2, padding="same"),
    "2d_dropouts_seq": lambda: L.ConvLSTM2D(2, 3, padding="same", dropout=0.3,
                                            recurrent_dropout=0.4, return_sequences=True),
    "3d_recurrent_dropout_state": lambda: L.ConvLSTM3D(2, 2, padding="same",
                                                       recurrent_dropout=0.3,
                                                       return_state=True),
}


def with_states(layer, backend, x_shape, state_shape):
    """The layer built for [sequence, h0, c0] (a call with initial_state) on `backend`."""
    layer.accept_node_inputs(3)
    layer.build_once([tuple(x_shape[1:]), tuple(state_shape[1:]), tuple(state_shape[1:])])
    layer.attach(backend)
    return layer


# ------------------------------------------------------------ against Keras
@pytest.mark.parametrize("case", sorted(LAYERS))
def test_initial_state_calls_match_keras(backend, case):
    """The call starts from h0, c0 (a masked first step keeps them); backward gives dL/dh0
    (the recurrent convolution of h0 at the first step) and dL/dc0 beside dL/dx."""
    ref = KERAS["cases"][case]
    x = np.array(ref["x"], np.float32)
    states = [np.array(s, np.float32) for s in ref["states"]]
    layer = with_states(LAYERS[case](), backend, x.shape, states[0].shape)
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    with_keras_masks(layer, backend, ref["dropout_masks"])
    mask = None if ref["mask"] is None else backend.from_numpy(np.array(ref["mask"], np.float32))
    training = bool(ref["dropout_masks"])
    run = LayerRun(layer, mask=mask)
    ys = listed(run.forward([backend.from_numpy(a) for a in [x] + states], training))
    ys = [backend.to_numpy(y) for y in ys]
    assert len(ys) == len(ref["outputs"])
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    douts = [backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)]
    dx, dh0, dc0 = run.backward(douts if len(douts) > 1 else douts[0])
    close(backend.to_numpy(dx), ref["dx"], "dx")
    close(backend.to_numpy(dh0), ref["dstates"][0], "dh0")
    close(backend.to_numpy(dc0), ref["dstates"][1], "dc0")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


# ------------------------------------------------------------ float64 gradient checks
@pytest.mark.parametrize("make, shape, mask", [
    (lambda: L.ConvLSTM2D(2, 3, padding="same", dropout=0.3, recurrent_dropout=0.4,
                          return_sequences=True, go_backwards=True),
     (2, 4, 3, 4, 2), "pixels"),
    (lambda: L.ConvLSTM2D(2, (2, 3), strides=(2, 1), return_state=True), (2, 3, 5, 4, 1),
     "first"),
    (lambda: L.ConvLSTM1D(2, 3, return_sequences=True, zero_output_for_mask=True,
                          recurrent_dropout=0.3), (2, 4, 5, 2), "first"),
    (lambda: L.ConvLSTM3D(2, 2, padding="same", recurrent_dropout=0.3, return_state=True),
     (2, 2, 2, 3, 2, 1), None),
    (lambda: L.ConvLSTM2D(2, 3, padding="same"), (2, 1, 3, 3, 1), None),
], ids=["2d_pixels_dropouts", "2d_strided_state", "1d_zero_output", "3d_dropout", "one_step"])
def test_gradients_float64(make, shape, mask):
    """dL/dx, dL/dh0, dL/dc0 and every weight's gradient against central differences, in
    training (the dropout masks come from the step's seed: one function)."""
    b = NumpyBackend("float64")
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape)
    layer = make()
    out = layer._own_axes(layer._output_image(shape[1:])) + (layer.filters,)
    states = [rng.standard_normal((shape[0],) + out) for _ in range(2)]
    with_states(layer, b, shape, states[0].shape)
    layer.set_weights([rng.standard_normal(w.shape) * 0.4 for w in layer.weights])
    layer.step_seed = 3
    if mask == "pixels":
        m = (rng.random(shape[:-1]) > 0.3).astype(np.float64)
    elif mask == "first":   # the second sample skips its first step: it keeps h0, c0
        m = np.array([[1, 1, 0, 1], [0, 1, 1, 0]], np.float64)[:, :shape[1]]
    else:
        m = None
    run = LayerRun(layer, mask=m)
    check_layer_run_gradients(run, [x] + states, rng)   # dx, dh0, dc0 and the weights


def test_given_states_start_a_stateful_layer_which_keeps_the_final_ones(backend):
    """As Keras: initial_state starts the call instead of the kept states, and the call's
    final states are kept for the next call."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 3, 1)).astype(np.float32)
    h0, c0 = (rng.standard_normal((2, 4, 3, 2)).astype(np.float32) for _ in range(2))
    stateful = with_states(L.ConvLSTM2D(2, 3, padding="same", stateful=True,
                                        return_state=True), backend, x.shape, h0.shape)
    plain = with_states(L.ConvLSTM2D(2, 3, padding="same", return_state=True), backend,
                        x.shape, h0.shape)
    plain.set_weights(stateful.get_weights())
    inputs = [backend.from_numpy(a) for a in (x, h0, c0)]
    kept = LayerRun(stateful)
    for _ in range(2):   # the kept states of the first call do not change the second
        got = [backend.to_numpy(y) for y in kept.forward(inputs, False)]
    expected = [backend.to_numpy(y) for y in LayerRun(plain).forward(inputs, False)]
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-7)
    for state, e in zip(stateful.states, expected[1:]):
        np.testing.assert_allclose(state, e, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------ eager calls
def test_eager_calls_on_arrays_with_a_mask_by_hand():
    """layer(x, initial_state=[h0, c0], mask=m) on arrays: a sample whose steps are all
    masked keeps h0 and c0; zero states give the call without initial_state."""
    minidl.set_backend("numpy")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 2)).astype(np.float32)
    h0, c0 = (rng.standard_normal((2, 5, 3)).astype(np.float32) for _ in range(2))
    layer = L.ConvLSTM1D(3, 3, padding="same", return_state=True)
    mask = np.array([[True, False, True], [False, False, False]])
    _, h, c = layer(x, initial_state=[h0, c0], mask=mask)
    np.testing.assert_array_equal(h[1], h0[1])
    np.testing.assert_array_equal(c[1], c0[1])
    assert not np.allclose(h[0], h0[0])
    plain = L.ConvLSTM1D(3, 3, padding="same", return_state=True)
    plain(x)
    plain.set_weights(layer.get_weights())
    zeros = np.zeros_like(h0)
    for a, e in zip(layer(x, initial_state=(zeros, zeros)), plain(x)):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-7)


def test_inside_a_custom_layer_gradients_reach_the_states():
    """On Tensors inside a layer's call (a recorded call): dL/dh0 and dL/dc0 are those of
    the fused backward."""
    minidl.set_backend("numpy")
    ops = minidl.ops
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 2, 3, 3, 1)).astype(np.float32)
    h0, c0 = (rng.standard_normal((2, 3, 3, 2)).astype(np.float32) for _ in range(2))
    layer = L.ConvLSTM2D(2, 3, padding="same")
    layer(x, initial_state=[h0, c0])
    b = layer.backend
    tensors = [Tensor(b.from_numpy(a), b, requires_grad=True) for a in (x, h0, c0)]
    with minidl.GradientTape() as tape:
        loss = ops.sum(ops.sin(layer(tensors[0], initial_state=tensors[1:])))
    grads = [ops.convert_to_numpy(g) for g in tape.gradient(loss, tensors)]
    run = LayerRun(layer)
    y = run.forward([b.from_numpy(a) for a in (x, h0, c0)], True)
    expected = run.backward(b.from_numpy(np.cos(b.to_numpy(y))))
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, b.to_numpy(e), rtol=1e-5, atol=1e-6)
    assert np.any(grads[1]) and np.any(grads[2])


# ------------------------------------------------------------ models
def _encoder_decoder(unroll=False):
    frames, targets = L.Input((3, 4, 4, 1)), L.Input((2, 4, 4, 1))
    _, h, c = L.ConvLSTM2D(3, 3, padding="same", return_state=True, name="encoder")(frames)
    decoded = L.ConvLSTM2D(3, 3, padding="same", return_sequences=True, unroll=unroll,
                           name="decoder")(targets, initial_state=[h, c])
    return Model([frames, targets], L.Dense(1, name="head")(decoded))


def test_encoder_decoder_trains_saves_and_loads(active_backend, tmp_path):
    """The encoder's return_state outputs are the decoder's initial_state: the gradients
    flow into the encoder (it learns), and .keras / .minidl files keep the graph."""
    rng = np.random.default_rng(0)
    frames = rng.standard_normal((16, 3, 4, 4, 1)).astype(np.float32)
    targets = rng.standard_normal((16, 2, 4, 4, 1)).astype(np.float32)
    # the answer needs the frames: only the encoder's states carry them to the decoder
    y = np.repeat(frames.mean(axis=1, keepdims=True), 2, axis=1)
    minidl.set_seed(1)
    model = _encoder_decoder(unroll=True)
    encoder = model.get_layer("encoder")
    before = [w.copy() for w in encoder.get_weights()]
    model.compile(optimizer=minidl.optimizers.Adam(0.02), loss="mse")
    history = model.fit([frames, targets], y, epochs=15, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0]
    assert all(not np.allclose(a, b) for a, b in zip(encoder.get_weights(), before))
    expected = model.predict([frames, targets], verbose=0)
    for name in ("model.keras", "model.minidl"):
        model.save(str(tmp_path / name))
        loaded = load_model(str(tmp_path / name))
        np.testing.assert_allclose(loaded.predict([frames, targets], verbose=0), expected,
                                   rtol=1e-5, atol=1e-6, err_msg=name)
        decoder = loaded.get_layer("decoder")
        assert decoder.unroll is True and decoder.multiple_inputs
    config = model.get_layer("decoder").get_config()
    assert config["unroll"] is True
    assert L.ConvLSTM2D.from_config(config).get_config() == config


def test_a_model_keras_wrote_loads(active_backend):
    """Keras 3.15.1 saved an encoder-decoder (decoder(targets, initial_state=[h, c]),
    unroll=True) with its predictions: minidl reads the file (the recurrent weights under
    each layer's cell/) and predicts the same."""
    ref = KERAS["encoder_decoder"]
    model = load_model(os.path.join(HERE, "fixtures", "keras_files",
                                    "conv_lstm_encoder_decoder.keras"))
    assert model.get_layer("decoder").unroll is True
    y = model.predict([np.array(a, np.float32) for a in ref["inputs"]], verbose=0)
    np.testing.assert_allclose(y, np.array(ref["outputs"], np.float32), rtol=1e-5, atol=1e-6)


def test_masking_before_the_decoder_keeps_the_given_states(backend):
    """In a model: Masking's mask reaches a layer called with initial_state (the mask of
    its first input); a sample whose steps are all masked returns h0, c0 unchanged."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 3, 3, 1)).astype(np.float32)
    x[1] = 0.0
    h0, c0 = (rng.standard_normal((2, 3, 3, 2)).astype(np.float32) for _ in range(2))
    seq, hi, ci = L.Input((3, 3, 3, 1)), L.Input((3, 3, 2)), L.Input((3, 3, 2))
    outs = L.ConvLSTM2D(2, 3, padding="same", return_state=True)(L.Masking()(seq),
                                                                 initial_state=[hi, ci])
    graph = Model([seq, hi, ci], outs).graph
    graph.attach(backend)
    _, h, c = [backend.to_numpy(y) for y in graph.forward([backend.from_numpy(a)
                                                           for a in (x, h0, c0)], False)]
    np.testing.assert_allclose(h[1], h0[1], rtol=1e-6)
    np.testing.assert_allclose(c[1], c0[1], rtol=1e-6)
    assert not np.allclose(h[0], h0[0])


# ------------------------------------------------------------ unroll
def test_unroll_is_the_same_loop(backend):
    """Keras passes unroll to its RNN (a graph-size option): the numbers are the same."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 4, 3, 2)).astype(np.float32)
    results = []
    for unroll in (False, True):
        layer = L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, unroll=unroll)
        layer.build_once(x.shape[1:])
        layer.attach(backend)
        layer.set_weights([(np.random.default_rng(7).standard_normal(w.shape) * 0.3)
                           .astype(np.float32) for w in layer.weights])
        run = LayerRun(layer)
        y = backend.to_numpy(run.forward(backend.from_numpy(x), True))
        dx = backend.to_numpy(run.backward(backend.from_numpy(loss_gradient(y))))
        results.append([y, dx] + [backend.to_numpy(w.grad) for w in layer.weights])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_unroll_in_configs():
    """As Keras: unroll is in the config (False by default) and takes an unknown number of
    steps (Keras 3.15.1 builds ConvLSTM2D(unroll=True) on Input((None, ...)) too)."""
    assert L.ConvLSTM3D(2, 2).get_config()["unroll"] is False
    layer = L.ConvLSTM1D(2, 3, unroll=True)
    assert L.ConvLSTM1D.from_config(layer.get_config()).unroll is True
    model = Model(inp := L.Input((None, 5, 2)), layer(inp))
    assert model.predict(np.ones((1, 4, 5, 2), np.float32), verbose=0).shape == (1, 3, 2)


# ------------------------------------------------------------ errors
def test_bad_initial_states_are_refused(backend):
    x = np.zeros((2, 3, 5, 4, 2), np.float32)
    good = np.zeros((2, 3, 2, 2), np.float32)   # valid padding: output 3 x 2
    with pytest.raises(ValueError, match=r"'clstm'.*initial_state must be a list of 2 tensors"
                                         r".*got 1"):
        L.ConvLSTM2D(2, 3, name="clstm")(x, initial_state=good)
    with pytest.raises(ValueError, match=r"'clstm'.*initial state c must have shape "
                                         r"\(None, 3, 2, 2\).*inputs \(None, 3, 5, 4, 2\), "
                                         r"got \(None, 3, 2, 3\)"):
        L.ConvLSTM2D(2, 3, name="clstm")(L.Input((3, 5, 4, 2)),
                                         initial_state=[L.Input((3, 2, 2)), L.Input((3, 2, 3))])
    with pytest.raises(ValueError, match=r"'clstm'.*initial state h must have shape "
                                         r"\(None, 3, 2, 2\).*got \(None, 5, 4, 2\)"):
        L.ConvLSTM2D(2, 3, name="clstm")(x, initial_state=[np.zeros((2, 5, 4, 2)), good])
    layer = with_states(L.ConvLSTM2D(2, 3, name="clstm"), backend, x.shape, good.shape)
    with pytest.raises(ValueError, match=r"'clstm'.*initial state h must have shape "
                                         r"\(2, 3, 2, 2\).*got \(1, 3, 2, 2\)"):
        LayerRun(layer).forward([backend.from_numpy(a) for a in (x, good[:1], good)], False)
    with pytest.raises(ValueError, match=r"'clstm' was called with initial_state before"):
        layer(L.Input((3, 5, 4, 2)))
    plain = L.ConvLSTM2D(2, 3, name="plain")
    plain(x)
    with pytest.raises(ValueError, match=r"'plain' was called without initial_state before"):
        plain(x, initial_state=[good, good])


def _keras_file_layout(path):
    """(the weight file's dataset and group paths, each layer's build_config) of a .keras."""
    import io
    import zipfile

    import h5py
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
        names = []
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
            f.visit(names.append)
    return sorted(names), {layer["name"]: layer.get("build_config")
                           for layer in config["config"]["layers"]}


def test_the_file_minidl_writes_has_the_layout_keras_wrote(tmp_path):
    """Read back and written again, the Keras file keeps Keras's layout: the weights under
    each ConvLSTM2D's cell/ and the decoder's build_config by Keras's RNN.build argument
    names (sequences_shape, initial_state_shape), so that Keras reads minidl's file."""
    minidl.set_backend("numpy")
    original = os.path.join(HERE, "fixtures", "keras_files", "conv_lstm_encoder_decoder.keras")
    load_model(original).save(str(tmp_path / "again.keras"))
    names, builds = _keras_file_layout(str(tmp_path / "again.keras"))
    keras_names, keras_builds = _keras_file_layout(original)
    assert "layers/conv_lstm2d_1/cell/vars/1" in names
    assert names == keras_names
    assert builds["decoder"] == keras_builds["decoder"] == {"shapes_dict": {
        "sequences_shape": [None, 2, 4, 4, 1],
        "initial_state_shape": [[None, 4, 4, 2], [None, 4, 4, 2]]}}
