"""Keras arguments minidl lacked, on every backend and against Keras 3.15.1's results: what the
applications need (ReLU(max_value=6), Dropout's noise_shape, Multiply broadcasting,
Normalization's Keras 3 weights and its identity before adapt()), LayerNormalization over
several axes and with rms_scaling, Adam / AdamW(amsgrad=True), the CosineSimilarity metric,
PReLU with any shared_axes, Resizing(pad_to_aspect_ratio=True) and ImageDataGenerator's
brightness_range and ZCA whitening. Gradients are checked in float64 on numpy."""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.models import Model
from layer_runs import LayerRun
from test_functional_api import float64_backend  # noqa: F401  (float64 numpy backend)
from test_gradients import check_layer
from test_keras_compat import active_backend  # noqa: F401  (the every-backend fixture)


def values(shape, seed=0, low=-8.0, high=8.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


def test_relu_max_value_six(active_backend):
    x = values((4, 7))
    relu6 = layers.ReLU(6.0)
    np.testing.assert_array_equal(relu6(x), np.clip(x, 0, 6))
    assert relu6.get_config()["max_value"] == 6.0
    assert layers.deserialize("ReLU", relu6.get_config())._activation == "relu6"
    np.testing.assert_allclose(layers.ReLU(negative_slope=0.5)(x), np.where(x < 0, 0.5 * x, x))
    for bad in (dict(max_value=5.0), dict(threshold=1.0), dict(max_value=6.0, negative_slope=0.1)):
        with pytest.raises(ValueError, match="ReLU 're_lu.*capped at 6"):
            layers.ReLU(**bad)


def test_relu6_gradient(float64_backend):
    check_layer(layers.ReLU(max_value=6), (3, 4))


@pytest.mark.parametrize("noise_shape, input_shape", [
    ((None, 1, 1, 1), (3, 4, 5)),     # whole samples (EfficientNet's stochastic depth)
    ((None, 1, 1, 5), (3, 4, 5)),     # whole feature maps, as SpatialDropout2D
    ((None, 1, 1, None), (3, 4, 5)),
    ((None, 1, 1, 1), (1, 1, 6)),     # length-1 axes count either way
])
def test_dropout_noise_shape(active_backend, noise_shape, input_shape):
    rate = 0.5
    layer = layers.Dropout(rate, noise_shape=noise_shape)
    inputs = layers.Input(input_shape)
    model = Model(inputs, layer(inputs))
    model.compile("sgd", "mse")
    x = values((64,) + input_shape, low=1.0, high=2.0)
    b = model.backend
    layer.step_seed = 7
    run = LayerRun(layer)
    y = b.to_numpy(run.forward(b.from_numpy(x), True))
    ratio = y / x
    assert set(np.unique(np.round(ratio, 5))) <= {0.0, 1.0 / (1 - rate)}
    # one draw per (sample, position on the axes not shared): constant along the shared ones
    shared = tuple(i for i, d in enumerate(noise_shape[1:], start=1) if d == 1)
    np.testing.assert_array_equal(ratio, np.broadcast_to(ratio.max(axis=shared, keepdims=True)
                                                         if shared else ratio, ratio.shape))
    assert 0.2 < float(np.mean(ratio == 0)) < 0.8
    dout = values(y.shape, seed=3)
    dx = b.to_numpy(run.backward(b.from_numpy(dout)))
    np.testing.assert_allclose(dx, dout * ratio, rtol=1e-6)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)   # inference: the identity


def test_dropout_noise_shape_config_and_errors():
    layer = layers.Dropout(0.2, noise_shape=(None, 1, 1, 1), seed=3)
    clone = layers.deserialize("Dropout", layer.get_config())
    assert clone.noise_shape == (None, 1, 1, 1) and clone.seed == 3
    assert "noise_shape" not in layers.SpatialDropout2D(0.1).get_config()
    inputs = layers.Input((4, 5, 6))
    for bad in ((None, 1, 1), (None, 4, 1, 6), (None, 3, 5, 6), (2, 1, 1, 1)):
        with pytest.raises(ValueError, match="Dropout 'dropout.*noise_shape.*does not fit"):
            layers.Dropout(0.5, noise_shape=bad)(inputs)
    with pytest.raises(ValueError, match="noise_shape entries must be None or positive ints"):
        layers.Dropout(0.5, noise_shape=(None, 0, 1))


