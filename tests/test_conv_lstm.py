"""ConvLSTM1D, ConvLSTM2D and ConvLSTM3D on every backend: outputs, weight shapes and names, and the
gradients of the input and every weight against numbers printed by real Keras 3.15.1
(tests/fixtures/keras_conv_lstm.py wrote tests/fixtures/keras_conv_lstm.json); float64
finite-difference checks on numpy; the arguments minidl refuses."""

import json
import os

import numpy as np
import pytest

from minidl import layers as L
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model

from _numeric import check_layer_run_gradients
from keras_fixture_checks import close_to_keras, loss_gradient, listed
from layer_runs import LayerRun


def close(actual, expected, what):
    close_to_keras(actual, expected, what, atol=3e-6)


HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras_conv_lstm.json")) as f:
    KERAS = json.load(f)["cases"]

LAYERS = {
    "conv_lstm2d_seq_same": lambda: L.ConvLSTM2D(3, 3, padding="same", return_sequences=True),
    "conv_lstm2d_valid_state_backwards": lambda: L.ConvLSTM2D(2, (2, 3), return_state=True,
                                                              go_backwards=True),
    "conv_lstm2d_strides_dilation": lambda: L.ConvLSTM2D(2, (3, 2), strides=(2, 1),
                                                         padding="same", use_bias=False),
    "conv_lstm1d_seq": lambda: L.ConvLSTM1D(3, 3, return_sequences=True,
                                            recurrent_activation="hard_sigmoid"),
    "conv_lstm1d_dilated_last": lambda: L.ConvLSTM1D(2, 2, dilation_rate=2, padding="same"),
    "conv_lstm3d_seq_same": lambda: L.ConvLSTM3D(2, 2, padding="same", return_sequences=True),
    "conv_lstm3d_valid_state_backwards": lambda: L.ConvLSTM3D(
        2, (2, 2, 1), return_state=True, go_backwards=True, use_bias=False),
}


@pytest.mark.parametrize("case", sorted(LAYERS))
def test_conv_lstm_matches_keras(backend, case):
    ref = KERAS[case]
    x = np.array(ref["x"], np.float32)
    layer = LAYERS[case]()
    layer.build_once(x.shape[1:])
    layer.attach(backend)
    assert [w.shape for w in layer.weights] == [tuple(s) for s in ref["shapes"]]
    assert [w.name for w in layer.weights] == [n.split("/")[-1] for n in ref["names"]]
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    run = LayerRun(layer)
    ys = [backend.to_numpy(y) for y in listed(run.forward(backend.from_numpy(x), True))]
    assert len(ys) == len(ref["outputs"])
    for k, (y, expected) in enumerate(zip(ys, ref["outputs"])):
        close(y, expected, f"output {k}")
    douts = [backend.from_numpy(loss_gradient(y, k)) for k, y in enumerate(ys)]
    dx = run.backward(douts if len(douts) > 1 else douts[0])
    close(backend.to_numpy(dx), ref["dx"], "dx")
    for w, g in zip(layer.weights, ref["grads"]):
        close(backend.to_numpy(w.grad), g, f"gradient of {w.name}")


@pytest.mark.parametrize("make, shape", [
    (lambda: L.ConvLSTM2D(2, (2, 3), padding="same", return_sequences=True, go_backwards=True),
     (2, 3, 4, 3, 2)),
    (lambda: L.ConvLSTM1D(2, 3, strides=2, return_state=True), (2, 3, 7, 2)),
    (lambda: L.ConvLSTM3D(2, 2, strides=(1, 2, 1), padding="same", return_sequences=True),
     (2, 3, 2, 3, 2, 1)),
], ids=["2d_backwards", "1d_strides_state", "3d_strides"])
def test_conv_lstm_gradients_float64(make, shape):
    b = NumpyBackend("float64")
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape)
    layer = make()
    layer.build_once(x.shape[1:])
    layer.attach(b)
    layer.set_weights([rng.standard_normal(w.shape) * 0.4 for w in layer.weights])
    run = LayerRun(layer)
    check_layer_run_gradients(run, x, rng)


def test_conv_lstm_in_a_model_trains(active_backend):
    import minidl
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3, 5, 5, 1)).astype(np.float32)
    y = (x.sum(axis=(1, 2, 3, 4)) > 0).astype(np.float32)
    minidl.set_seed(1)
    inp = L.Input((3, 5, 5, 1))
    h = L.ConvLSTM2D(4, 3, padding="same")(inp)
    out = L.Dense(1, activation="sigmoid")(L.GlobalAveragePooling2D()(h))
    model = Model(inp, out)
    assert model.layers[1].output_shape == (5, 5, 4)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, y, epochs=8, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    config = model.layers[1].get_config()
    assert config["kernel_size"] == [3, 3] and config["filters"] == 4
    assert type(model.layers[1]).from_config(config).get_config() == config


@pytest.mark.parametrize("make, message", [
    (lambda: L.ConvLSTM2D(0, 3), "filters"),
    (lambda: L.ConvLSTM2D(2, 3, padding="causal"), "padding"),
    (lambda: L.ConvLSTM2D(2, 3, data_format="channels_first"), "data_format"),
    (lambda: L.ConvLSTM2D(2, 3, strides=2, dilation_rate=2), "dilation_rate"),
    (lambda: L.ConvLSTM2D(2, 3, recurrent_dropout=1.0), "recurrent_dropout"),
    (lambda: L.ConvLSTM2D(2, 3, seed=-1), "seed"),
    (lambda: L.ConvLSTM1D(2, (3, 3)), "kernel_size"),
])
def test_bad_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_input_rank_names_the_layer():
    with pytest.raises(ValueError, match=r"ConvLSTM2D 'c'.*rank 5"):
        L.ConvLSTM2D(2, 3, name="c")(L.Input((4, 5, 3)))
