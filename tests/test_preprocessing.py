"""The preprocessing layers against plain numpy formulas of Keras 3's semantics, on every backend.

Deterministic layers are compared with the formula; random ones through cases whose outcome a
formula gives exactly (90-degree rotations, whole-pixel shifts, 2x zooms, flips), through the
transforms they drew (within their ranges, half the images flipped) and through
reproducibility: same seed, same run; a resumed run equals an uninterrupted one.
"""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend
from layer_runs import LayerRun

BACKENDS = minidl.available_backends()


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """The test runs once with each usable backend active (numpy again afterwards)."""
    request.addfinalizer(lambda: minidl.set_backend("numpy"))
    minidl.set_backend(request.param)
    minidl.set_seed(0)
    return request.param


def images(n=4, h=8, w=8, c=3, seed=0, scale=1.0):
    return (np.random.default_rng(seed).uniform(0, 1, (n, h, w, c)) * scale).astype(np.float32)


def run(layer, x, training, seed=12345, dout=None):
    """(output, dx or None) of one forward (and backward) of `layer` on the active backend."""
    b = get_backend()
    layer.build_once(tuple(x.shape[1:]))
    if layer.backend is None:
        layer.attach(b)
    layer.step_seed = seed
    run = _RUNS[id(layer)] = LayerRun(layer)
    y = run.forward(b.from_numpy(x), training)
    result = b.to_numpy(y)
    dx = None if dout is None else b.to_numpy(run.backward(b.from_numpy(dout)))
    return result, dx


_RUNS = {}   # id(layer) -> its latest LayerRun (whose call holds the drawn transforms)


def drawn_transforms(layer):
    return get_backend().to_numpy(_RUNS[id(layer)].call.transforms)


# ------------------------------------------------------------------ deterministic layers
def test_rescaling_and_its_gradient(active_backend):
    x = images(scale=255)
    y, dx = run(layers.Rescaling(1 / 127.5, offset=-1), x, False, dout=np.ones_like(x))
    np.testing.assert_allclose(y, x / 127.5 - 1, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dx, np.full_like(x, 1 / 127.5), rtol=1e-6)
    y, _ = run(layers.Rescaling([1, 2, 3], offset=[0, 1, 2]), x, False)
    np.testing.assert_allclose(y, x * [1, 2, 3] + [0, 1, 2], rtol=1e-6)