def test_dropout_noise_shape_gradient(float64_backend):
    layer = layers.Dropout(0.4, noise_shape=(None, 1, 1, 1))
    layer.step_seed = 5
    check_layer(layer, (3, 3, 2), batch=4)


@pytest.mark.parametrize("small_first", [False, True])
def test_multiply_broadcasts_as_keras(active_backend, small_first):
    big, small = layers.Input((4, 5, 3)), layers.Input((1, 1, 3))
    pair = [small, big] if small_first else [big, small]
    product = layers.multiply(pair, name="excite")
    assert product.shape == (None, 4, 5, 3)
    model = Model(pair, layers.Dense(2)(layers.Flatten()(product)))
    model.compile("sgd", "mse")
    xb, xs = values((3, 4, 5, 3), seed=1), values((3, 1, 1, 3), seed=2)
    arrays = [xs, xb] if small_first else [xb, xs]
    excite = model.get_layer("excite")
    b = model.backend
    run = LayerRun(excite)
    out = b.to_numpy(run.forward([b.from_numpy(a) for a in arrays], True))
    np.testing.assert_allclose(out, xb * xs, rtol=1e-6)
    dout = values((3, 4, 5, 3), seed=4)
    grads = [b.to_numpy(g) for g in run.backward(b.from_numpy(dout))]
    dbig, dsmall = (grads[1], grads[0]) if small_first else grads
    np.testing.assert_allclose(dbig, dout * xs, rtol=1e-6)
    np.testing.assert_allclose(dsmall, (dout * xb).sum(axis=(1, 2), keepdims=True), rtol=1e-4,
                               atol=1e-4)


def test_multiply_broadcast_gradient(float64_backend):
    check_layer(layers.Multiply(), [(3, 4, 2), (1, 1, 2)])
    check_layer(layers.Multiply(), [(1, 4), (3, 4)])


def test_multiply_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match="Multiply 'multiply.*one shape"):
        layers.Multiply()([layers.Input((4, 5, 3)), layers.Input((4, 1, 3))])
    with pytest.raises(ValueError, match="Multiply 'multiply.*one shape"):
        layers.Multiply()([layers.Input((4, 3)), layers.Input((1, 2))])


def test_normalization_weights_and_identity_as_keras_3(active_backend):
    x = values((6, 3, 3, 2))
    norm = layers.Normalization(axis=3)
    np.testing.assert_allclose(norm(x), x, rtol=1e-6)    # never adapted: mean 0, variance 1
    assert [(w.name, w.shape, w.trainable) for w in norm.weights] == [
        ("mean", (2,), False), ("variance", (2,), False), ("count", (), False)]
    norm.adapt(x)
    mean, variance, count = norm.get_weights()
    np.testing.assert_allclose(mean, x.reshape(-1, 2).mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(variance, x.reshape(-1, 2).var(axis=0), rtol=1e-4)
    assert count == 0          # Keras 3 leaves its count at 0
    np.testing.assert_allclose(norm(x), (x - mean) / np.sqrt(variance), rtol=1e-4, atol=1e-5)
    assert layers.Normalization(mean=1.0, variance=4.0).weights == []   # constants, as Keras
    whole = layers.Normalization(axis=None)
    whole.adapt(x)
    np.testing.assert_allclose(whole(x), (x - x.mean()) / x.std(), rtol=1e-4, atol=1e-5)
    assert [w.shape for w in whole.weights] == [(), (), ()]
    np.testing.assert_allclose(whole.get_weights()[0], x.mean(), rtol=1e-5)


def test_normalization_statistics_survive_save_and_load(tmp_path):
    x = values((8, 4))
    inputs = layers.Input((4,))
    norm = layers.Normalization()
    norm.adapt(x)
    model = Model(inputs, layers.Dense(2)(norm(inputs)))
    path = str(tmp_path / "norm.keras")
    model.save(path)
    again = minidl.models.load_model(path)
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)


