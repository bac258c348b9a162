"""ConvLSTM1D / ConvLSTM2D / ConvLSTM3D with Keras's options on every backend: masks (per step,
and per pixel as Masking makes them), dropout and recurrent_dropout (one mask per gate and
sequence, drawn from the seed), stateful=True. Outputs and every gradient against numbers
printed by real Keras 3.15.1 (tests/fixtures/keras_conv_lstm_options.py wrote
tests/fixtures/keras_conv_lstm_options.json; its dropout cases recorded Keras's masks, which
are given to minidl's layer instead of its own draw); float64 finite differences on numpy."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import layers as L
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model

from _numeric import check_layer_run_gradients
from keras_fixture_checks import close_to_keras, loss_gradient, listed
from layer_runs import LayerRun


def close(actual, expected, what):
    close_to_keras(actual, expected, what, atol=3e-6)


HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras_conv_lstm_options.json")) as f:
    KERAS = json.load(f)

# The minidl twin of each Keras case (same constructor arguments).
LAYERS = {
    "2d_seq_same": lambda: L.ConvLSTM2D(3, 3, padding="same", return_sequences=True),
    "2d_valid_state_backwards_empty": lambda: L.ConvLSTM2D(2, (2, 3), return_state=True,
                                                           go_backwards=True),
    "2d_pixels_seq": lambda: L.ConvLSTM2D(2, 3, padding="same", return_sequences=True),
    "2d_pixels_last_backwards": lambda: L.ConvLSTM2D(2, (3, 2), padding="same",
                                                     go_backwards=True),
    "2d_zero_output_seq": lambda: L.ConvLSTM2D(2, 3, padding="same", return_sequences=True,
                                               zero_output_for_mask=True),
    "1d_last_strides": lambda: L.ConvLSTM1D(3, 3, strides=2, padding="same"),
    "1d_seq_state": lambda: L.ConvLSTM1D(2, 2, return_sequences=True, return_state=True),
    "3d_seq_same": lambda: L.ConvLSTM3D(2, 2, padding="same", return_sequences=True),
    "2d_dropouts_seq_masked": lambda: L.ConvLSTM2D(2, 3, padding="same", dropout=0.3,
                                                   recurrent_dropout=0.4, return_sequences=True),
    "2d_strided_dropouts_state": lambda: L.ConvLSTM2D(2, 3, strides=2, dropout=0.2,
                                                      recurrent_dropout=0.5, return_state=True),
    "1d_dropout_last": lambda: L.ConvLSTM1D(3, 3, dropout=0.5),
    "3d_recurrent_dropout_seq": lambda: L.ConvLSTM3D(2, 2, padding="same", recurrent_dropout=0.3,
                                                     return_sequences=True, go_backwards=True),
}


def attached(layer, backend, shape):
    layer.build_once(tuple(shape))
    layer.attach(backend)
    return layer


def with_keras_masks(layer, backend, drawn):
    """The layer with Keras's recorded per-gate masks ((N, *spatial, 4, C) per role) in place
    of its own draw (the same layout: (N, S * 4 C))."""
    fixed = {role: backend.from_numpy(np.array(m, np.float32).reshape(len(m), -1))
             for role, m in drawn.items()}

    def draw(call, role, n, positions, channels, rate, seed):
        assert backend.shape(fixed[role]) == (n, positions * 4 * channels)
        return fixed[role]
    layer._gate_masks = draw
    return layer


# ------------------------------------------------------------ against Keras
@pytest.mark.parametrize("case", sorted(LAYERS))
def test_masked_and_dropped_calls_match_keras(backend, case):
    """A masked step keeps h and c and outputs the last output (0 before the first step that
    ran, or 0 with zero_output_for_mask), per pixel with a (N, T, H, W) mask; in training the
    inputs and h_{t-1} are dropped with one mask per gate (Keras's own masks here)."""
    ref = KERAS["cases"][case]
    x = np.array(ref["x"], np.float32)
    layer = attached(LAYERS[case](), backend, x.shape[1:])
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    with_keras_masks(layer, backend, ref["dropout_masks"])
    mask = None if ref["mask"] is None else backend.from_numpy(np.array(ref["mask"], np.float32))
    run = LayerRun(layer, mask=mask)
    ys = [backend.to_numpy(y) for y in listed(run.forward(backend.from_numpy(x), True))]
    assert len(ys) == len(ref["outputs"])
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    douts = [backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)]
    dx = run.backward(douts if len(douts) > 1 else douts[0])
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


