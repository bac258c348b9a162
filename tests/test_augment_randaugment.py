"""Keras 3's RandAugment (preprocessing_randaugment.py): against real Keras 3.15.1 with its
choice fixed to its deterministic ops (keras_reference/augment_b_reference.npz); each chosen op
is the part's own output; the choice covers Keras's eleven ops and is the same on every backend;
identity outside training; the gradient through the chosen parts; errors and configs.
RandAugment uses RandomSharpness (augment_filters.py): without it these tests skip."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl.backends import get_backend

pytest.importorskip("minidl.layers.augment_filters", reason="RandAugment needs RandomSharpness "
                    "(minidl/layers/augment_filters.py)")
from minidl.layers.preprocessing_randaugment import RandAugment  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_b_reference import RANDAUGMENT_OPS  # noqa: E402
from layer_runs import LayerRun  # noqa: E402

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_b_reference.npz"))


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


def test_matches_keras_with_its_choice_fixed(active_backend):
    layer = RandAugment(num_ops=2, factor=0.0)   # the fixture's (see its script)
    layer.chosen_ops = lambda step_seed: list(RANDAUGMENT_OPS)
    y, _ = run(layer, REFERENCE["x"], True)
    np.testing.assert_array_equal(y, REFERENCE["randaugment"])


def test_each_op_is_its_part(active_backend):
    """With one op, the output is the chosen part's own output under the seed it was given."""
    x = images()
    for seed in range(6):
        layer = RandAugment(num_ops=1, factor=0.7)
        y, _ = run(layer, x, True, seed=seed)
        (index,) = layer.chosen_ops(seed)
        part = layer._parts[index]
        from minidl.seed_state import mix_seed
        expected, _ = run(part, x, True, seed=mix_seed(seed, 1) >> 2)
        np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-4)


def test_choice_covers_every_op_evenly_and_is_the_same_on_every_backend():
    layer = RandAugment(num_ops=3)
    counts = np.bincount(np.concatenate([layer.chosen_ops(s) for s in range(2000)]),
                         minlength=len(RandAugment.OPS))
    assert counts.min() > 0.7 * counts.mean() and counts.max() < 1.3 * counts.mean()
    x = images(3, 12, 11, 3, seed=2)
    outputs = []
    for name in BACKENDS:
        minidl.set_backend(name)
        try:
            outputs.append(run(RandAugment(num_ops=4), x, True, seed=77)[0])
        finally:
            minidl.set_backend("numpy")
    for y in outputs[1:]:
        np.testing.assert_allclose(y, outputs[0], rtol=1e-4, atol=0.05)


def test_inference_identity_gradient_and_models(active_backend):
    x = images(3, 10, 9, 3, seed=4)
    dout = np.ones_like(x)
    y, dx = run(RandAugment(), x, False, dout=dout)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)
    layer = RandAugment(num_ops=1)
    layer.chosen_ops = lambda step_seed: [RandAugment.OPS.index("random_brightness")]
    _, dx = run(layer, x, True, dout=dout)      # a colour op: straight through
    np.testing.assert_array_equal(dx, dout)
    layer.chosen_ops = lambda step_seed: [RandAugment.OPS.index("random_translation")]
    y, dx = run(layer, x, True, dout=dout)      # a resampling op: its adjoint
    assert np.abs(dx - dout).max() > 0
    model = minidl.models.Sequential([minidl.layers.Input((10, 9, 3)), RandAugment(num_ops=3),
                                      minidl.layers.Rescaling(1 / 255), minidl.layers.Flatten(),
                                      minidl.layers.Dense(2)])
    model.compile("sgd", "mse")
    history = model.fit(x, np.zeros((3, 2), np.float32), epochs=2, batch_size=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert RandAugment()(x[0], training=True).shape == x[0].shape


def test_config_and_errors():
    layer = RandAugment()
    config = layer.get_config()
    assert {k: config[k] for k in ("value_range", "num_ops", "factor", "interpolation", "seed",
                                   "data_format")} == dict(
        value_range=[0, 255], num_ops=2, factor=[0, 0.5], interpolation="bilinear", seed=None,
        data_format="channels_last")
    assert RandAugment.from_config(config).get_config() == config
    for kwargs, message in ((dict(factor=2.0), "factor"), (dict(num_ops=-1), "num_ops"),
                            (dict(interpolation="cubic"), "interpolation"),
                            (dict(value_range=(1, 0)), "value_range")):
        with pytest.raises(ValueError, match=message):
            RandAugment(**kwargs)
