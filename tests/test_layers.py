"""The Keras image-toolbox layers and activations: forward against plain numpy formulas of Keras's
semantics on every backend, a small model that trains, save / load, configs and errors."""

import math

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.models import Model, Sequential, load_model
from layer_runs import LayerRun

BACKENDS = minidl.available_backends()
_erf = np.vectorize(math.erf)


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """Each test taking it runs with every usable backend active (numpy again afterwards)."""
    minidl.set_backend(request.param), minidl.set_seed(0)
    yield request.param
    minidl.set_backend("numpy")


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# Keras 3's definitions (keras/src/activations/activations.py), in float64
KERAS_ACTIVATIONS = {
    "gelu": lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
    "gelu_approximate": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x * sigmoid(x), "swish": lambda x: x * sigmoid(x),
    "elu": lambda x: np.where(x > 0, x, np.exp(x) - 1),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1)),
    "softplus": lambda x: np.log(1 + np.exp(x)), "softsign": lambda x: x / (1 + np.abs(x)),
    "hard_sigmoid": lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6,
    "hard_silu": lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6,
    "hard_swish": lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6,
    "mish": lambda x: x * np.tanh(np.log(1 + np.exp(x))), "exponential": np.exp,
    "relu6": lambda x: np.minimum(np.maximum(x, 0), 6),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.2 * x),      # Keras's default negative_slope
}


def predict(layer, x, weights=None):
    inp = layers.Input(x.shape[1:])
    model = Model(inp, layer(inp))
    if weights is not None:
        layer.set_weights(weights)
    return model.predict(x.astype(np.float32), verbose=0)


def rng_x(*shape, scale=3.0, seed=0):
    return np.random.default_rng(seed).normal(size=shape) * scale


@pytest.mark.parametrize("name", sorted(KERAS_ACTIVATIONS))
def test_activation_forward_matches_keras(active_backend, name):
    x = rng_x(4, 37)
    want = KERAS_ACTIVATIONS[name](x)
    np.testing.assert_allclose(predict(layers.Activation(name), x), want, rtol=1e-4, atol=1e-5)
    got = predict(layers.Dense(37, activation=name), x, [np.eye(37), np.zeros(37)])   # fused into Dense
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_activation_names_and_aliases():
    assert layers.Activation("swish").activation is minidl.activations.silu
    assert layers.Activation("hard_swish").get_config()["activation"] == "hard_silu"
    with pytest.raises(ValueError, match="unknown activation 'gelu_fast'"):
        layers.Dense(3, activation="gelu_fast")


