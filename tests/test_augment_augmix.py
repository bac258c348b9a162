"""Keras 3's AugMix (preprocessing_augmix.py): against real Keras 3.15.1 with its draws fixed
to chains of its deterministic ops (keras_reference/augment_b_reference.npz); the mix of the
chains' own outputs; the draws (Dirichlet weights, Beta m, chains of up to chain_depth ops)
and the same output on every backend; identity outside training; the gradient; errors and
configs. all_ops=True also needs RandomSharpness (augment_filters.py): those tests skip
without it."""

import importlib.util
import os
import sys

import numpy as np
import pytest

import minidl
from minidl.backends import get_backend
from minidl.layers.preprocessing_augmix import AugMix
from minidl.seed_state import mix_seed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_b_reference import AUGMIX_CHAINS, AUGMIX_M, AUGMIX_WEIGHTS  # noqa: E402
from layer_runs import LayerRun  # noqa: E402

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_b_reference.npz"))
HAS_SHARPNESS = importlib.util.find_spec("minidl.layers.augment_filters") is not None


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    request.addfinalizer(lambda: minidl.set_backend("numpy"))
    minidl.set_backend(request.param)
    return request.param


def run(layer, x, training, seed=12345, dout=None):
    b = get_backend()
    layer.build_once(tuple(x.shape[1:]))
    if layer.backend is None:
        layer.attach(b)
    layer.step_seed = seed
    call = LayerRun(layer)
    y = b.to_numpy(call.forward(b.from_numpy(x), training))
    dx = None if dout is None else b.to_numpy(call.backward(b.from_numpy(dout)))
    return y, dx


def images(n=4, h=10, w=9, c=3, seed=0):
    return np.floor(np.random.default_rng(seed).uniform(0, 256, (n, h, w, c))).astype(np.float32)


def test_matches_keras_with_its_draws_fixed(active_backend):
    layer = AugMix(all_ops=False)
    chains = [[layer.ops.index(name) for name in chain] for chain in AUGMIX_CHAINS]
    layer.draw = lambda step_seed: (chains, list(AUGMIX_WEIGHTS), AUGMIX_M)
    y, _ = run(layer, REFERENCE["x"], True)
    np.testing.assert_allclose(y, REFERENCE["augmix"], rtol=1e-6, atol=1e-3)


def test_output_is_the_mix_of_the_chains(active_backend):
    x = images()
    layer = AugMix(all_ops=False, chain_depth=2, factor=0.6)
    seed = 31
    y, _ = run(layer, x, True, seed=seed)
    chains, weights, m = layer.draw(seed)
    mixed = np.zeros_like(x, dtype=np.float64)
    for c, (chain, weight) in enumerate(zip(chains, weights)):
        z = x
        for d, index in enumerate(chain):
            z, _ = run(layer._parts[index], z, True, seed=mix_seed(seed, c + 1, d + 1) >> 2)
        mixed += weight * z
    expected = np.clip(m * x + (1 - m) * mixed, 0, 255)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-2)


def test_draws_and_the_same_output_on_every_backend():
    layer = AugMix(all_ops=False, num_chains=4, chain_depth=3, alpha=0.7)
    lengths, ms = [], []
    for seed in range(500):
        chains, weights, m = layer.draw(seed)
        assert len(chains) == 4 and abs(sum(weights) - 1) < 1e-9 and min(weights) >= 0
        assert 0 <= m <= 1
        lengths += [len(chain) for chain in chains]
        ms.append(m)
    # each step is one of 7 ops or none: E[len] = 3 * 7 / 8; Beta(a, a) has mean 1/2
    assert abs(np.mean(lengths) - 3 * 7 / 8) < 0.1 and abs(np.mean(ms) - 0.5) < 0.05
    x = images(3, 12, 11, 3, seed=2)
    outputs = []
    for name in BACKENDS:
        minidl.set_backend(name)
        try:
            outputs.append(run(AugMix(all_ops=False), x, True, seed=77)[0])
        finally:
            minidl.set_backend("numpy")
    for y in outputs[1:]:
        np.testing.assert_allclose(y, outputs[0], rtol=1e-4, atol=0.05)


def test_inference_identity_gradient_and_models(active_backend):
    x = images(3, 10, 9, 3, seed=4)
    dout = np.random.default_rng(5).standard_normal(x.shape).astype(np.float32)
    y, dx = run(AugMix(all_ops=False), x, False, dout=dout)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)
    layer = AugMix(all_ops=False)
    contrast = layer.ops.index("auto_contrast")
    layer.draw = lambda step_seed: ([[contrast], []], [0.25, 0.75], 0.4)
    _, dx = run(layer, x, True, dout=dout)   # straight-through chains: the weights sum to 1
    np.testing.assert_allclose(dx, dout, rtol=1e-5, atol=1e-5)
    model = minidl.models.Sequential([minidl.layers.Input((10, 9, 3)), AugMix(all_ops=False),
                                      minidl.layers.Rescaling(1 / 255), minidl.layers.Flatten(),
                                      minidl.layers.Dense(2)])
    model.compile("sgd", "mse")
    history = model.fit(x, np.zeros((3, 2), np.float32), epochs=2, batch_size=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert AugMix(all_ops=False)(x[0], training=True).shape == x[0].shape


@pytest.mark.skipif(not HAS_SHARPNESS, reason="all_ops needs RandomSharpness (augment_filters.py)")
def test_all_ops(active_backend):
    x = images(2, 10, 9, 3, seed=6)
    layer = AugMix()
    assert len(layer.ops) == 11
    y, _ = run(layer, x, True, seed=3)
    assert y.shape == x.shape and np.all((y >= 0) & (y <= 255))


def test_config_and_errors():
    layer = AugMix(all_ops=False)
    config = layer.get_config()
    assert {k: config[k] for k in ("value_range", "num_chains", "chain_depth", "factor", "alpha",
                                   "all_ops", "interpolation", "seed", "data_format")} == dict(
        value_range=[0, 255], num_chains=3, chain_depth=3, factor=[0, 0.3], alpha=1.0,
        all_ops=False, interpolation="bilinear", seed=None, data_format="channels_last")
    assert AugMix.from_config(config).get_config() == config
    for kwargs, message in ((dict(factor=2.0), "factor"), (dict(num_chains=0), "num_chains"),
                            (dict(chain_depth=1.5), "chain_depth"), (dict(alpha=0), "alpha"),
                            (dict(interpolation="cubic"), "interpolation"),
                            (dict(value_range=(1, 0)), "value_range")):
        with pytest.raises(ValueError, match=message):
            AugMix(all_ops=False, **kwargs)