def test_stateful_matches_keras(backend):
    """The last states of a call start the next one; reset_states() zeroes them; layer.states
    holds them (Keras's numbers over two calls of two steps each)."""
    ref = KERAS["stateful"]
    x = np.array(ref["x"], np.float32)
    layer = attached(L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, stateful=True),
                     backend, x.shape[1:])
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    assert layer.states is None
    run = LayerRun(layer)
    close(backend.to_numpy(run.forward(backend.from_numpy(x[:, :2]), False)), ref["outputs"][0],
          "first call")
    close(backend.to_numpy(run.forward(backend.from_numpy(x[:, 2:]), True)), ref["outputs"][1],
          "second call")
    for state, expected in zip(layer.states, ref["states"]):
        close(state, expected, "state")
    layer.reset_states()
    assert all(not np.any(state) for state in layer.states)
    close(backend.to_numpy(run.forward(backend.from_numpy(x[:, 2:]), False)), ref["outputs"][2],
          "after reset_states")
    with pytest.raises(ValueError, match=r"conv_lstm2d.*stateful.*batches of one size"):
        run.forward(backend.from_numpy(x[:1, 2:]), False)


# ------------------------------------------------------------ masks in a model
def test_masking_in_a_model_gives_the_mask_per_pixel(backend):
    """Masking before the layer makes a (N, T, H, W) mask: the model's numbers are those of
    the layer called with that mask by hand (layer(x, mask=m) too), not those without."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3, 3, 2)).astype(np.float32)
    x[0, 1] = 0.0                  # a whole frame
    x[1, 2, 1] = 0.0               # a row of pixels
    inp = L.Input((4, 3, 3, 2))
    conv = L.ConvLSTM2D(2, 3, padding="same", return_sequences=True)
    model = Model(inp, conv(L.Masking()(inp)))
    graph = model.graph
    graph.attach(backend)
    y = backend.to_numpy(graph.forward([backend.from_numpy(x)], False)[0])
    mask = np.any(x != 0, axis=-1)
    by_hand = LayerRun(conv, mask=backend.from_numpy(mask.astype(np.float32)))
    expected = backend.to_numpy(by_hand.forward(backend.from_numpy(x), False))
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-7)
    assert not np.allclose(y, backend.to_numpy(LayerRun(conv).forward(backend.from_numpy(x),
                                                                      False)), atol=1e-4)
    assert conv.output_has_mask(True)


def test_mask_by_hand_on_arrays():
    minidl.set_backend("numpy")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 2)).astype(np.float32)
    layer = L.ConvLSTM1D(2, 3, padding="same", return_sequences=True)
    mask = np.array([[True, False, True], [False, True, True]])
    y = layer(x, mask=mask)
    # a masked step repeats the last output (0 before any step ran)
    np.testing.assert_array_equal(y[0, 1], y[0, 0])
    np.testing.assert_array_equal(y[1, 0], 0.0)
    assert not np.allclose(y, layer(x))


def test_masks_of_the_wrong_shape_are_refused(backend):
    x = np.zeros((2, 3, 5, 4, 2), np.float32)
    layer = attached(L.ConvLSTM2D(2, 3, name="clstm"), backend, x.shape[1:])   # output 3 x 2
    pixels = LayerRun(layer, mask=backend.from_numpy(np.ones((2, 3, 5, 4), np.float32)))
    with pytest.raises(ValueError, match=r"clstm.*mask must have shape \(2, 3\).*\(2, 3, 3, 2\)"
                                         r".*got \(2, 3, 5, 4\)"):
        pixels.forward(backend.from_numpy(x), False)
    with pytest.raises(ValueError, match=r"clstm.*mask= is not taken on symbolic tensors"):
        layer(L.Input((3, 5, 4, 2)), mask=np.ones((2, 3)))


# ------------------------------------------------------------ dropout
def test_dropout_draws_one_mask_per_gate_and_sequence_in_training_only(backend):
    """Inverted dropout: kept with probability 1 - rate and scaled by 1 / (1 - rate), a mask
    per gate (N, S * 4 C) on the inputs and (N, P * 4 f) on h_{t-1}; inference is the layer
    without dropout."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 2, 6, 6, 3)).astype(np.float32)
    layer = attached(L.ConvLSTM2D(4, 3, padding="same", dropout=0.25, recurrent_dropout=0.4,
                                  return_sequences=True), backend, x.shape[1:])
    plain = attached(L.ConvLSTM2D(4, 3, padding="same", return_sequences=True), backend,
                     x.shape[1:])
    plain.set_weights(layer.get_weights())
    run = LayerRun(layer)
    trained = backend.to_numpy(run.forward(backend.from_numpy(x), True))
    for role, rate, width in (("input", 0.25, 36 * 4 * 3), ("state", 0.4, 36 * 4 * 4)):
        mask = backend.to_numpy(getattr(run.call, f"{role}_drop"))
        assert mask.shape == (16, width)
        assert set(np.unique(mask)) <= {0.0, np.float32(1 / (1 - rate))}
        assert abs(np.mean(mask == 0) - rate) < 0.05, role
        assert abs(np.mean(mask) - 1.0) < 0.08, role
        gates = mask.reshape(16, 36, 4, -1)
        assert not np.array_equal(gates[:, :, 0], gates[:, :, 1])   # a mask per gate
    expected = backend.to_numpy(LayerRun(plain).forward(backend.from_numpy(x), False))
    inference = backend.to_numpy(run.forward(backend.from_numpy(x), False))
    assert run.call.input_drop is None and run.call.state_drop is None
    np.testing.assert_allclose(inference, expected, rtol=1e-6, atol=1e-7)
    assert not np.allclose(trained, expected, atol=1e-3)