def test_layer_forwards_match_numpy(active_backend):
    x4 = rng_x(3, 6, 5, 4)
    np.testing.assert_allclose(predict(layers.ELU(alpha=0.7), x4), np.where(x4 > 0, x4, 0.7 * np.expm1(x4)),
                               rtol=1e-5, atol=1e-6)
    e = np.exp(x4 - x4.max(-1, keepdims=True))
    np.testing.assert_allclose(predict(layers.Softmax(axis=3), x4), e / e.sum(-1, keepdims=True), rtol=1e-5,
                               atol=1e-6)
    e1 = np.exp(x4 - x4.max(1, keepdims=True))
    np.testing.assert_allclose(predict(layers.Softmax(axis=1), x4), e1 / e1.sum(1, keepdims=True), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(predict(layers.Permute((3, 1, 2)), x4), x4.transpose(0, 3, 1, 2), rtol=1e-6)
    np.testing.assert_allclose(predict(layers.GlobalMaxPooling2D(), x4), x4.max(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(predict(layers.GlobalMaxPooling2D(keepdims=True), x4),
                               x4.max(axis=(1, 2), keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(predict(layers.Cropping2D(((1, 2), (0, 3))), x4), x4[:, 1:4, 0:2],
                               rtol=1e-6)
    x2 = rng_x(5, 7)
    np.testing.assert_allclose(predict(layers.RepeatVector(3), x2), np.repeat(x2[:, None], 3, axis=1),
                               rtol=1e-6)
    alpha = rng_x(1, 1, 4, scale=0.5)
    np.testing.assert_allclose(predict(layers.PReLU(shared_axes=[1, 2]), x4, [alpha]),
                               np.where(x4 > 0, x4, alpha * x4), rtol=1e-5, atol=1e-6)
    gamma, beta = rng_x(4, seed=1), rng_x(4, seed=2)
    mean, var = x4.mean(-1, keepdims=True), x4.var(-1, keepdims=True)
    np.testing.assert_allclose(predict(layers.LayerNormalization(epsilon=0.01), x4, [gamma, beta]),
                               (x4 - mean) / np.sqrt(var + 0.01) * gamma + beta, rtol=1e-4, atol=1e-4)
    mm, mv = rng_x(4, seed=3), np.abs(rng_x(4, seed=4)) + 0.5
    np.testing.assert_allclose(predict(layers.BatchNormalization(center=False, scale=False), x4, [mm, mv]),
                               (x4 - mm) / np.sqrt(mv + 1e-3), rtol=1e-4, atol=1e-4)
    x3 = rng_x(2, 3, 5)
    kernel, bias = rng_x(5, 4, seed=5), rng_x(4, seed=6)
    np.testing.assert_allclose(predict(layers.Dense(4), x3, [kernel, bias]), x3 @ kernel + bias, rtol=1e-4,
                               atol=1e-4)
    for layer in (layers.GaussianNoise(1.0), layers.SpatialDropout2D(0.5)):    # inference: identity
        np.testing.assert_allclose(predict(layer, x4), x4, rtol=1e-6)


@pytest.mark.parametrize("cls", [layers.MaxPooling2D, layers.AveragePooling2D])
def test_pooling_same_padding_matches_tensorflow(active_backend, cls):
    x = rng_x(2, 5, 7, 3)
    got = predict(cls(3, strides=2, padding="same"), x)
    # TF 'same': out = ceil(size / stride), padding (total // 2 before, the rest after), pads excluded
    want = np.zeros((2, 3, 4, 3))
    for i in range(3):
        for j in range(4):
            window = x[:, max(2 * i - 1, 0):2 * i + 2, max(2 * j - 1, 0):2 * j + 2]
            want[:, i, j] = window.max(axis=(1, 2)) if cls is layers.MaxPooling2D else window.mean(axis=(1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_spatial_dropout_drops_whole_channels(active_backend):
    layer = layers.SpatialDropout2D(0.5)
    inp = layers.Input((4, 5, 16))
    Model(inp, layer(inp))
    b = minidl.get_backend()
    x = np.abs(rng_x(8, 4, 5, 16)).astype(np.float32) + 0.1
    out = b.to_numpy(LayerRun(layer).forward(b.from_numpy(x), training=True))
    ratio = out / x
    per_channel = ratio.reshape(8, 20, 16)
    np.testing.assert_allclose(per_channel, per_channel[:, :1].repeat(20, axis=1), rtol=1e-6)
    assert set(np.round(np.unique(ratio), 5)) <= {0.0, 2.0}
    assert 0.2 < (per_channel[:, 0] == 0).mean() < 0.8


def test_gaussian_noise_in_training(active_backend):
    layer = layers.GaussianNoise(0.3)
    inp = layers.Input((50, 40))
    Model(inp, layer(inp))
    b = minidl.get_backend()
    x = rng_x(4, 50, 40).astype(np.float32)
    noise = b.to_numpy(LayerRun(layer).forward(b.from_numpy(x), training=True)) - x
    assert abs(noise.mean()) < 0.02 and abs(noise.std() - 0.3) < 0.02


def toolbox_model():
    return Sequential([
        layers.Input((10, 10, 3)),
        layers.Conv2D(8, 3, padding="same", activation="gelu"),
        layers.BatchNormalization(center=False, scale=False),
        layers.PReLU(shared_axes=[1, 2]),
        layers.SpatialDropout2D(0.2, seed=3),
        layers.GaussianNoise(0.05),
        layers.Cropping2D(1),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.LayerNormalization(),
        layers.Conv2D(8, 1, activation="mish"),
        layers.ELU(),
        layers.GlobalMaxPooling2D(),
        layers.RepeatVector(2),
        layers.Permute((2, 1)),
        layers.Softmax(axis=1),
        layers.Permute((2, 1)),
        layers.Dense(6, activation="hard_swish"),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def toolbox_data():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=48)
    x = rng.normal(size=(48, 10, 10, 3)).astype(np.float32) * 0.5
    x[..., 0] += (y == 0)[:, None, None] * 1.5
    x[..., 1] += (y == 1)[:, None, None] * 1.5
    return x, y


def test_model_of_the_new_layers_trains_and_round_trips(active_backend, tmp_path):
    x, y = toolbox_data()
    model = toolbox_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    before = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, epochs=6, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    assert model.evaluate(x, y, verbose=0)[0] < before[0]
    path = tmp_path / "toolbox.keras"
    model.save(path)
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    names = [[w.name for w in layer.weights] for layer in model.layers]
    assert names[1] == ["moving_mean", "moving_variance"]          # no gamma / beta (scale / center off)
    assert names[2] == ["alpha"] and model.layers[2].weights[0].shape == (1, 1, 8)
    assert names[7] == ["gamma", "beta"]


def test_softmax_on_an_inner_axis_is_not_fused_into_the_loss(active_backend):
    inp = layers.Input((3, 4))
    model = Model(inp, layers.Softmax(axis=1)(inp))
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    x = rng_x(2, 3, 4)
    y = np.eye(4)[[[0, 1, 2], [3, 0, 1]]]
    e = np.exp(x - x.max(1, keepdims=True))
    p = np.clip(e / e.sum(1, keepdims=True), 1e-7, 1 - 1e-7)
    want = -(y * np.log(p)).sum(-1).mean()            # Keras: cross-entropy over the last axis
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), want, rtol=1e-4)


def test_noise_layers_resume_exactly(tmp_path):
    minidl.set_backend("numpy")
    x, y = toolbox_data()

    def fresh():
        minidl.set_seed(5)
        model = toolbox_model()
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        return model

    straight = fresh()
    for _ in range(2):
        straight.train_on_batch(x[:16], y[:16])
    resumed = fresh()
    resumed.train_on_batch(x[:16], y[:16])
    resumed.save(tmp_path / "half.keras")
    resumed = load_model(tmp_path / "half.keras")
    resumed.train_on_batch(x[:16], y[:16])
    for a, b in zip(straight.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("layer", [
    layers.ELU(alpha=0.5), layers.Softmax(axis=-1), layers.PReLU(shared_axes=[1, 2]), layers.GlobalMaxPooling2D(keepdims=True),
    layers.Cropping2D(((1, 0), (2, 3))), layers.RepeatVector(4), layers.LayerNormalization(epsilon=0.1, center=False),
    layers.BatchNormalization(scale=False, momentum=0.9), layers.GaussianNoise(0.2, seed=4),
    layers.SpatialDropout2D(0.3, seed=1), layers.Permute((2, 3, 1)), layers.Softmax(axis=1),
    layers.Activation("gelu_approximate"), layers.Dense(3, activation="relu6"),
])
def test_config_round_trip(layer):
    config = layer.get_config()
    again = layers.deserialize(type(layer).__name__, config)
    assert again.get_config() == config


@pytest.mark.parametrize("make, shape, message", [
    (lambda: layers.GlobalMaxPooling2D(), (5, 4), "GlobalMaxPooling2D .* rank 4 .*\\(None, 5, 4\\)"),
    (lambda: layers.Cropping2D(2), (4, 5, 3), "Cropping2D .* cropping .* \\(None, 4, 5, 3\\)"),
    (lambda: layers.RepeatVector(2), (4, 5), "RepeatVector .* rank 2 .*\\(None, 4, 5\\)"),
    (lambda: layers.Softmax(axis=3), (4, 5), "Softmax .* axis=3 .*\\(None, 4, 5\\)"),
    (lambda: layers.Softmax(axis=0), (4, 5), "Softmax .* axis=0 .*\\(None, 4, 5\\)"),
    (lambda: layers.Permute((2, 1)), (4, 5, 6), "Permute .* \\(None, 4, 5, 6\\)"),
    (lambda: layers.PReLU(shared_axes=[3]), (4, 5), "PReLU .* shared_axes .*\\(None, 4, 5\\)"),
    (lambda: layers.LayerNormalization(axis=1), (4, 5), "LayerNormalization .* axis=1"),
    (lambda: layers.BatchNormalization(axis=1), (4, 5), "BatchNormalization .* axis=1"),
    (lambda: layers.SpatialDropout2D(0.1), (4, 5), "SpatialDropout2D .* rank 4 .*\\(None, 4, 5\\)"),
])
def test_bad_input_names_the_layer_and_shape(make, shape, message):
    with pytest.raises(ValueError, match=message):
        make()(layers.Input(shape))


@pytest.mark.parametrize("make, argument", [
    (lambda: layers.RepeatVector(0), "n"), (lambda: layers.GaussianNoise(-1.0), "stddev"),
    (lambda: layers.GaussianNoise(0.1, seed=-2), "seed"), (lambda: layers.ELU(alpha="x"), "alpha"),
    (lambda: layers.Cropping2D(-1), "cropping"), (lambda: layers.PReLU(shared_axes=[0]), "shared_axes"),
    (lambda: layers.SpatialDropout2D(1.5), "rate"), (lambda: layers.Permute((1, 3)), "dims"), (lambda: layers.LayerNormalization(epsilon=0), "epsilon"),
])
def test_bad_arguments_are_named(make, argument):
    with pytest.raises((TypeError, ValueError), match=argument):
        make()