# w after four steps of these gradients from w = [0.5, -1, 2] with lr 0.1, as Keras 3.15.1
# (torch backend) computes them; the plain Adam row shows that amsgrad changes the result
AMSGRAD_GRADS = [[4.0, -0.5, 1.0], [0.1, -0.2, 0.3], [0.05, 0.1, -2.0], [-0.01, 0.02, 0.01]]
AMSGRAD_KERAS = [
    (dict(amsgrad=True), "Adam", [0.2331403, -0.7093069, 1.8615617]),
    (dict(amsgrad=True, weight_decay=0.1), "AdamW", [0.2183179, -0.6752273, 1.787166]),
    (dict(), "Adam", [0.2330457, -0.7093069, 1.861572]),
]


@pytest.mark.parametrize("kwargs, name, expected", AMSGRAD_KERAS)
def test_amsgrad_as_keras(active_backend, kwargs, name, expected):
    from minidl.backends import get_backend
    b = get_backend()
    optimizer = getattr(minidl.optimizers, name)(learning_rate=0.1, **kwargs)
    w = b.from_numpy(np.array([0.5, -1.0, 2.0], np.float32))
    optimizer.build(b, [w])
    for g in AMSGRAD_GRADS:
        optimizer.apply_gradients([(b.from_numpy(np.array(g, np.float32)), w)])
    # float32 rounding (Keras computes in float32 too) stays far below the amsgrad difference
    np.testing.assert_allclose(b.to_numpy(w), expected, rtol=0, atol=5e-6)
    assert optimizer.get_config().get("amsgrad", False) == kwargs.get("amsgrad", False)
    slots = {key.rsplit("/", 1)[0] for key in optimizer.get_state(b)}
    assert ("velocity_hat" in slots) == kwargs.get("amsgrad", False)


def test_amsgrad_state_and_config_round_trip():
    optimizer = minidl.optimizers.Adam(amsgrad=True)
    clone = minidl.optimizers.deserialize(minidl.optimizers.serialize(optimizer))
    assert clone.amsgrad is True and type(clone).__name__ == "Adam"
    with pytest.raises(TypeError, match="amsgrad must be a bool"):
        minidl.optimizers.AdamW(amsgrad="yes")


@pytest.mark.parametrize("axis, input_shape", [([-2, -1], (3, 4, 5)), ([1, 2, 3], (2, 3, 4)),
                                               ((2, 1), (5, 3)), (-1, (4, 6))])
def test_layer_normalization_over_trailing_axes(active_backend, axis, input_shape):
    layer = layers.LayerNormalization(axis=axis, epsilon=1e-3)
    inputs = layers.Input(input_shape)
    model = Model(inputs, layer(inputs))
    model.compile("sgd", "mse")
    k = len(axis) if isinstance(axis, (list, tuple)) else 1
    assert layer.gamma.shape == tuple(input_shape[-k:]) == layer.beta.shape   # Keras's shapes
    rng = np.random.default_rng(0)
    gamma, beta = rng.normal(size=input_shape[-k:]), rng.normal(size=input_shape[-k:])
    layer.set_weights([gamma, beta])
    x = values((6,) + input_shape)
    axes = tuple(range(len(input_shape) + 1 - k, len(input_shape) + 1))
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    np.testing.assert_allclose(model.predict(x, verbose=0),
                               (x - mean) / np.sqrt(var + 1e-3) * gamma + beta, rtol=1e-4, atol=1e-4)
    clone = layers.deserialize("LayerNormalization", layer.get_config())
    assert clone.axis == layer.axis


