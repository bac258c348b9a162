"""Keras 3's augmentation layers that minidl added for issue 24 (preprocessing_color.py,
preprocessing_jitter.py, preprocessing_shear.py): against real Keras 3.15.1's outputs in their
deterministic settings, or each of its two outcomes where a coin remains
(keras_reference/augment_reference.npz), on every backend; the same draws on every backend;
the identity outside training; the gradients (straight through, or the adjoint for RandomShear);
the distributions of the random settings; the cpu kernels against their reference twins on
each ISA path; errors and configs."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend
from minidl.backends.contract.images import COLOR_KINDS

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_reference import CASES, SHEARS  # noqa: E402
from layer_runs import LayerRun

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_reference.npz"))


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """The test runs once with each usable backend active (numpy again afterwards)."""
    request.addfinalizer(lambda: minidl.set_backend("numpy"))
    minidl.set_backend(request.param)
    return request.param


def images(n=4, h=8, w=8, c=3, seed=0, scale=255.0):
    return (np.random.default_rng(seed).uniform(0, 1, (n, h, w, c)) * scale).astype(np.float32)


def run(layer, x, training, seed=12345, dout=None):
    """(output, dx or None) of one forward (and backward) of `layer` on the active backend."""
    b = get_backend()
    layer.build_once(tuple(x.shape[1:]))
    if layer.backend is None:
        layer.attach(b)
    layer.step_seed = seed
    run = LayerRun(layer)
    y = b.to_numpy(run.forward(b.from_numpy(x), training))
    dx = None if dout is None else b.to_numpy(run.backward(b.from_numpy(dout)))
    return y, dx


RANDOM_LAYERS = [
    lambda: layers.RandomGrayscale(),
    lambda: layers.RandomInvert(),
    lambda: layers.RandomPosterization(6),
    lambda: layers.Solarization(0.3, 0.8),
    lambda: layers.RandomColorDegeneration(0.9),
    lambda: layers.RandomSaturation(0.8),
    lambda: layers.RandomHue(0.7),
    lambda: layers.RandomColorJitter(brightness_factor=0.2, contrast_factor=0.3, saturation_factor=0.5,
                                     hue_factor=0.4),
]


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_keras_in_its_deterministic_settings(active_backend, case):
    name, kwargs, source = CASES[case]
    y, _ = run(getattr(layers, name)(**kwargs), REFERENCE[source], True)
    scale = 255.0 if source == "x" else 1.0
    np.testing.assert_allclose(y, REFERENCE[case], rtol=1e-5, atol=1e-4 * scale)


def assert_either_outcome(y, case, atol):
    """Each image of y is Keras's "<case>_plus" or "<case>_minus" outcome; both occur."""
    x = REFERENCE["x"]
    signs = []
    for index, image in enumerate(y):
        plus, minus = (REFERENCE[f"{case}_{key}"][index % len(x)] for key in ("plus", "minus"))
        matches = [np.allclose(image, ref, rtol=1e-5, atol=atol) for ref in (plus, minus)]
        assert any(matches), f"image {index} is neither of Keras's {case} outcomes"
        signs.append(matches[0])
    assert 0 < sum(signs) < len(signs)


@pytest.mark.parametrize("case", sorted(SHEARS))
def test_random_shear_matches_keras_either_way(active_backend, case):
    y, dx = run(layers.RandomShear(**SHEARS[case]), np.concatenate([REFERENCE["x"]] * 8), True,
                dout=np.ones((24,) + REFERENCE["x"].shape[1:], np.float32))
    assert_either_outcome(y, case, atol=2e-2)
    assert dx.shape == (24,) + REFERENCE["x"].shape[1:]


def test_random_hue_shifts_by_either_sign_as_keras(active_backend):
    y, _ = run(layers.RandomHue((0.4, 0.4)), np.concatenate([REFERENCE["x"]] * 8), True)
    assert_either_outcome(y, "hue", atol=2e-3)


def test_random_shear_gradient_is_the_adjoint_and_inference_the_identity(active_backend):
    x = images(n=6, h=7, w=9)
    dout = np.random.default_rng(2).normal(size=x.shape).astype(np.float32)
    layer = layers.RandomShear(0.4, 0.3, fill_mode="constant")
    y, dx = run(layer, x, True, dout=dout)
    np.testing.assert_allclose(np.vdot(y, dout), np.vdot(x, dx), rtol=1e-4)
    y, dx = run(layers.RandomShear(0.4, 0.3), x, False, dout=dout)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)