def test_normalization_adapt_given_and_invert(active_backend):
    x = images(n=10, scale=9) + 3
    norm = layers.Normalization()
    norm.adapt(x)
    y, _ = run(norm, x, False)
    mean, std = x.reshape(-1, 3).mean(0), x.reshape(-1, 3).std(0)
    np.testing.assert_allclose(y, (x - mean) / std, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(norm.get_weights()[0], mean, rtol=1e-5)
    inv, _ = run(layers.Normalization(mean=2.0, variance=4.0, invert=True), x, False)
    np.testing.assert_allclose(inv, x * 2 + 2, rtol=1e-6)
    whole = layers.Normalization(axis=None)
    whole.adapt([x[:5], (x[5:], None)])
    np.testing.assert_allclose(run(whole, x, False)[0], (x - x.mean()) / x.std(), rtol=1e-4, atol=1e-5)


def test_normalization_errors():
    with pytest.raises(ValueError, match="Normalization.*both mean and variance"):
        layers.Normalization(mean=1.0)
    with pytest.raises(ValueError, match="axis must be -1"):
        layers.Normalization(axis=1).build_once((4, 4, 3))


def tf_resize_bilinear(x, oh, ow):
    """TensorFlow's resize_bilinear with half-pixel centres (Keras's Resizing), written out."""
    n, h, w, c = x.shape
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            y = (i + 0.5) * h / oh - 0.5
            xx = (j + 0.5) * w / ow - 0.5
            y0, x0 = int(np.floor(y)), int(np.floor(xx))
            fy, fx = y - y0, xx - x0
            ya, yb = min(max(y0, 0), h - 1), min(max(y0 + 1, 0), h - 1)
            xa, xb = min(max(x0, 0), w - 1), min(max(x0 + 1, 0), w - 1)
            out[:, i, j] = ((1 - fy) * ((1 - fx) * x[:, ya, xa] + fx * x[:, ya, xb])
                            + fy * ((1 - fx) * x[:, yb, xa] + fx * x[:, yb, xb]))
    return out


@pytest.mark.parametrize("size", [(5, 3), (12, 20), (8, 8)])
def test_resizing_bilinear_and_nearest(active_backend, size):
    x = images(h=8, w=6)
    y, _ = run(layers.Resizing(*size), x, False)
    np.testing.assert_allclose(y, tf_resize_bilinear(x, *size), rtol=1e-5, atol=1e-6)
    y, _ = run(layers.Resizing(*size, interpolation="nearest"), x, False)
    rows = np.minimum(np.floor((np.arange(size[0]) + 0.5) * 8 / size[0]).astype(int), 7)
    cols = np.minimum(np.floor((np.arange(size[1]) + 0.5) * 6 / size[1]).astype(int), 5)
    np.testing.assert_array_equal(y, x[:, rows][:, :, cols])


def test_resizing_crop_to_aspect_ratio(active_backend):
    x = images(h=10, w=6)
    y, _ = run(layers.Resizing(3, 3, crop_to_aspect_ratio=True), x, False)
    np.testing.assert_allclose(y, tf_resize_bilinear(x[:, 2:8], 3, 3), rtol=1e-5, atol=1e-6)


def adjoint_gap(layer, x, training):
    """<forward(x), g> - <x, backward(g)>, relative: 0 when backward is forward's adjoint."""
    g = images(n=x.shape[0], h=layer.output_shape[0] if layer.built else 1, seed=9)
    y, _ = run(layer, x, training)
    g = np.random.default_rng(9).standard_normal(y.shape).astype(np.float32)
    _, dx = run(layer, x, training, dout=g)
    return abs(float((y * g).sum()) - float((x * dx).sum())) / float(np.abs(y * g).sum())


@pytest.mark.parametrize("make", [lambda: layers.Resizing(5, 11), lambda: layers.CenterCrop(4, 5),
                                  lambda: layers.Resizing(4, 4, crop_to_aspect_ratio=True),
                                  lambda: layers.RandomRotation(0.2, fill_mode="constant"),
                                  lambda: layers.RandomZoom(0.3), lambda: layers.RandomCrop(5, 6)])
def test_backward_is_the_adjoint(active_backend, make):
    assert adjoint_gap(make(), images(h=8, w=7), True) < 1e-5


def test_center_crop(active_backend):
    x = images(h=9, w=8)
    y, dx = run(layers.CenterCrop(4, 5), x, False, dout=np.ones((4, 4, 5, 3), np.float32))
    np.testing.assert_array_equal(y, x[:, 2:6, 1:6])
    assert dx.sum() == 4 * 4 * 5 * 3 and dx[:, 2:6, 1:6].sum() == dx.sum()
    y, _ = run(layers.CenterCrop(12, 4), x, False)   # too small: crop to 3:1, then resize
    np.testing.assert_allclose(y, tf_resize_bilinear(x[:, :, 2:5], 12, 4), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ random layers
def test_random_layers_are_identity_outside_training(active_backend):
    x = images()
    for layer in (layers.RandomFlip(), layers.RandomRotation(0.3), layers.RandomZoom(0.3),
                  layers.RandomTranslation(0.2, 0.2), layers.RandomContrast(0.5),
                  layers.RandomBrightness(0.5)):
        np.testing.assert_array_equal(run(layer, x, False)[0], x)


def test_random_flip_flips_about_half(active_backend):
    x = images(n=400, h=3, w=4, c=1)
    y, _ = run(layers.RandomFlip("horizontal_and_vertical"), x, True)
    kinds = {"none": x, "h": x[:, :, ::-1], "v": x[:, ::-1], "hv": x[:, ::-1, ::-1]}
    counts = {k: int(np.all(y == v, axis=(1, 2, 3)).sum()) for k, v in kinds.items()}
    assert sum(counts.values()) == 400
    assert all(60 < c < 140 for c in counts.values()), counts
    y, _ = run(layers.RandomFlip("horizontal"), x, True)
    left_right = np.all(y == x[:, :, ::-1], axis=(1, 2, 3))
    assert np.all(left_right | np.all(y == x, axis=(1, 2, 3))) and 160 < left_right.sum() < 240


def shifted(x, dy, dx, fill_mode):
    """x shifted by whole pixels with Keras's fill modes, written with np.pad."""
    n, h, w, c = x.shape
    p = max(abs(dy), abs(dx))
    mode = {"reflect": "symmetric", "wrap": "wrap", "nearest": "edge", "constant": "constant"}[fill_mode]
    padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)), mode=mode)
    return padded[:, p - dy:p - dy + h, p - dx:p - dx + w]


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "nearest", "constant"])
def test_random_translation_whole_pixels(active_backend, fill_mode):
    x = images(h=8, w=10)
    layer = layers.RandomTranslation((0.25, 0.25), (-0.3, -0.3), fill_mode=fill_mode,
                                     interpolation="nearest")
    y, _ = run(layer, x, True)
    np.testing.assert_allclose(y, shifted(x, 2, -3, fill_mode), atol=1e-6)