def _dropped_run(backend, step_seed, x, make, masks=None):
    """(output, [input masks, state masks], gradients) of a training call with dropout; with
    `masks` (numpy arrays) those instead of the backend's draw."""
    layer = attached(make(), backend, x.shape[1:])
    rng = np.random.default_rng(4)
    layer.set_weights([(rng.standard_normal(w.shape) * 0.3).astype(np.float32)
                       for w in layer.weights])
    if masks is not None:
        with_keras_masks(layer, backend, dict(zip(("input", "state"), masks)))
    layer.step_seed = step_seed
    run = LayerRun(layer)
    y = backend.to_numpy(run.forward(backend.from_numpy(x), True))
    drawn = [backend.to_numpy(m) for m in (run.call.input_drop, run.call.state_drop)]
    run.backward(backend.from_numpy(loss_gradient(y)))
    return y, drawn, [backend.to_numpy(w.grad) for w in layer.weights]


@pytest.mark.parametrize("make, shape", [
    (lambda: L.ConvLSTM2D(3, 3, padding="same", dropout=0.3, recurrent_dropout=0.3,
                          return_sequences=True, seed=5), (2, 3, 4, 4, 2)),
    (lambda: L.ConvLSTM3D(2, 2, dropout=0.3, recurrent_dropout=0.3), (2, 3, 3, 4, 4, 2)),
], ids=["2d", "3d"])
def test_dropout_is_reproducible_from_the_seed(backend, make, shape):
    """The masks come from the backend's counter-based generator keyed by the step's seed
    (as LSTM's): a seed gives the same masks and numbers again, another seed others. The
    generators of the backends differ (dropout_forward's contract: the same mask on a
    backend), so across backends the numbers agree given the same masks: numpy's draw run on
    this backend computes numpy's numbers."""
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    y, masks, grads = _dropped_run(backend, 17, x, make)
    again, masks_again, grads_again = _dropped_run(backend, 17, x, make)
    np.testing.assert_array_equal(again, y)
    for a, b in zip(masks + grads, masks_again + grads_again):
        np.testing.assert_array_equal(a, b)
    _, other_masks, _ = _dropped_run(backend, 18, x, make)
    assert not np.array_equal(other_masks[0], masks[0])
    reference, reference_masks, reference_grads = _dropped_run(NumpyBackend(), 17, x, make)
    same, _, same_grads = _dropped_run(backend, 17, x, make, masks=reference_masks)
    np.testing.assert_allclose(same, reference, rtol=1e-5, atol=1e-6)
    for g, expected in zip(same_grads, reference_grads):
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-5)