@pytest.mark.parametrize("make", RANDOM_LAYERS)
def test_identity_outside_training_and_straight_through_gradient(active_backend, make):
    x = images()
    dout = np.random.default_rng(1).normal(size=x.shape).astype(np.float32)
    y, dx = run(make(), x, False, dout=dout)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)
    y, dx = run(make(), x, True, dout=dout)
    assert not np.array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)


def test_random_draws_are_the_same_on_every_backend():
    x = images(n=24, h=5, w=7)
    results = []
    for name in BACKENDS:
        minidl.set_backend(name)
        results.append([run(make(), x, True, seed=77)[0]
                        for make in RANDOM_LAYERS + [lambda: layers.RandomShear(0.3, 0.2)]])
    minidl.set_backend("numpy")
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-3)


def changed_images(y, x):
    return [not np.array_equal(a, b) for a, b in zip(y, x)]


def test_probabilities_and_ranges(active_backend):
    x = images(n=400, h=2, w=2)
    gray = run(layers.RandomGrayscale(0.25), x, True)[0]
    grayed = np.array(changed_images(gray, x))
    assert 0.17 < grayed.mean() < 0.33
    assert np.allclose(gray[grayed], gray[grayed][..., :1], atol=1e-3)   # every channel equal
    # RandomInvert(factor=1.0): p ~ U(0, 1), so half the images on average; (0, 0.2): a tenth
    for factor, expected in ((1.0, 0.5), (0.2, 0.1)):
        y = run(layers.RandomInvert(factor), x, True)[0]
        inverted = np.array(changed_images(y, x))
        assert abs(inverted.mean() - expected) < 0.07
        np.testing.assert_allclose(y[inverted], 255 - x[inverted], atol=1e-4)
    # RandomPosterization(4): bits ~ randint [1, 4), each value a multiple of 2**(8 - bits)
    y = run(layers.RandomPosterization(4), x, True)[0]
    steps = [max(2 ** (8 - b) for b in (1, 2, 3) if np.all(np.mod(img, 2 ** (8 - b)) == 0))
             for img in np.rint(y)]
    assert set(steps) == {32, 64, 128}
    # RandomColorDegeneration(0.5): f ~ U(-0.5, 0.5); each image is x + f (gray - x)
    y = run(layers.RandomColorDegeneration(0.5), x, True)[0]
    gray = 0.2989 * x[..., :1] + 0.587 * x[..., 1:2] + 0.114 * x[..., 2:]
    f = np.array([np.sum((b - a) * (g - a)) / np.sum((g - a) ** 2) for a, b, g in zip(x, y, gray)])
    unclipped = np.all((y > 0) & (y < 255), axis=(1, 2, 3))
    assert np.all(np.abs(f[unclipped]) <= 0.5 + 1e-4) and f[unclipped].std() > 0.2


def test_solarization_inverts_above_its_threshold(active_backend):
    x = images(n=200, h=3, w=3)
    y = run(layers.Solarization(threshold_factor=(1.0, 1.0)), x, True)[0]   # threshold ~ U(1, 255)
    inverted = np.isclose(y, 255 - x, atol=1e-3)
    assert np.all(inverted | np.isclose(y, x, atol=1e-3))
    for img, flags in zip(x, inverted):   # one threshold per image splits its pixels
        assert not flags.any() or not (~flags).any() or img[flags].min() >= img[~flags].max()
    assert 0.2 < inverted.mean() < 0.8


KERNEL_CASES = [("grayscale", (0.5,)), ("invert", (0.0, 1.0)), ("posterize", (1.0, 8.0)),
                ("solarize", (0.1, 0.5, 0.2, 0.9)), ("degenerate", (-0.8, 0.8)),
                ("saturation", (-0.5, 0.7)), ("hue", (0.0, 0.9))]


@pytest.mark.parametrize("kind, params, channels", [
    (kind, params, c) for kind, params in KERNEL_CASES for c in (1, 3)
    if c == 3 or kind not in ("saturation", "hue")])   # the HSV kinds take RGB only