def test_random_translation_range(active_backend):
    layer = layers.RandomTranslation(0.2, (0.0, 0.5))
    run(layer, images(n=300, h=10, w=20, c=1), True)
    t = drawn_transforms(layer)
    assert np.all(np.abs(t[:, 5]) <= 2.0) and np.all((t[:, 2] <= 0) & (t[:, 2] >= -10.0))
    assert t[:, 5].std() > 0.8 and np.all(t[:, [0, 4]] == 1)


def test_random_rotation_quarter_turn_and_range(active_backend):
    x = images(h=6, w=6)
    y, _ = run(layers.RandomRotation((0.25, 0.25), interpolation="nearest"), x, True)
    np.testing.assert_array_equal(y, np.rot90(x, k=1, axes=(1, 2)))   # counter-clockwise, as Keras
    layer = layers.RandomRotation(0.1)
    run(layer, images(n=200), True)
    t = drawn_transforms(layer)
    angle = np.arctan2(t[:, 3], t[:, 0])
    assert np.all(np.abs(angle) <= 0.2 * np.pi + 1e-5) and angle.std() > 0.25
    np.testing.assert_allclose(t[:, 0] ** 2 + t[:, 3] ** 2, 1, rtol=1e-5)


def test_random_zoom_in_by_two(active_backend):
    x = images(h=5, w=5)
    y, _ = run(layers.RandomZoom((-0.5, -0.5), interpolation="nearest"), x, True)
    # Keras: input point = 0.5 * p + 1 for p = 0..4, i.e. pixels 1, 1.5, 2, 2.5, 3 (half up)
    idx = np.floor(0.5 * np.arange(5) + 1 + 0.5).astype(int)
    np.testing.assert_array_equal(y, x[:, idx][:, :, idx])
    layer = layers.RandomZoom((-0.2, 0.3), width_factor=(0.1, 0.1))
    run(layer, images(n=100), True)
    t = drawn_transforms(layer)
    assert np.all((t[:, 4] >= 0.8) & (t[:, 4] <= 1.3)) and np.allclose(t[:, 0], 1.1)


def test_random_crop_training_and_inference(active_backend):
    x = images(n=3, h=9, w=7)
    layer = layers.RandomCrop(4, 5)
    corners = set()
    for seed in range(12):
        y, _ = run(layer, x, True, seed=seed)
        t = drawn_transforms(layer)
        top, left = int(t[0, 5]), int(t[0, 2])
        assert 0 <= top <= 5 and 0 <= left <= 2 and np.all(t[:, [2, 5]] == t[0, [2, 5]])
        np.testing.assert_array_equal(y, x[:, top:top + 4, left:left + 5])
        corners.add((top, left))
    assert len(corners) > 4
    y, _ = run(layer, x, False)      # inference: crop to 4:5 (a 5x7 window), resize
    np.testing.assert_allclose(y, tf_resize_bilinear(x[:, 2:7], 4, 5), rtol=1e-5, atol=1e-6)


def test_random_contrast_formula(active_backend):
    x = images(n=50, scale=255)
    y, _ = run(layers.RandomContrast((0.2, 0.5)), x, True)
    mean = x.mean(axis=(1, 2), keepdims=True)
    # the factor of each image from an unclipped pixel that lies far from its mean
    unclipped_pixels = ((y > 0) & (y < 255)).reshape(50, -1)
    i = np.where(unclipped_pixels, np.abs(x - mean).reshape(50, -1), -1).argmax(axis=1)
    dev = (x - mean).reshape(50, -1)[np.arange(50), i]
    factor = ((y - mean).reshape(50, -1)[np.arange(50), i]) / dev
    unclipped = (x - mean) * factor[:, None, None, None] + mean
    np.testing.assert_allclose(y, np.clip(unclipped, 0, 255), rtol=1e-4, atol=1e-2)
    inside = np.all((unclipped > 0) & (unclipped < 255), axis=(1, 2, 3))
    assert np.all((factor[inside] >= 0.8 - 1e-4) & (factor[inside] <= 1.5 + 1e-4)) and inside.sum() > 5