def _conv_same(x, w):
    """x (N, H, W, C) convolved with w (k, k, C, F), 'same' padding, stride 1 (k odd)."""
    k = w.shape[0]
    p = k // 2
    padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    h, wd = x.shape[1:3]
    return sum(padded[:, i:i + h, j:j + wd] @ w[i, j] for i in range(k) for j in range(k))


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_dropout_matches_a_hand_computation_with_the_drawn_masks(backend):
    """Keras's ConvLSTMCell by hand in float64 numpy, gate by gate, with the masks minidl drew:
    x * M_g through kernel_g, h_{t-1} * R_g through recurrent_kernel_g."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 4, 5, 2))
    f = 3
    layer = attached(L.ConvLSTM2D(f, 3, padding="same", dropout=0.4, recurrent_dropout=0.3,
                                  return_sequences=True), backend, x.shape[1:])
    weights = [rng.standard_normal(w.shape) * 0.4 for w in layer.weights]
    layer.set_weights([w.astype(np.float32) for w in weights])
    layer.step_seed = 123
    run = LayerRun(layer)
    y = backend.to_numpy(run.forward(backend.from_numpy(x.astype(np.float32)), True))
    inputs = backend.to_numpy(run.call.input_drop).reshape(2, 4, 5, 4, 2)
    states = backend.to_numpy(run.call.state_drop).reshape(2, 4, 5, 4, f)
    kernel, recurrent, bias = weights
    h = c = np.zeros((2, 4, 5, f))
    expected = []
    for t in range(3):
        z = [_conv_same(x[:, t] * inputs[:, :, :, g], kernel[..., g * f:(g + 1) * f])
             + bias[g * f:(g + 1) * f]
             + _conv_same(h * states[:, :, :, g], recurrent[..., g * f:(g + 1) * f])
             for g in range(4)]
        c = _sigmoid(z[1]) * c + _sigmoid(z[0]) * np.tanh(z[2])
        h = _sigmoid(z[3]) * np.tanh(c)
        expected.append(h)
    np.testing.assert_allclose(y, np.stack(expected, 1), rtol=1e-4, atol=1e-5)


def test_conv_lstm3d_of_depth_one_is_conv_lstm2d_with_its_masks(backend):
    """ConvLSTM3D on volumes of depth 1 with kernel depth 1 draws the masks of ConvLSTM2D on
    the images (the same layout) and computes the same numbers and gradients."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4, 5, 2)).astype(np.float32)
    args = dict(padding="same", dropout=0.3, recurrent_dropout=0.4, return_sequences=True)
    flat = attached(L.ConvLSTM2D(2, 3, **args), backend, x.shape[1:])
    deep = attached(L.ConvLSTM3D(2, (1, 3, 3), **args), backend, (3, 1, 4, 5, 2))
    weights = [(rng.standard_normal(w.shape) * 0.4).astype(np.float32) for w in flat.weights]
    flat.set_weights(weights)
    deep.set_weights([w.reshape(s.shape) for w, s in zip(weights, deep.weights)])
    results = []
    for layer, data in ((flat, x), (deep, x[:, :, None])):
        layer.step_seed = 9
        run = LayerRun(layer)
        y = backend.to_numpy(run.forward(backend.from_numpy(data), True))
        dx = backend.to_numpy(run.backward(backend.from_numpy(loss_gradient(y))))
        results.append([y.reshape(-1), dx.reshape(-1)]
                       + [backend.to_numpy(w.grad).reshape(-1) for w in layer.weights])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ float64 gradient checks
