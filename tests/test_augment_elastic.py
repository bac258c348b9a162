"""Keras 3's RandomElasticTransform (minidl/layers/augment_elastic.py) and its backend ops
image_displace_forward / _backward: the resampling against real Keras 3.15.1's map_coordinates
for a given field, the whole transform against Keras's elastic_transform for given noise
(keras_reference/augment_elastic_reference.npz), on every backend; the same draws on every
backend; training / inference; the gradient as the exact adjoint; the cpu kernels against their
reference twins; errors and the config round trip."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend
from minidl.layers.augment_elastic import elastic_params
from minidl.layers.calls import LayerCall

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_elastic_reference import ELASTIC, FILL_VALUE, RESAMPLE  # noqa: E402
from layer_runs import LayerRun  # noqa: E402

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_elastic_reference.npz"))


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """The test runs once with each usable backend active (numpy again afterwards)."""
    request.addfinalizer(lambda: minidl.set_backend("numpy"))
    minidl.set_backend(request.param)
    return request.param


def images(n=3, h=12, w=10, c=3, seed=0):
    return np.floor(np.random.default_rng(seed).uniform(0, 256, (n, h, w, c))).astype(np.float32)


def displace(b, x, field, interpolation, fill_mode, fill_value=0.0, clip=(-np.inf, np.inf)):
    out = b.zeros(x.shape)
    b.image_displace_forward(out, b.from_numpy(x), b.from_numpy(field), interpolation, fill_mode,
                             fill_value, clip)
    return b.to_numpy(out)


@pytest.mark.parametrize("interpolation,fill_mode", RESAMPLE)
def test_resampling_matches_keras_map_coordinates(active_backend, interpolation, fill_mode):
    b = get_backend()
    got = displace(b, REFERENCE["x"], REFERENCE["field"], interpolation, fill_mode, FILL_VALUE)
    np.testing.assert_allclose(got, REFERENCE[f"map_{interpolation}_{fill_mode}"], rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("case", sorted(ELASTIC))
def test_transform_matches_keras_elastic_transform_for_given_noise(active_backend, case):
    """The layer's field (its Gaussian blur on the backend) and resampling, fed the noise Keras
    was made to draw, give Keras's elastic_transform."""
    factor, interpolation, fill_mode = ELASTIC[case]
    big = REFERENCE["big"]
    layer = layers.RandomElasticTransform(interpolation=interpolation, fill_mode=fill_mode,
                                          fill_value=FILL_VALUE, value_range=(-1e9, 1e9))
    b = get_backend()
    layer.build_once(tuple(big.shape[1:]))
    layer.attach(b)
    alpha, sigma, _ = elastic_params(big.shape[1], big.shape[2], factor)
    noise = REFERENCE[f"{case}_noise"] * np.float32(alpha * sigma)
    field = layer.displacement(LayerCall(layer, b), b.from_numpy(noise), sigma)
    got = displace(b, big, b.to_numpy(field), interpolation, fill_mode, FILL_VALUE)
    # float32 blurs in another order (Keras: one 2-D window; minidl: rows then columns)
    np.testing.assert_allclose(got, REFERENCE[case], rtol=1e-4, atol=2e-2)