def test_random_brightness_formula(active_backend):
    x = images(n=60, scale=2) - 1
    y, _ = run(layers.RandomBrightness((-0.1, 0.3), value_range=(-1, 1)), x, True)
    delta = np.median((y - x).reshape(60, -1), axis=1)
    np.testing.assert_allclose(y, np.clip(x + delta[:, None, None, None], -1, 1), atol=1e-5)
    assert np.all((delta >= -0.2 - 1e-5) & (delta <= 0.6 + 1e-5)) and delta.std() > 0.1


def test_random_draws_are_the_same_on_every_backend():
    x = images(n=32, h=7, w=9)
    results = []
    for name in BACKENDS:
        minidl.set_backend(name)
        results.append([run(make(), x, True, seed=77)[0] for make in (
            lambda: layers.RandomRotation(0.2), lambda: layers.RandomZoom(0.2, 0.3),
            lambda: layers.RandomTranslation(0.2, 0.2), lambda: layers.RandomFlip(),
            lambda: layers.RandomContrast(0.4), lambda: layers.RandomBrightness(0.2))])
    minidl.set_backend("numpy")
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make, message", [
    (lambda: layers.RandomTranslation(1.5, 0.1), "height_factor must be within"),
    (lambda: layers.RandomZoom((0.3, 0.1)), "lower <= upper"),
    (lambda: layers.RandomContrast(-0.1), "factor must be within"),
    (lambda: layers.RandomRotation(0.1, fill_mode="mirror"), "fill_mode must be one of"),
    (lambda: layers.RandomFlip("diagonal"), "mode must be one of"),
    (lambda: layers.Resizing(0, 3), "height must be a positive int"),
    (lambda: layers.RandomBrightness(0.1, value_range=(1, 0)), "value_range must have low < high"),
])
def test_bad_arguments_name_the_layer(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# ------------------------------------------------------------------ in a model
def augmenting_model(seed=None):
    return minidl.Sequential([
        layers.Input((10, 10, 3)), layers.Rescaling(1 / 255), layers.RandomFlip(seed=seed),
        layers.RandomRotation(0.1), layers.RandomZoom(0.1), layers.RandomTranslation(0.1, 0.1),
        layers.RandomContrast(0.2, value_range=(0, 1)), layers.RandomBrightness(0.1, value_range=(0, 1)),
        layers.RandomCrop(8, 8), layers.Conv2D(4, 3, activation="relu"), layers.Flatten(),
        layers.Dense(3, activation="softmax")])


def fitted(epochs_per_call, seed=None):
    minidl.set_seed(3)
    x, y = images(n=48, h=10, w=10, scale=255, seed=1), np.arange(48) % 3
    model = augmenting_model(seed)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    done = 0
    for epochs in epochs_per_call:
        model.fit(x, y, batch_size=16, epochs=done + epochs, initial_epoch=done, verbose=0)
        done += epochs
    return model.get_weights()


def test_augmented_training_repeats_and_resumes_exactly(active_backend):
    once = fitted([3])
    for a, b in zip(once, fitted([3])):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(once, fitted([1, 2])):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(once, fitted([3], seed=5)))


def test_config_round_trip():
    for layer in (layers.RandomZoom(0.2, (0.1, 0.3), fill_mode="wrap", seed=4), layers.Resizing(3, 4, "nearest"),
                  layers.RandomContrast(0.3), layers.Normalization(mean=[1, 2], variance=[3, 4]),
                  layers.Rescaling(0.5, 1.0), layers.CenterCrop(2, 3), layers.RandomCrop(2, 2, seed=1)):
        clone = layers.deserialize(type(layer).__name__, layer.get_config())
        assert {k: v for k, v in clone.get_config().items() if k != "name"} == \
            {k: v for k, v in layer.get_config().items() if k != "name"}