@pytest.mark.parametrize("make, shape, mask", [
    (lambda: L.ConvLSTM2D(2, 3, padding="same", dropout=0.3, recurrent_dropout=0.4,
                          return_sequences=True, go_backwards=True),
     (2, 4, 3, 4, 2), "pixels"),
    (lambda: L.ConvLSTM2D(2, (2, 3), strides=(2, 1), recurrent_dropout=0.4, return_state=True),
     (2, 4, 5, 4, 1), "steps"),
    (lambda: L.ConvLSTM1D(2, 3, dropout=0.4, return_sequences=True, zero_output_for_mask=True),
     (2, 4, 5, 2), "steps"),
    (lambda: L.ConvLSTM3D(2, 2, padding="same", dropout=0.3, recurrent_dropout=0.3,
                          return_state=True, go_backwards=True),
     (2, 3, 2, 3, 2, 1), "steps"),
], ids=["2d_pixels_dropouts", "2d_steps_state", "1d_zero_output", "3d_dropouts"])
def test_gradients_float64(make, shape, mask):
    """Training with masks and dropout: the masks are drawn from the step's seed, the same on
    every forward, so finite differences see one function."""
    b = NumpyBackend("float64")
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape)
    layer = attached(make(), b, x.shape[1:])
    layer.set_weights([rng.standard_normal(w.shape) * 0.4 for w in layer.weights])
    layer.step_seed = 3
    if mask == "pixels":
        m = (rng.random(shape[:-1]) > 0.3).astype(np.float64)
    else:
        m = np.array([[1, 0, 1, 1], [0, 1, 1, 0]], np.float64)[:, :shape[1]]
    run = LayerRun(layer, mask=m)
    check_layer_run_gradients(run, x, rng)


@pytest.mark.parametrize("make, shape", [
    (lambda: L.ConvLSTM2D(2, 3, padding="same", stateful=True, return_sequences=True,
                          recurrent_dropout=0.3), (2, 3, 4, 3, 2)),
    (lambda: L.ConvLSTM3D(2, 2, padding="same", stateful=True), (2, 1, 2, 3, 2, 1)),
], ids=["2d_recurrent_dropout", "3d_one_step"])
def test_stateful_gradients_float64(make, shape):
    """A stateful call starts from the kept states (constants): its gradients, recurrent
    kernel's included, from the first step on."""
    b = NumpyBackend("float64")
    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape)
    layer = attached(make(), b, x.shape[1:])
    layer.set_weights([rng.standard_normal(w.shape) * 0.4 for w in layer.weights])
    run = LayerRun(layer)
    run.forward(x, False)                     # leaves states for the next call
    kept = [s.copy() for s in layer._states]
    assert np.any(kept[0])

    def keep_states():
        for state, value in zip(layer._states, kept):
            state[...] = value
    check_layer_run_gradients(run, x, rng, keep_states)


# ------------------------------------------------------------ in a model, config
def test_masked_dropped_stateful_layers_in_models_train(active_backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3, 5, 5, 1)).astype(np.float32)
    x[::3, 2] = 0.0                                  # padded last frames
    y = (x.sum(axis=(1, 2, 3, 4)) > 0).astype(np.float32)
    minidl.set_seed(1)
    inp = L.Input((3, 5, 5, 1))
    h = L.ConvLSTM2D(4, 3, padding="same", dropout=0.2, recurrent_dropout=0.2,
                     return_sequences=True)(L.Masking()(inp))
    h = L.ConvLSTM2D(2, 3, padding="same", recurrent_dropout=0.1)(h)
    model = Model(inp, L.Dense(1, activation="sigmoid")(L.GlobalAveragePooling2D()(h)))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, y, epochs=6, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    # stateful: a fixed batch size, states carried from batch to batch until reset
    stateful = L.ConvLSTM2D(2, 3, padding="same", stateful=True)
    seq = Model(inp, stateful(inp))
    first = seq.predict(x[:8], batch_size=8, verbose=0)
    second = seq.predict(x[:8], batch_size=8, verbose=0)
    assert not np.allclose(first, second, atol=1e-5)
    stateful.reset_states()
    np.testing.assert_allclose(seq.predict(x[:8], batch_size=8, verbose=0), first, rtol=1e-5,
                               atol=1e-6)
    assert [s.shape for s in stateful.states] == [(8, 5, 5, 2)] * 2


def test_config_round_trip():
    layer = L.ConvLSTM2D(2, 3, dropout=0.25, recurrent_dropout=0.5, seed=4, stateful=True,
                         zero_output_for_mask=True)
    config = layer.get_config()
    for key, value in {"dropout": 0.25, "recurrent_dropout": 0.5, "seed": 4, "stateful": True,
                       "zero_output_for_mask": True}.items():
        assert config[key] == value, key
    assert L.ConvLSTM2D.from_config(config).get_config() == config
    assert L.ConvLSTM3D(2, 2).get_config()["zero_output_for_mask"] is False