def test_layer_normalization_trailing_axes_gradient(float64_backend):
    check_layer(layers.LayerNormalization(axis=[-2, -1]), (2, 3, 4))


def test_layer_normalization_axis_errors():
    for axis, shape in (([1, 3], (2, 3, 4)), (1, (2, 3, 4)), ([0, 1], (3,)), ("last", (3,))):
        with pytest.raises(ValueError, match="LayerNormalization 'layer_normalization.*axis"):
            layers.LayerNormalization(axis=axis).build_once(shape)


def test_cosine_similarity_metric_as_keras(active_backend):
    # Keras 3's docstring examples: 0.49999997, 0.6999999 and [0, 0.99999994, -0.99999994]
    metric = minidl.metrics.CosineSimilarity(axis=1)
    y_true, y_pred = np.array([[0.0, 1.0], [1.0, 1.0]]), np.array([[1.0, 0.0], [1.0, 1.0]])
    metric.update_state(y_true, y_pred)
    assert float(metric.result().numpy()) == pytest.approx(0.5, abs=1e-6)
    metric.reset_state()
    metric.update_state(y_true, y_pred, sample_weight=np.array([0.3, 0.7]))
    assert float(metric.result().numpy()) == pytest.approx(0.7, abs=1e-6)
    values_ = minidl.metrics.cosine_similarity(np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]),
                                               np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, -1.0]]))
    np.testing.assert_allclose(values_.numpy(), [0.0, 1.0, -1.0], atol=1e-6)
    a, b = values((4, 3, 5), seed=1), values((4, 3, 5), seed=2)
    expected = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(minidl.metrics.cosine_similarity(a, b, axis=1).numpy(), expected,
                               rtol=1e-5)
    zeros = minidl.metrics.cosine_similarity(np.zeros((2, 3)), np.ones((2, 3))).numpy()
    np.testing.assert_array_equal(zeros, [0.0, 0.0])      # norms floored: no NaN


def test_cosine_similarity_metric_in_compile(active_backend):
    inputs = layers.Input((4,))
    model = Model(inputs, layers.Dense(3)(inputs))
    model.compile("sgd", "mse", metrics=["cosine_similarity",
                                         minidl.metrics.CosineSimilarity(name="cos", axis=-1)])
    x, y = values((8, 4), seed=1), values((8, 3), seed=2)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    p = model.predict(x, verbose=0)
    expected = np.mean((p * y).sum(axis=1) / np.linalg.norm(p, axis=1) / np.linalg.norm(y, axis=1))
    assert logs["cosine_similarity"] == pytest.approx(expected, rel=1e-4)
    assert logs["cos"] == pytest.approx(expected, rel=1e-4)
    with pytest.raises(ValueError, match="CosineSimilarity: axis must be an int"):
        minidl.metrics.CosineSimilarity(axis="last")


