"""The 1-D convolution family (Conv1D with causal padding, dilation and groups, SeparableConv1D,
DepthwiseConv1D, Conv1DTranspose, the 1-D poolings, UpSampling1D, ZeroPadding1D, Cropping1D,
SpatialDropout1D and the aliases) against what Keras 3.15.1 printed: outputs, weight names and
layouts, and the gradients of the input and of every weight (tests/_keras_sequence_values.py,
written by tests/keras_reference/sequence_layers.py), on every backend; training, save/load,
configs and errors."""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.models import Sequential, load_model

from _keras_sequence_values import CASES
from layer_runs import LayerRun


def det(shape, scale=0.3):
    """The inputs and weights the Keras script used: sin(0.7 i + 0.3) * scale."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + 0.3) * scale).reshape(shape).astype("float32")


def case_id(case):
    return case["name"] + "-" + "-".join(f"{k}={v}" for k, v in case["kwargs"].items())


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_values_and_gradients_match_keras(active_backend, case):
    layer = getattr(layers, case["name"])(**case["kwargs"])
    x = det((2, 3, 4, 5, 2) if "3D" in case["name"] else (2, 5, 7, 3) if "2D" in case["name"]
            else (2, 7, 3), 1.0)
    layer(x)
    assert [(w.name, w.shape) for w in layer.weights] == [tuple(w) for w in case["weights"]]
    layer.set_weights([det(w.shape) for w in layer.weights])
    b = layer.backend
    run = LayerRun(layer)
    y = run.forward(b.from_numpy(x), True)
    np.testing.assert_allclose(b.to_numpy(y), case["y"], atol=2e-5)
    dx = run.backward(b.from_numpy(det(b.shape(y), 1.0)))
    np.testing.assert_allclose(b.to_numpy(dx), case["dx"], atol=5e-5)
    for w, want in zip(layer.trainable_weights, case["dweights"]):
        np.testing.assert_allclose(b.to_numpy(w.grad), want, atol=5e-5, err_msg=w.name)


def test_aliases_and_names_are_keras():
    assert layers.Convolution1D is layers.Conv1D and layers.MaxPool1D is layers.MaxPooling1D
    assert layers.AvgPool1D is layers.AveragePooling1D
    assert layers.GlobalAvgPool1D is layers.GlobalAveragePooling1D
    assert layers.GlobalMaxPool1D is layers.GlobalMaxPooling1D
    minidl.backend.clear_session()
    names = [layers.Conv1D(2, 3).name, layers.MaxPooling1D().name, layers.Conv1DTranspose(2, 3).name,
             layers.GlobalAveragePooling1D().name, layers.ZeroPadding1D().name]
    assert names == ["conv1d", "max_pooling1d", "conv1d_transpose", "global_average_pooling1d",
                     "zero_padding1d"]


def test_configs_round_trip_as_keras():
    conv = layers.Conv1D(4, 3, strides=2, padding="causal", name="c")
    config = conv.get_config()
    assert config["kernel_size"] == [3] and config["strides"] == [2] and config["padding"] == "causal"
    assert config["dilation_rate"] == [1] and config["data_format"] == "channels_last"
    again = layers.Conv1D.from_config(config)
    assert again.padding == "causal" and again.get_config() == config
    for layer in (layers.Conv1DTranspose(2, 3, strides=2, output_padding=1), layers.SeparableConv1D(3, 2),
                  layers.DepthwiseConv1D(3, depth_multiplier=2), layers.MaxPooling1D(3, strides=1),
                  layers.AveragePooling1D(2, padding="same"), layers.GlobalMaxPooling1D(keepdims=True),
                  layers.GlobalAveragePooling1D(), layers.UpSampling1D(3), layers.ZeroPadding1D((1, 2)),
                  layers.Cropping1D(2), layers.SpatialDropout1D(0.3, seed=1)):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config


def test_shapes_with_unknown_steps(active_backend):
    inputs = layers.Input((None, 3))
    y = layers.Conv1D(4, 3, padding="causal")(inputs)
    y = layers.MaxPooling1D(2)(y)
    y = layers.Conv1DTranspose(2, 3, strides=2, padding="same")(y)
    out = layers.GlobalAveragePooling1D()(y)
    model = minidl.Model(inputs, out)
    assert y.shape == (None, None, 2) and out.shape == (None, 2)
    for steps in (6, 9):
        assert model.predict(det((2, steps, 3), 1.0), verbose=0).shape == (2, 2)


def sequence_model(dropout=0.1):
    minidl.set_seed(3)
    model = Sequential([
        layers.Input((20, 4)),
        layers.Conv1D(8, 3, padding="causal", dilation_rate=2, activation="relu"),
        layers.SpatialDropout1D(dropout),
        layers.SeparableConv1D(8, 3, padding="same", activation="relu"),
        layers.MaxPooling1D(2),
        layers.DepthwiseConv1D(3, padding="same"),
        layers.UpSampling1D(2),
        layers.ZeroPadding1D(1),
        layers.Cropping1D(1),
        layers.Conv1D(4, 2, groups=2, padding="same"),
        layers.Conv1DTranspose(4, 3, strides=1, padding="same"),
        layers.AveragePooling1D(2),
        layers.GlobalMaxPooling1D(),
        layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def sequence_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 20, 4)).astype(np.float32)
    return x, x[:, -5:, :2].mean(axis=(1, 2))[:, None]


def test_a_sequence_model_trains_and_saves(active_backend, tmp_path):
    x, y = sequence_data()
    model = sequence_model()
    before = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, batch_size=8, epochs=5, verbose=0)
    assert history.history["loss"][-1] < before
    path = tmp_path / "seq.minidl"
    model.save(path)
    loaded = load_model(path)
    assert loaded.layers[0].padding == "causal" and loaded.layers[0].dilation_rate == (1, 2)
    np.testing.assert_allclose(loaded.predict(x[:4], verbose=0), model.predict(x[:4], verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_a_sequence_model_trains_like_numpy(active_backend):
    x, y = sequence_data()
    model = sequence_model(dropout=0.0)   # the backends draw different masks
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    got = model.predict(x[:4], verbose=0)
    minidl.set_backend("numpy")
    reference = sequence_model(dropout=0.0)
    reference.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_allclose(got, reference.predict(x[:4], verbose=0), rtol=2e-3, atol=2e-4)


def test_causal_output_ignores_the_future(active_backend):
    layer = layers.Conv1D(2, 3, padding="causal", dilation_rate=2)
    x = det((1, 10, 3), 1.0)
    y = layer(x)
    x2 = x.copy()
    x2[:, 6:] += 1.0
    np.testing.assert_allclose(layer(x2)[:, :6], y[:, :6], atol=1e-6)
    assert not np.allclose(layer(x2)[:, 6:], y[:, 6:])


@pytest.mark.parametrize("make, message", [
    (lambda: layers.Conv1D(2, 3, padding="full"), "padding"),
    (lambda: layers.Conv1D(2, (3, 3)), "kernel_size"),
    (lambda: layers.Conv1D(2, 3, data_format="channels_first"), "data_format"),
    (lambda: layers.Conv1D(2, 3, strides=2, dilation_rate=2), "dilation_rate"),
    (lambda: layers.MaxPooling1D(2, padding="causal"), "padding"),
    (lambda: layers.Conv1DTranspose(2, 3, padding="causal"), "padding"),
    (lambda: layers.Conv1DTranspose(2, 3, strides=2, output_padding=2), "output_padding"),
    (lambda: layers.ZeroPadding1D(-1), "padding"),
    (lambda: layers.Cropping1D((1, 2, 3)), "cropping"),
    (lambda: layers.UpSampling1D(0), "size"),
])
def test_bad_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_input_shapes_name_the_layer():
    with pytest.raises(ValueError, match="Conv1D 'c1'.*rank 3"):
        layers.Conv1D(2, 3, name="c1")(layers.Input((8, 8, 3)))
    with pytest.raises(ValueError, match="kernel"):
        layers.Conv1D(2, 5, name="c2")(layers.Input((3, 2)))
    with pytest.raises(ValueError, match="Cropping1D.*leaves nothing"):
        layers.Cropping1D((2, 2))(layers.Input((4, 2)))


def test_adaptive_poolings_take_any_size(active_backend):
    """AdaptiveAverage/MaxPooling1D/2D/3D give output_size whatever the input's size; configs and errors."""
    inputs = layers.Input((None, 3))
    pooled = layers.AdaptiveMaxPooling1D(4)(layers.Conv1D(4, 3, padding="same")(inputs))
    model = minidl.Model(inputs, layers.Dense(1)(layers.Flatten()(pooled)))
    model.compile("adam", "mse")
    for steps in (4, 9, 13):
        x = det((3, steps, 3), 1.0)
        assert model.predict(x, verbose=0).shape == (3, 1)
        model.train_on_batch(x, np.ones((3, 1), np.float32))
    image = layers.AdaptiveAveragePooling2D((2, 3))(det((2, 5, 7, 3), 1.0))
    np.testing.assert_allclose(image[:, 0, 0], det((2, 5, 7, 3), 1.0)[:, :3, :3].mean(axis=(1, 2)),
                               rtol=1e-5, atol=1e-6)
    for layer in (layers.AdaptiveAveragePooling1D(3), layers.AdaptiveMaxPooling2D((2, 4)),
                  layers.AdaptiveAveragePooling3D(2)):
        assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()
    with pytest.raises(ValueError, match="output_size"):
        layers.AdaptiveMaxPooling2D((2, 0))
    with pytest.raises(ValueError, match="output_size 5 is larger"):
        layers.AdaptiveAveragePooling1D(5)(det((1, 3, 2), 1.0))