def test_cpu_kernels_match_their_reference_twins():
    """The threaded C kernels against their plain twins (no ISA-specific paths: one run)."""
    if "cpu" not in BACKENDS:
        pytest.skip("the cpu backend is not built here")
    from minidl._cpu_kernels import ffi, lib
    ptr = lambda a: ffi.cast("float *", a.ctypes.data)   # noqa: E731
    rng = np.random.default_rng(3)
    n, h, w, c = 5, 33, 31, 16                           # over the threading threshold
    x = (rng.normal(size=(n, h, w, c)) * 50).astype(np.float32)
    dout = rng.normal(size=(n, h, w, c)).astype(np.float32)
    field = (rng.normal(size=(n, h, w, 2)) * 5).astype(np.float32)
    field.reshape(-1)[::101] = np.nan
    x.reshape(-1)[::97] = np.nan
    for interpolation in (0, 1):
        for fill_mode in range(5):
            fast, reference = np.full_like(x, 3.0), np.full_like(x, -3.0)
            lib.minidl_image_displace_forward(ptr(fast), ptr(x), ptr(field), interpolation, fill_mode,
                                              -2.0, -60.0, 70.0, n, h, w, c)
            lib.minidl_image_displace_forward_reference(ptr(reference), ptr(x), ptr(field), interpolation,
                                                        fill_mode, -2.0, -60.0, 70.0, n, h, w, c)
            np.testing.assert_array_equal(fast, reference)
            fast, reference = np.full_like(x, 3.0), np.full_like(x, -3.0)
            lib.minidl_image_displace_backward(ptr(fast), ptr(dout), ptr(field), interpolation, fill_mode,
                                               n, h, w, c)
            lib.minidl_image_displace_backward_reference(ptr(reference), ptr(dout), ptr(field),
                                                         interpolation, fill_mode, n, h, w, c)
            np.testing.assert_allclose(fast, reference, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("fill_mode", ["constant", "reflect", "mirror", "wrap", "nearest"])
def test_backward_is_the_adjoint_of_the_forward(active_backend, interpolation, fill_mode):
    """<forward(x), g> == <x, backward(g)> (the constant fill 0: the forward is linear in x)."""
    b = get_backend()
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 8, 7, 3)).astype(np.float32)
    g = rng.normal(size=x.shape).astype(np.float32)
    field = (rng.normal(size=(2, 8, 7, 2)) * 3).astype(np.float32)
    y = displace(b, x, field, interpolation, fill_mode)
    dx = b.zeros(x.shape)
    b.image_displace_backward(dx, b.from_numpy(g), b.from_numpy(field), interpolation, fill_mode)
    np.testing.assert_allclose(np.vdot(y.astype(np.float64), g),
                               np.vdot(x.astype(np.float64), b.to_numpy(dx)), rtol=1e-4)


def layer_run(layer, x, training, seed=12345, dout=None):
    """(output, dx or None, the call) of one forward (and backward) on the active backend."""
    b = get_backend()
    layer.build_once(tuple(x.shape[1:]))
    if layer.backend is None:
        layer.attach(b)
    layer.step_seed = seed
    run = LayerRun(layer)
    y = b.to_numpy(run.forward(b.from_numpy(x), training))
    dx = None if dout is None else b.to_numpy(run.backward(b.from_numpy(dout)))
    return y, dx, run.call


def test_layer_draws_repeat_by_seed_and_its_gradient_is_the_adjoint(active_backend):
    """The per-image choice is drawn on the host (the same on every backend); the noise is the
    backend's own counter-based draw (as GaussianNoise): the same step seed, the same output."""
    x = images()
    dout = np.random.default_rng(1).normal(size=x.shape).astype(np.float32)
    layer = layers.RandomElasticTransform(factor=(0.5, 1.0), scale=(0.5, 1.0), value_range=(0, 255))
    y, dx, call = layer_run(layer, x, True, dout=dout)
    assert np.all((y >= 0) & (y <= 255))
    moved = np.abs(y - x).reshape(len(x), -1).max(axis=1) > 0
    np.testing.assert_array_equal(moved, call.apply)     # the images drawn are the ones changed
    assert call.apply.tolist() == [False, True, True]      # host draws: the same on every backend
    field = get_backend().to_numpy(call.field)
    assert np.all(field[~call.apply] == 0) and 0.1 < np.abs(field[call.apply]).mean() < 5
    # the gradient is image_displace_backward along the call's own field
    b = get_backend()
    expected = b.zeros(x.shape)
    b.image_displace_backward(expected, b.from_numpy(dout), call.field, "bilinear", "reflect")
    np.testing.assert_array_equal(dx, b.to_numpy(expected))
    # no dL/dx wanted (a model's first layer): no resampling of the gradient
    first = LayerRun(layer, input_grad_needed=False)
    first.forward(b.from_numpy(x), True)
    g = b.from_numpy(dout)
    assert first.backward(g) is g
    # the same step seed, the same output; another, another field
    again, _, _ = layer_run(layer, x, True)
    other, _, _ = layer_run(layer, x, True, seed=999)
    np.testing.assert_array_equal(again, y)
    assert not np.array_equal(other, y)


def test_inference_and_zero_factor_or_scale_leave_images_alone(active_backend):
    x = images() * 2 - 100          # outside value_range: only a transforming call clips
    dout = np.ones_like(x)
    for layer, training in [(layers.RandomElasticTransform(), False),
                            (layers.RandomElasticTransform(factor=0.0), True),
                            (layers.RandomElasticTransform(scale=0.0), True)]:
        y, dx, _ = layer_run(layer, x, training, dout=dout)
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(dx, dout)
    # a tiny probability transforms no image here: the images are only clipped (as Keras does)
    y, _, call = layer_run(layers.RandomElasticTransform(factor=(1e-12, 1e-12)), x, True)
    assert not call.apply.any()
    np.testing.assert_array_equal(y, np.clip(x, 0, 255))


