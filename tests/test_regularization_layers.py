"""GaussianDropout, AlphaDropout, ActivityRegularization, Wrapper and SpectralNormalization on
every backend, against Keras 3.15.1's numbers (tests/data/make_keras_wrapper_layers.py) and
the layers' defining statistics."""

import math
import os

import numpy as np
import pytest

import minidl
from minidl import layers
from layer_runs import LayerRun

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_wrapper_layers.npz"))
ALPHA_P = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


def _run(layer, backend, x, training, seed=5):
    layer.build_once(x.shape[1:])
    layer.attach(backend)
    layer.step_seed = seed
    run = LayerRun(layer)
    out = backend.to_numpy(run.forward(backend.from_numpy(x), training))
    return out, run


def test_gaussian_dropout_multiplies_by_unit_mean_noise(backend):
    rate = 0.3
    x = np.full((40, 500), 2.0, np.float32)
    layer = layers.GaussianDropout(rate, seed=1)
    np.testing.assert_array_equal(_run(layers.GaussianDropout(rate), backend, x, False)[0], x)
    out, run = _run(layer, backend, x, True)
    noise = out / 2.0
    assert abs(noise.mean() - 1.0) < 0.01
    assert abs(noise.std() - math.sqrt(rate / (1 - rate))) < 0.01
    dout = np.ones_like(x)
    dx = backend.to_numpy(run.backward(backend.from_numpy(dout)))
    np.testing.assert_allclose(dx, noise, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="rate"):
        layers.GaussianDropout(1.5)


def test_alpha_dropout_keeps_selu_statistics(backend):
    rate = 0.2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 400)).astype(np.float32)
    layer = layers.AlphaDropout(rate, seed=2)
    np.testing.assert_array_equal(_run(layers.AlphaDropout(rate), backend, x, False)[0], x)
    out, run = _run(layer, backend, x, True)
    a = ((1 - rate) * (1 + rate * ALPHA_P ** 2)) ** -0.5
    b = -a * ALPHA_P * rate
    dropped = np.isclose(out, a * ALPHA_P + b, atol=1e-5)
    assert abs(dropped.mean() - rate) < 0.01
    np.testing.assert_allclose(out[~dropped], a * x[~dropped] + b, rtol=1e-4, atol=1e-5)
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02   # mean 0, variance 1 kept
    dx = backend.to_numpy(run.backward(backend.from_numpy(np.ones_like(x))))
    np.testing.assert_allclose(dx, np.where(dropped, 0.0, a), rtol=1e-5, atol=1e-6)


def test_alpha_dropout_noise_shape_shares_draws(backend):
    x = np.random.default_rng(1).standard_normal((8, 6, 5)).astype(np.float32)
    out, _ = _run(layers.AlphaDropout(0.5, noise_shape=(None, 1, 5), seed=3), backend, x, True)
    rate = 0.5
    a = ((1 - rate) * (1 + rate * ALPHA_P ** 2)) ** -0.5
    dropped = np.isclose(out, a * ALPHA_P - a * ALPHA_P * rate, atol=1e-5)
    assert (dropped == dropped[:, :1, :]).all()   # one draw per (sample, feature)


def test_activity_regularization_adds_keras_loss(backend):
    inp = layers.Input((3,))
    y = layers.ActivityRegularization(l1=0.1, l2=0.02)(inp)
    model = minidl.Model(inp, layers.Dense(1, kernel_initializer="ones")(y))
    model.compile("sgd", "mse")
    loss = model.evaluate(KERAS["activity/x"], KERAS["activity/y"], verbose=0)
    np.testing.assert_allclose(loss, KERAS["activity/loss"], rtol=1e-5)
    config = model.layers[1].get_config()
    assert config["l1"] == 0.1 and config["l2"] == 0.02 and "activity_regularizer" not in config
    clone = layers.ActivityRegularization.from_config(config)
    assert clone.activity_regularizer.l1 == pytest.approx(0.1)


@pytest.mark.parametrize("name, make", [("dense", lambda: layers.Dense(4)),
                                        ("conv", lambda: layers.Conv2D(3, 2))])