def test_cpu_kernel_matches_its_reference_twin(isa, kind, params, channels):
    from minidl._cpu_kernels import ffi, lib
    x = images(n=9, h=5, w=6, c=channels, scale=2.0) - 0.5
    code = COLOR_KINDS[kind]
    p = ffi.new("float[4]", list(params) + [0.0] * (4 - len(params)))
    fast, reference = np.empty_like(x), np.empty_like(x)
    ptr = lambda a: ffi.cast("float *", a.ctypes.data)   # noqa: E731
    lib.minidl_random_color_forward(ptr(fast), ptr(x), p, code, -0.5, 1.5, 99, 9, 30, channels)
    lib.minidl_random_color_reference(ptr(reference), ptr(x), p, code, -0.5, 1.5, 99, 9, 30, channels)
    np.testing.assert_allclose(fast, reference, rtol=1e-6, atol=1e-6)
    aliased = x.copy()   # out may alias x
    lib.minidl_random_color_forward(ptr(aliased), ptr(aliased), p, code, -0.5, 1.5, 99, 9, 30, channels)
    np.testing.assert_array_equal(aliased, fast)


@pytest.mark.parametrize("make, message", [
    (lambda: layers.RandomGrayscale(1.5), "factor should be between 0 and 1"),
    (lambda: layers.RandomInvert(-0.5), r"factor must be a number .* range \[0, 1\]"),
    (lambda: layers.RandomPosterization(9), r"range \[1, 8\]"),
    (lambda: layers.RandomPosterization((1, 2, 3)), "factor must be a number"),
    (lambda: layers.Solarization(threshold_factor=2), "threshold_factor"),
    (lambda: layers.RandomColorDegeneration("a"), "factor"),
    (lambda: layers.RandomInvert(value_range=(1, 0)), "value_range must have low < high"),
    (lambda: layers.RandomGrayscale(data_format="channels_first"), "channels_last"),
    (lambda: layers.RandomShear(x_factor=-0.2), r"x_factor must be a number or a pair of numbers in \[0, 1\]"),
    (lambda: layers.RandomShear(fill_mode="mirror"), "fill_mode must be one of"),
])
def test_bad_arguments_name_the_layer(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_grayscale_layers_refuse_other_than_1_or_3_channels():
    for layer in (layers.RandomGrayscale(), layers.RandomColorDegeneration(0.2)):
        with pytest.raises(ValueError, match=r"1 or 3 channels .*\(None, 4, 4, 2\)"):
            run(layer, images(c=2, h=4, w=4), True)
    for layer in (layers.RandomSaturation(0.2), layers.RandomHue(0.2)):
        with pytest.raises(ValueError, match=r"3 channels .*\(None, 4, 4, 1\)"):
            run(layer, images(c=1, h=4, w=4), True)


def test_config_round_trip_and_keras_factors():
    assert layers.RandomInvert(0.3).get_config()["factor"] == [0.0, 0.3]
    assert layers.RandomPosterization(4).get_config()["factor"] == [1.0, 4.0]
    assert layers.RandomColorDegeneration(0.5).get_config()["factor"] == [-0.5, 0.5]
    assert layers.Solarization(0.2).get_config()["addition_factor"] == [0.0, 0.2]
    for make in RANDOM_LAYERS + [lambda: layers.RandomShear(0.2, (0.1, 0.3), "nearest", "wrap"),
                                 lambda: layers.AutoContrast((0, 1))]:
        layer = make()
        clone = layers.deserialize(type(layer).__name__, layer.get_config())
        assert {k: v for k, v in clone.get_config().items() if k != "name"} == \
            {k: v for k, v in layer.get_config().items() if k != "name"}


def fitted(epochs_per_call, seed=None):
    minidl.set_seed(3)
    x, y = images(n=32, h=6, w=6, seed=1), np.arange(32) % 3
    model = minidl.Sequential([
        layers.Input((6, 6, 3)), layers.RandomGrayscale(seed=seed), layers.RandomInvert(),
        layers.RandomPosterization(5), layers.Solarization(0.1, 0.9),
        layers.RandomColorDegeneration(0.5), layers.RandomSaturation(0.3), layers.RandomHue(0.2),
        layers.RandomShear(0.2, 0.1), layers.Rescaling(1 / 255),
        layers.Conv2D(4, 3, activation="relu"), layers.Flatten(), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    done = 0
    for epochs in epochs_per_call:
        model.fit(x, y, batch_size=16, epochs=done + epochs, initial_epoch=done, verbose=0)
        done += epochs
    return model.get_weights()


def test_augmented_training_repeats_and_resumes_exactly(active_backend):
    once = fitted([2])
    for a, b in zip(once, fitted([1, 1])):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(once, fitted([2], seed=5)))
