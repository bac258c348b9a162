"""Keras 3's Equalization, ContrastLimitedAdaptiveHistogramEqualization and RandomPerspective
(preprocessing_equalize.py, preprocessing_perspective.py): against real Keras 3.15.1's outputs
(keras_reference/augment_b_reference.npz: exact for the two deterministic layers; for
RandomPerspective, its resampling of the corners Keras drew), on every backend; the transforms
against the homography Keras solves; the same draws on every backend; training / inference
behaviour; gradients; the cpu kernels against their reference twins; errors and configs."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend
from minidl.backends.numpy_ops.images import sample_uniforms
from minidl.backends.numpy_ops.perspective import corner_points, perspective_rows

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_b_reference import EQUALIZE, PERSPECTIVE  # noqa: E402
from layer_runs import LayerRun  # noqa: E402

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_b_reference.npz"))


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """The test runs once with each usable backend active (numpy again afterwards)."""
    request.addfinalizer(lambda: minidl.set_backend("numpy"))
    minidl.set_backend(request.param)
    return request.param


def images(n=4, h=8, w=8, c=3, seed=0):
    return np.floor(np.random.default_rng(seed).uniform(0, 256, (n, h, w, c))).astype(np.float32)


def run(layer, x, training, seed=12345, dout=None):
    """(output, dx or None) of one forward (and backward) of `layer` on the active backend."""
    b = get_backend()
    layer.build_once(tuple(x.shape[1:]))
    if layer.backend is None:
        layer.attach(b)
    layer.step_seed = seed
    call = LayerRun(layer)
    y = b.to_numpy(call.forward(b.from_numpy(x), training))
    dx = None if dout is None else b.to_numpy(call.backward(b.from_numpy(dout)))
    return y, dx


@pytest.mark.parametrize("case", sorted(EQUALIZE))
def test_matches_keras_exactly(active_backend, case):
    name, kwargs, source = EQUALIZE[case]
    y, _ = run(getattr(layers, name)(**kwargs), REFERENCE[source], True)
    np.testing.assert_array_equal(y, REFERENCE[case])


@pytest.mark.parametrize("case", sorted(PERSPECTIVE))
def test_perspective_resampling_matches_keras(active_backend, case):
    """Keras's output for the corners it drew == image_transform_forward under the row of
    perspective_rows (the homography Keras solves) with the constant fill."""
    kwargs = PERSPECTIVE[case]
    x = REFERENCE["big"]
    b = get_backend()
    rows = perspective_rows(REFERENCE[f"{case}_end"], *x.shape[1:3]).astype(np.float32)
    out = b.from_numpy(np.zeros_like(x))
    b.image_transform_forward(out, b.from_numpy(x), b.from_numpy(rows),
                              kwargs.get("interpolation", "bilinear"), "constant",
                              kwargs.get("fill_value", 0.0))
    np.testing.assert_allclose(b.to_numpy(out), REFERENCE[case], rtol=1e-5, atol=5e-3)


def test_perspective_transforms_are_keras_homographies_of_the_drawn_corners(active_backend):
    """Each row maps its displaced corners back onto the image's corners (Keras's
    compute_homography_matrix), the displacements being the documented draws; rows not
    transformed are the identity, and about the drawn probability of them are transformed."""
    b = get_backend()
    n, h, w, scale, seed = 400, 32, 24, 0.8, 2 ** 33 + 7
    t = b.from_numpy(np.zeros((n, 8), np.float32))
    b.image_perspective_transforms(t, (0.0, 1.0), scale, h, w, seed)
    rows = b.to_numpy(t)
    coin = sample_uniforms(n, seed, 0)
    applied = coin[:, 0] < coin[:, 1]
    u = np.concatenate([sample_uniforms(n, seed, 1), sample_uniforms(n, seed, 2)], axis=1)
    start = corner_points(h, w).astype(np.float32)
    end = start + start * (np.float32(-0.5 * scale) + np.float32(scale) * u).reshape(n, 4, 2)
    for s in range(n):
        if not applied[s]:
            np.testing.assert_array_equal(rows[s], [1, 0, 0, 0, 1, 0, 0, 0])
            continue
        a0, a1, a2, b0, b1, b2, c0, c1 = rows[s].astype(np.float64)
        ex, ey = end[s, :, 0], end[s, :, 1]
        k = c0 * ex + c1 * ey + 1
        np.testing.assert_allclose((a0 * ex + a1 * ey + a2) / k, start[:, 0], atol=2e-3)
        np.testing.assert_allclose((b0 * ex + b1 * ey + b2) / k, start[:, 1], atol=2e-3)
    assert 0.4 < applied.mean() < 0.6   # factor (0, 1): P(threshold < probability) = 1/2


def test_perspective_draws_are_the_same_on_every_backend():
    x = images(6, 11, 13, 2, seed=3)
    results = []
    for name in BACKENDS:
        minidl.set_backend(name)
        try:
            results.append(run(layers.RandomPerspective(factor=0.8, scale=0.6), x, True, seed=99)[0])
        finally:
            minidl.set_backend("numpy")
    for y in results[1:]:
        np.testing.assert_allclose(y, results[0], rtol=1e-4, atol=0.05)


def test_perspective_probability_settings(active_backend):
    x = images(8, 9, 10, 3, seed=4)
    never, _ = run(layers.RandomPerspective(factor=(0.0, 0.0)), x, True)
    np.testing.assert_array_equal(never, x)
    still, _ = run(layers.RandomPerspective(factor=(1.0, 1.0), scale=0.0), x, True)
    np.testing.assert_allclose(still, x, atol=1e-3)
    always, _ = run(layers.RandomPerspective(factor=(1.0, 1.0)), x, True)
    assert all(np.abs(always[i] - x[i]).max() > 1 for i in range(len(x)))


def test_perspective_gradient_is_the_adjoint_and_inference_the_identity(active_backend):
    x = images(3, 9, 7, 2, seed=5)
    dout = np.random.default_rng(6).standard_normal(x.shape).astype(np.float32)
    layer = layers.RandomPerspective(factor=(1.0, 1.0), fill_value=0.0)
    y, dx = run(layer, x, True, dout=dout)
    # resampling with a zero fill is linear: <T x, g> == <x, T* g>
    np.testing.assert_allclose(np.sum(y * dout), np.sum(x * dx), rtol=1e-4)
    y, dx = run(layers.RandomPerspective(), x, False, dout=dout)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)


def test_training_behaviour_and_straight_through_gradients(active_backend):
    x = images(2, 12, 10, 3, seed=7)
    dout = np.ones_like(x)
    y, dx = run(layers.Equalization(), x, False, dout=dout)   # Keras equalizes in training only
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)
    y, dx = run(layers.Equalization(), x, True, dout=dout)
    assert np.abs(y - x).max() > 1
    np.testing.assert_array_equal(dx, dout)
    # a low-contrast image, stretched (the default limit, truncated to 0 for tiles of under
    # 64 pixels, flattens the histograms: then CLAHE keeps the image much as it is)
    x = np.floor(x / 8) + 100
    clahe = layers.ContrastLimitedAdaptiveHistogramEqualization(clip_limit=40.0, tile_grid_size=(2, 2))
    inference, _ = run(clahe, x, False)                       # CLAHE runs in inference too
    training, dx = run(clahe, x, True, dout=dout)
    np.testing.assert_array_equal(inference, training)
    assert np.abs(training - x).max() > 1
    np.testing.assert_array_equal(dx, dout)


def test_equalization_spreads_levels_over_the_batch():
    """One histogram per channel over the whole batch (Keras's images[..., i]): two images
    holding the levels 10 and 20 map them to 0 and 255 in both."""
    x = np.zeros((2, 2, 2, 1), np.float32)
    x[0], x[1] = 10.0, 20.0
    y = layers.Equalization()(x, training=True)
    np.testing.assert_array_equal(y[0], 0.0)
    np.testing.assert_array_equal(y[1], 255.0)


@pytest.mark.parametrize("make", [lambda: layers.Equalization(),
                                  lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(),
                                  lambda: layers.RandomPerspective(seed=1)])
def test_one_image_and_models(make):
    x = images(3, 10, 9, 3, seed=8)
    layer = make()
    np.testing.assert_array_equal(layer(x[0], training=True), layer(x[:1], training=True)[0])
    model = minidl.models.Sequential([layers.Input((10, 9, 3)), make(), layers.Flatten(),
                                      layers.Dense(2)])
    model.compile("sgd", "mse")
    history = model.fit(x, np.zeros((3, 2), np.float32), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert model.predict(x, verbose=0).shape == (3, 2)


def _pointer(ffi, array):
    return ffi.cast("float *", array.ctypes.data)


def test_cpu_kernels_match_their_reference_twins():
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(9)
    for shape, low, high, bins in (((3, 7, 5, 3), 0.0, 255.0, 256), ((16, 32, 32, 3), -1.0, 1.0, 77)):
        x = (np.floor(rng.uniform(0, 256, shape)) / 255 * (high - low) + low).astype(np.float32)
        x.reshape(-1)[::37] = np.nan
        fast, plain = np.full_like(x, np.nan), np.full_like(x, np.nan)
        pixels = int(np.prod(shape[:3]))
        assert lib.minidl_equalize_forward(_pointer(ffi, fast), _pointer(ffi, x), low, high, bins,
                                           pixels, shape[3]) == 0
        assert lib.minidl_equalize_reference(_pointer(ffi, plain), _pointer(ffi, x), low, high,
                                             bins, pixels, shape[3]) == 0
        np.testing.assert_array_equal(fast, plain)
    for shape, clip, grid in (((3, 9, 10, 3), 4.0, (8, 8)), ((9, 37, 29, 2), 40.0, (3, 2)),
                              ((2, 16, 16, 1), 0.0, (4, 4))):
        x = np.floor(rng.uniform(0, 256, shape)).astype(np.float32)
        fast, plain = np.full_like(x, np.nan), np.full_like(x, np.nan)
        assert lib.minidl_clahe_forward(_pointer(ffi, fast), _pointer(ffi, x), 0.0, 255.0, clip,
                                        *grid, *shape) == 0
        assert lib.minidl_clahe_reference(_pointer(ffi, plain), _pointer(ffi, x), 0.0, 255.0, clip,
                                          *grid, *shape) == 0
        np.testing.assert_array_equal(fast, plain)


def test_configs_round_trip_as_keras_writes_them():
    for layer, expected in (
            (layers.Equalization(), dict(value_range=[0, 255], bins=256, data_format="channels_last")),
            (layers.ContrastLimitedAdaptiveHistogramEqualization(),
             dict(value_range=[0, 255], clip_limit=4.0, tile_grid_size=[8, 8],
                  data_format="channels_last")),
            (layers.RandomPerspective(), dict(factor=[0.0, 1.0], scale=1.0, interpolation="bilinear",
                                              fill_value=0.0, seed=None,
                                              data_format="channels_last"))):
        config = layer.get_config()
        for key, value in expected.items():
            assert config[key] == value, (type(layer).__name__, key, config[key])
        again = type(layer).from_config(config)
        assert again.get_config() == config


@pytest.mark.parametrize("make, message", [
    (lambda: layers.Equalization(value_range=5), "value_range"),
    (lambda: layers.Equalization(value_range=(1, 2, 3)), "value_range"),
    (lambda: layers.Equalization(bins=0), "bins"),
    (lambda: layers.Equalization(data_format="channels_first"), "channels_last"),
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(0, 2)), "tile_grid_size"),
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=8), "tile_grid_size"),
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(clip_limit="high"), "clip_limit"),
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(value_range=(1, 0)), "value_range"),
    (lambda: layers.RandomPerspective(scale=2.0), "scale"),
    (lambda: layers.RandomPerspective(factor=2.0), "factor"),
    (lambda: layers.RandomPerspective(interpolation="cubic"), "interpolation"),
    (lambda: layers.RandomPerspective(seed=-1), "seed"),
])
def test_bad_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_op_arguments_are_refused(active_backend):
    b = get_backend()
    x = b.from_numpy(images(2, 5, 5, 3))
    out = b.from_numpy(np.zeros((2, 5, 5, 3), np.float32))
    with pytest.raises(ValueError, match="bins"):
        b.equalize_forward(out, x, (0, 255), 0)
    with pytest.raises(ValueError, match="out"):
        b.equalize_forward(b.from_numpy(np.zeros((2, 5, 5, 2), np.float32)), x, (0, 255), 256)
    with pytest.raises(ValueError, match="value_range"):
        b.clahe_forward(out, x, (255, 0), 4.0, (2, 2))
    with pytest.raises(ValueError, match="tile_grid_size"):
        b.clahe_forward(out, x, (0, 255), 4.0, (0, 2))
    with pytest.raises(ValueError, match="transforms"):
        b.image_perspective_transforms(b.from_numpy(np.zeros((2, 6), np.float32)), (0, 1), 1.0, 5, 5, 1)