# Keras 3.15.1: Resizing(3, 3, interpolation, pad_to_aspect_ratio=True, fill_value=-1) of
# np.arange(8).reshape(1, 2, 4, 1) (padded to 4 x 4 first)
PAD_KERAS = {
    "nearest": [[-1.0, -1.0, -1.0], [4.0, 6.0, 7.0], [-1.0, -1.0, -1.0]],
    "bilinear": [[-0.805556, -0.583333, -0.361111], [2.166667, 3.5, 4.833334],
                 [-0.13889, 0.083332, 0.305554]],
}


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
def test_resizing_pad_to_aspect_ratio_as_keras(active_backend, interpolation):
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 4, 1)
    layer = layers.Resizing(3, 3, interpolation=interpolation, pad_to_aspect_ratio=True,
                            fill_value=-1.0)
    np.testing.assert_allclose(layer(x)[0, :, :, 0], PAD_KERAS[interpolation], atol=2e-6)
    # any shape: the same as resizing the image padded by numpy (same margins on both sides)
    images = values((2, 5, 8, 3), low=0.0, high=1.0)
    # 5 x 8 in frames of 1:1 (8 x 8: 7 x 8 with equal margins), 5:2 (20 x 8: 19 x 8), 5:16
    for size, pads in (((6, 6), ((1, 1), (0, 0))), ((10, 4), ((7, 7), (0, 0))),
                       ((5, 16), ((0, 0), (4, 4)))):
        padded = np.pad(images, ((0, 0),) + pads + ((0, 0),), constant_values=0.25)
        expected = layers.Resizing(*size, interpolation=interpolation)(padded)
        got = layers.Resizing(*size, interpolation=interpolation, pad_to_aspect_ratio=True,
                              fill_value=0.25)(images)
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_resizing_pad_to_aspect_ratio_gradient_and_config(float64_backend):
    layer = layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=0.5)
    check_layer(layer, (3, 5, 2))
    config = layer.get_config()
    assert config["pad_to_aspect_ratio"] and config["fill_mode"] == "constant"
    assert layers.deserialize("Resizing", config).fill_value == 0.5
    with pytest.raises(ValueError, match="only one of pad_to_aspect_ratio and crop_to_aspect_ratio"):
        layers.Resizing(4, 4, pad_to_aspect_ratio=True, crop_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="fill_mode must be one of"):
        layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_mode="reflect")


# ------------------------------------------------- ImageDataGenerator: brightness and ZCA
def test_brightness_shift_as_keras_2():
    from minidl.preprocessing.image import brightness_shift
    # Keras 3.15.1's apply_brightness_shift(x, factor, False) of these two images
    x = np.array([[[10.5, 200.0, 255.0]], [[0.0, 128.0, 64.0]]], np.float32)[None]
    np.testing.assert_array_equal(brightness_shift(x, [1.5]).reshape(-1),
                                  [15.0, 255.0, 255.0, 0.0, 192.0, 96.0])
    stretched = np.array([[[-10.0, 100.0, 300.0]], [[7.0, 55.5, 0.0]]], np.float32)[None]
    np.testing.assert_allclose(brightness_shift(stretched, [0.5]).reshape(-1),
                               [-10.0, 44.705883, 144.39215, -2.705882, 21.607843, -5.137255],
                               rtol=1e-6)
    # and Keras's code path (Pillow's Brightness on the uint8 image) on random images
    image_module = pytest.importorskip("PIL.Image")
    from PIL import ImageEnhance
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 255, (6, 5, 4, 3)).astype(np.float32)
    factors = rng.uniform(0.2, 1.8, 6)
    expected = np.stack([np.asarray(ImageEnhance.Brightness(image_module.fromarray(
        im.astype(np.uint8), "RGB")).enhance(f), np.float32) for im, f in zip(images, factors)])
    np.testing.assert_array_equal(brightness_shift(images.copy(), factors), expected)


def test_flow_with_brightness_range_repeats_and_stays_in_range():
    from minidl.preprocessing.image import ImageDataGenerator
    x = np.random.default_rng(1).uniform(20, 200, (12, 4, 4, 3)).astype(np.float32)
    generator = ImageDataGenerator(brightness_range=(0.5, 1.2))
    first = next(iter(generator.flow(x, batch_size=12, shuffle=False, seed=3)))[0]
    again = next(iter(generator.flow(x, batch_size=12, shuffle=False, seed=3)))[0]
    np.testing.assert_array_equal(first, again)
    ratio = first.sum(axis=(1, 2, 3)) / np.trunc(x).sum(axis=(1, 2, 3))
    assert np.all(ratio > 0.5 - 0.02) and np.all(ratio <= 1.2) and np.ptp(ratio) > 0.05
    with pytest.raises(ValueError, match="brightness_range must be None or a tuple or list of two"):
        ImageDataGenerator(brightness_range=0.5)