def test_calls_on_data_and_in_a_model(active_backend):
    x = images(n=4, h=16, w=16)
    layer = layers.RandomElasticTransform(seed=7, interpolation="nearest", fill_mode="constant",
                                          fill_value=3.0)
    one = layer(x[0])
    assert one.shape == x[0].shape
    data = layer({"images": x, "labels": np.arange(4)})
    np.testing.assert_array_equal(data["labels"], np.arange(4))
    assert data["images"].shape == x.shape and not np.array_equal(data["images"], x)
    np.testing.assert_array_equal(layers.RandomElasticTransform(seed=7)(x),
                                  layers.RandomElasticTransform(seed=7)(x))
    model = minidl.models.Sequential([layers.Input((16, 16, 3)), layers.RandomElasticTransform(),
                                      layers.Conv2D(4, 3), layers.Flatten(), layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x / 255, np.zeros((4, 2), np.float32), epochs=1, batch_size=2, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    np.testing.assert_allclose(model.predict(x / 255, verbose=0).shape, (4, 2))


def test_errors_name_the_argument(active_backend):
    with pytest.raises(NotImplementedError, match="interpolation"):
        layers.RandomElasticTransform(interpolation="bicubic")
    with pytest.raises(NotImplementedError, match="fill_mode"):
        layers.RandomElasticTransform(fill_mode="edge")
    with pytest.raises(ValueError, match="factor"):
        layers.RandomElasticTransform(factor=1.5)
    with pytest.raises(ValueError, match="scale"):
        layers.RandomElasticTransform(scale=(0.2, 0.3, 0.4))
    with pytest.raises(ValueError, match="value_range"):
        layers.RandomElasticTransform(value_range=(1, 0))
    b = get_backend()
    x = b.zeros((2, 5, 4, 3))
    with pytest.raises(ValueError, match=r"^image_displace_forward: field must be \(N, H, W, 2\) = "
                                         r"\(2, 5, 4, 2\) .*got \(2, 5, 4, 3\)$"):
        b.image_displace_forward(b.zeros((2, 5, 4, 3)), x, b.zeros((2, 5, 4, 3)), "bilinear", "reflect", 0.0)
    with pytest.raises(ValueError, match="^image_displace_backward: fill_mode must be one of"):
        b.image_displace_backward(b.zeros((2, 5, 4, 3)), x, b.zeros((2, 5, 4, 2)), "nearest", "edge")
    with pytest.raises(ValueError, match=r"^image_displace_forward: out must have the shape of x"):
        b.image_displace_forward(b.zeros((2, 5, 4, 1)), x, b.zeros((2, 5, 4, 2)), "bilinear", "wrap", 0.0)


def test_config_round_trip_with_keras_keys():
    layer = layers.RandomElasticTransform(factor=(0.2, 0.7), scale=0.4, interpolation="nearest",
                                          fill_mode="mirror", fill_value=2.5, value_range=(0, 1),
                                          seed=11, name="elastic")
    config = layer.get_config()
    assert {"factor", "scale", "interpolation", "fill_mode", "fill_value", "value_range", "seed",
            "data_format", "name", "trainable"} <= set(config)
    assert config["factor"] == [0.2, 0.7] and config["scale"] == [0.0, 0.4]   # Keras's (0, s)
    clone = layers.deserialize(layers.serialize(layer))
    assert type(clone) is layers.RandomElasticTransform and clone.get_config() == config
    assert layers.RandomElasticTransform().get_config()["fill_mode"] == "reflect"   # Keras's default


def test_loads_a_real_keras_config():
    """keras.layers.RandomElasticTransform(scale=0.5, fill_mode="mirror").get_config() of Keras
    3.15.1 (its dtype policy entry is taken and ignored, as for minidl's other layers)."""
    config = {"name": "random_elastic_transform", "trainable": True, "data_format": None,
              "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
                        "registered_name": None},
              "factor": (0, 1.0), "scale": (0, 0.5), "interpolation": "bilinear", "fill_mode": "mirror",
              "fill_value": 0.0, "value_range": (0, 255), "seed": None}
    layer = layers.deserialize({"class_name": "RandomElasticTransform", "config": config})
    assert layer.scale == (0.0, 0.5) and layer.fill_mode == "mirror" and layer.value_range == (0, 255)