def test_spectral_normalization_matches_keras(backend, name, make):
    c = {k.split("/", 1)[1]: KERAS[k] for k in KERAS.files if k.startswith(name + "/")}
    x = c["x"]
    inp = layers.Input(x.shape[1:])
    wrapper = layers.SpectralNormalization(make(), power_iterations=2)
    model = minidl.Model(inp, wrapper(inp))
    wrapper.layer.kernel.assign(c["kernel"])
    wrapper.layer.bias.assign(c["bias"])
    wrapper.vector_u.assign(c["u"])
    assert sorted(w.name.split("/")[-1] for w in wrapper.weights) == sorted(
        n.split("/")[-1] for n in c["weight_names"])
    got = model(x, training=True)
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    np.testing.assert_allclose(got, c["train_out"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wrapper.layer.kernel.numpy(), c["new_kernel"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(wrapper.vector_u.numpy(), c["new_u"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(model.predict(x, verbose=0), c["infer_out"], rtol=1e-4, atol=1e-5)


def _power_step(kernel, u, iterations):
    """numpy's version of one training call's normalization (Keras's formulas)."""
    w = kernel.reshape(-1, kernel.shape[-1]).astype(np.float64)
    u = u.astype(np.float64)
    for _ in range(iterations):
        v = u @ w.T
        v = v / np.linalg.norm(v)
        u = v @ w
        u = u / np.linalg.norm(u)
    sigma = (v @ w @ u.T).item()
    return (w / sigma).reshape(kernel.shape), u


def test_spectral_normalization_trains_and_round_trips(backend, tmp_path):
    rng = np.random.default_rng(2)
    inp = layers.Input((5,))
    wrapper = layers.SpectralNormalization(layers.Dense(3), power_iterations=3)
    model = minidl.Model(inp, wrapper(inp))
    model.compile(minidl.optimizers.SGD(1e-12), "mse")   # next to no update: the normalization
    x, y = rng.standard_normal((16, 5)).astype(np.float32), rng.standard_normal((16, 3)).astype(np.float32)
    kernel, u = wrapper.layer.kernel.numpy(), wrapper.vector_u.numpy()
    model.train_on_batch(x, y)
    want_kernel, want_u = _power_step(kernel, u, 3)
    np.testing.assert_allclose(wrapper.layer.kernel.numpy(), want_kernel, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(wrapper.vector_u.numpy(), want_u, rtol=1e-4, atol=1e-6)
    model.compile("sgd", "mse")
    model.fit(x, y, epochs=2, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = minidl.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(loaded.layers[1].vector_u.numpy(), wrapper.vector_u.numpy())


def test_spectral_normalization_keeps_an_all_zero_kernel(backend):
    # no singular direction: the kernel and u stay as they are (Keras's ops.cond), no NaN
    inp = layers.Input((4,))
    wrapper = layers.SpectralNormalization(layers.Dense(3, kernel_initializer="zeros"))
    model = minidl.Model(inp, wrapper(inp))
    u = wrapper.vector_u.numpy()
    out = model(np.ones((2, 4), np.float32), training=True)
    out = out.numpy() if hasattr(out, "numpy") else np.asarray(out)
    np.testing.assert_array_equal(out, np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(wrapper.layer.kernel.numpy(), np.zeros((4, 3), np.float32))
    np.testing.assert_array_equal(wrapper.vector_u.numpy(), u)


def test_wrapper_checks_and_config():
    with pytest.raises(ValueError, match="isn't a supported layer type"):
        layers.Wrapper("dense")
    with pytest.raises(ValueError, match="power_iterations"):
        layers.SpectralNormalization(layers.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="no attribute 'kernel' nor 'embeddings'"):
        layers.SpectralNormalization(layers.ReLU())(layers.Input((3,)))
    wrapped = layers.SpectralNormalization(layers.Dense(2, name="d"), power_iterations=3)
    clone = layers.SpectralNormalization.from_config(wrapped.get_config())
    assert clone.power_iterations == 3 and clone.layer.units == 2
    assert layers.Convolution2D is layers.Conv2D and layers.SeparableConvolution2D is layers.SeparableConv2D