def test_zca_whitening_as_keras_2():
    from minidl.preprocessing.image import ImageDataGenerator
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (200, 2, 2, 3)).astype(np.float32)
    x[..., 1] = 0.5 * x[..., 0] + 0.5 * x[..., 1]           # correlated channels
    with pytest.warns(UserWarning, match="zca_whitening overrides featurewise_center"):
        generator = ImageDataGenerator(zca_whitening=True, rescale=1 / 255)
    with pytest.warns(UserWarning, match="overrides featurewise_std_normalization"):
        ImageDataGenerator(zca_whitening=True, featurewise_center=True,
                           featurewise_std_normalization=True)
    assert generator.featurewise_center
    with pytest.raises(ValueError, match="featurewise_center needs fit"):   # turned on by zca
        generator.standardize(x[:2].copy())
    generator.fit(x)
    # Keras 2's fit: SVD of the centred, flattened images; sqrt(n) / (s + zca_epsilon)
    scaled = x.astype(np.float64) / 255
    flat = (scaled - scaled.mean(axis=(0, 1, 2))).reshape(200, -1)
    u, s, _ = np.linalg.svd(flat.T, full_matrices=False)
    matrix = (u * (np.sqrt(200) / (s + 1e-6))) @ u.T
    np.testing.assert_allclose(generator.zca_whitening_matrix, matrix, rtol=1e-4, atol=1e-3)
    white = generator.standardize(x.copy()).reshape(200, -1)
    # whitened: the covariance of the training images is the identity
    np.testing.assert_allclose(white.T @ white / 200, np.eye(12), atol=1e-3)
    with pytest.raises(ValueError, match="zca_whitening was fit on images of 12 values"):
        generator.standardize(np.zeros((1, 3, 3, 3), np.float32))


def test_flow_with_zca_feeds_fit(active_backend):
    from minidl.preprocessing.image import ImageDataGenerator
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (32, 4, 4, 3)).astype(np.float32)
    y = rng.integers(0, 2, 32)
    with pytest.warns(UserWarning):
        generator = ImageDataGenerator(zca_whitening=True, brightness_range=(0.8, 1.2),
                                       horizontal_flip=True)
    generator.fit(x)
    inputs = layers.Input((4, 4, 3))
    model = Model(inputs, layers.Dense(2, activation="softmax")(layers.Flatten()(inputs)))
    model.compile("adam", "sparse_categorical_crossentropy")
    history = model.fit(generator.flow(x, y, batch_size=8, seed=1), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


# Keras 3.15.1: LayerNormalization(axis=[-2, -1], rms_scaling=True, epsilon=1e-3) with this
# gamma on x = arange(12).reshape(2, 2, 3) ** 1.5 (weights: gamma only, shape (2, 3))
RMS_GAMMA = [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
RMS_KERAS = [[[0.0, 0.50959, 2.16202], [-1.32396, 1.01919, 5.69742]],
             [[1.97177, 4.96944, 9.10724], [-3.62238, 2.12129, 9.78925]]]


def test_layer_normalization_rms_scaling_as_keras(active_backend):
    with pytest.warns(UserWarning, match="rms_scaling=True is deprecated"):
        layer = layers.LayerNormalization(axis=[-2, -1], rms_scaling=True, epsilon=1e-3)
    inputs = layers.Input((2, 3))
    model = Model(inputs, layer(inputs))
    model.compile("sgd", "mse")
    assert [(w.name, w.shape) for w in layer.weights] == [("gamma", (2, 3))]
    layer.set_weights([np.array(RMS_GAMMA)])
    x = (np.arange(12, dtype=np.float32).reshape(2, 2, 3) ** 1.5).astype(np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), RMS_KERAS, rtol=1e-5, atol=1e-5)
    with pytest.warns(UserWarning, match="deprecated"):
        assert layers.deserialize("LayerNormalization", layer.get_config()).rms_scaling


def test_layer_normalization_rms_scaling_gradient(float64_backend):
    with pytest.warns(UserWarning):
        layer = layers.LayerNormalization(rms_scaling=True)
    check_layer(layer, (3, 5))


def test_shared_dropout_and_broadcast_multiply_with_unknown_image_sizes(active_backend):
    inputs = layers.Input((None, None, 4))
    scale = layers.Reshape((1, 1, 4))(layers.GlobalAveragePooling2D()(inputs))
    excited = layers.multiply([inputs, layers.Dense(4, activation="sigmoid")(scale)])
    dropped = layers.Dropout(0.5, noise_shape=(None, 1, 1, 1))(excited)
    spatial = layers.SpatialDropout2D(0.3)(dropped)
    model = Model(inputs, layers.Dense(1)(layers.GlobalAveragePooling2D()(spatial)))
    model.compile("sgd", "mse")
    for hw in ((3, 5), (6, 2)):
        x = values((4,) + hw + (4,), seed=hw[0])
        loss = model.train_on_batch(x, np.ones((4, 1), np.float32))
        assert np.isfinite(loss)
        gate = 1 / (1 + np.exp(-(x.mean(axis=(1, 2)) @ model.layers[3].get_weights()[0]
                                 + model.layers[3].get_weights()[1])))
        probe = Model(inputs, excited)
        np.testing.assert_allclose(probe.predict(x, verbose=0), x * gate[:, None, None, :],
                                   rtol=1e-4, atol=1e-5)


# Keras 3.15.1: PReLU(shared_axes=[2]) on x = (arange(24).reshape(1, 2, 3, 4) - 12) / 3 with
# alpha = arange(8).reshape(2, 1, 4) * 0.1 + 0.05: the first 12 outputs (x < 0 there)
PRELU_KERAS = [-0.2, -0.55, -0.83333, -1.05, -0.13333, -0.35, -0.5, -0.58333, -0.06667, -0.15,
               -0.16667, -0.11667]


@pytest.mark.parametrize("shared_axes", [[3], [1, 3], [2], [1, 2]])
def test_prelu_any_shared_axes_as_keras(active_backend, shared_axes):
    layer = layers.PReLU(shared_axes=shared_axes)
    inputs = layers.Input((2, 3, 4))
    model = Model(inputs, layer(inputs))
    model.compile("sgd", "mse")
    shape = tuple(1 if i + 1 in shared_axes else d for i, d in enumerate((2, 3, 4)))
    assert layer.alpha.shape == shape                       # Keras's alpha shape
    alpha = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.1 + 0.05
    layer.set_weights([alpha])
    x = ((np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4) - 12) / 3).repeat(3, axis=0)
    x[1:] = values((2, 2, 3, 4), seed=5)
    y = model.predict(x, verbose=0)
    np.testing.assert_allclose(y, np.where(x > 0, x, alpha * x), rtol=1e-6)
    if shared_axes == [2]:
        np.testing.assert_allclose(y[0].reshape(-1)[:12], PRELU_KERAS, atol=1e-5)
    b = model.backend
    run = LayerRun(layer)
    run.forward(b.from_numpy(x), True)
    dout = values(x.shape, seed=6)
    dx = b.to_numpy(run.backward(b.from_numpy(dout)))
    # (sample 0 holds an exact 0, where the subgradient is a convention)
    np.testing.assert_allclose(dx[1:], np.where(x > 0, dout, alpha * dout)[1:], rtol=1e-5)
    axes = tuple(i for i, d in enumerate((1,) + shape) if d == 1)
    np.testing.assert_allclose(b.to_numpy(layer.alpha.grad),
                               np.where(x > 0, 0, x * dout).sum(axis=axes).reshape(shape),
                               rtol=1e-4, atol=1e-4)


def test_prelu_shared_axes_gradient(float64_backend):
    check_layer(layers.PReLU(alpha_initializer="ones", shared_axes=[3]), (2, 3, 2))
    check_layer(layers.PReLU(alpha_initializer="ones", shared_axes=[1, 3]), (2, 3, 2))
