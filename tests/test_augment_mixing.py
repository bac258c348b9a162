"""Keras 3's RandomErasing, RandomGaussianBlur, RandomSharpness, MixUp, CutMix and Pipeline
(minidl/layers/augment_*.py, pipeline.py): against real Keras 3.15.1's outputs in their
deterministic settings (keras_reference/augment_mix_reference.npz) and Keras's formulas where
a draw remains, on every backend; the same draws on every backend; the identity outside
training and the straight-through gradient; dict and unbatched calls on data; the cpu kernels
against their reference twins on each ISA path; errors and configs; training in a model."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_mix_reference import CASES  # noqa: E402
from layer_runs import LayerRun  # noqa: E402

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_mix_reference.npz"))


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
    call = LayerRun(layer)
    y = b.to_numpy(call.forward(b.from_numpy(x), training))
    dx = None if dout is None else b.to_numpy(call.backward(b.from_numpy(dout)))
    return y, dx


LAYERS = [
    lambda: layers.RandomErasing(),
    lambda: layers.RandomErasing(factor=(1, 1), fill_value=(10, 20, 30)),
    lambda: layers.RandomGaussianBlur(),
    lambda: layers.RandomSharpness(0.8),
    lambda: layers.MixUp(),
    lambda: layers.CutMix(),
    lambda: layers.Pipeline([layers.MixUp(), layers.RandomSharpness(0.4)]),
]


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_keras_in_its_deterministic_settings(active_backend, case):
    name, kwargs, source = CASES[case]
    y, _ = run(getattr(layers, name)(**kwargs), REFERENCE[source], True)
    scale = 255.0 if source == "x" else 1.0
    np.testing.assert_allclose(y, REFERENCE[case], rtol=1e-5, atol=1e-4 * scale)


@pytest.mark.parametrize("make", LAYERS)
def test_identity_outside_training_and_straight_through_gradient(active_backend, make):
    x = images()
    dout = np.random.default_rng(1).normal(size=x.shape).astype(np.float32)
    y, dx = run(make(), x, False, dout=dout)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)
    y, dx = run(make(), x, True, dout=dout)
    assert not np.array_equal(y, x)
    np.testing.assert_array_equal(dx, dout)


def test_pipeline_back_propagates_through_its_layers_in_reverse(active_backend):
    x = images(n=5, h=6, w=7)
    dout = np.random.default_rng(1).normal(size=x.shape).astype(np.float32)
    pipeline = layers.Pipeline([layers.RandomFlip(),
                                layers.RandomTranslation(0.3, 0.2, fill_mode="constant")])
    y, dx = run(pipeline, x, True, dout=dout)   # linear: the gradient is its adjoint
    np.testing.assert_allclose(np.vdot(y, dout), np.vdot(x, dx), rtol=1e-4)
    assert not np.array_equal(y, x)


def test_random_draws_are_the_same_on_every_backend():
    x = images(n=24, h=9, w=7)
    results = []
    for name in BACKENDS:
        minidl.set_backend(name)
        results.append([run(make(), x, True, seed=77)[0] for make in LAYERS[1:]])
    minidl.set_backend("numpy")
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-3)


def solve_mix(y, x):
    """(weights, sources) with y[n] = w x[n] + (1 - w) x[source], by least squares."""
    weights, sources = [], []
    for target, own in zip(y, x):
        best = None
        for k, other in enumerate(x):
            d = (own - other).ravel()
            w = 1.0 if not d.any() else float(np.dot(target.ravel() - other.ravel(), d) / np.dot(d, d))
            error = np.abs(w * own + (1 - w) * other - target).max()
            if best is None or error < best[0]:
                best = (error, w, k)
        assert best[0] < 1e-2
        weights.append(best[1])
        sources.append(best[2])
    return np.array(weights), np.array(sources)


def test_mixup_mixes_images_and_labels_with_one_beta_weight_and_order(active_backend):
    x, labels = images(n=12, h=4, w=5), np.eye(12, dtype=np.float32)
    out = layers.MixUp(alpha=0.4, seed=3)({"images": x, "labels": labels})
    weights, sources = solve_mix(out["images"], x)
    assert sorted(sources[weights < 0.999]) == sorted(set(sources[weights < 0.999]))   # an order
    expected = weights[:, None] * labels + (1 - weights[:, None]) * labels[sources]
    np.testing.assert_allclose(out["labels"], expected, atol=1e-3)
    assert np.all((weights > -1e-4) & (weights < 1 + 1e-4))
    # Beta(0.2, 0.2) (the default) puts most weights near 0 or 1; its mean is 1/2
    y, _ = run(layers.MixUp(), images(n=400, h=2, w=2), True)
    w, _ = solve_mix(y, images(n=400, h=2, w=2))
    assert 0.4 < w.mean() < 0.6 and np.mean((w < 0.1) | (w > 0.9)) > 0.5


def pasted_boxes(y, x):
    """For each image: (source index, the mask of pixels taken from it)."""
    result = []
    for n, (target, own) in enumerate(zip(y, x)):
        changed = np.any(target != own, axis=-1)
        if not changed.any():
            result.append((n, changed))
            continue
        sources = [k for k, other in enumerate(x)
                   if np.array_equal(target[changed], other[changed])]
        assert sources, f"image {n}: the pasted pixels come from no image of the batch"
        result.append((sources[0], changed))
    return result


def assert_rectangle(mask):
    rows, cols = np.nonzero(mask)
    assert mask[rows.min():rows.max() + 1, cols.min():cols.max() + 1].all()


def test_cutmix_pastes_a_box_of_another_image_and_weights_labels_by_its_area(active_backend):
    x, labels = images(n=16, h=10, w=12, seed=4), np.eye(16, dtype=np.float32)
    out = layers.CutMix(seed=1)({"images": x, "labels": labels})
    pasted = 0
    for n, (source, mask) in enumerate(pasted_boxes(out["images"], x)):
        if mask.any():
            pasted += 1
            assert_rectangle(mask)
            # Keras weighs the labels by the box's float area; the pixels differ by its edges
            area = (1 - out["labels"][n, n]) * 120
            assert abs(mask.sum() - area) <= 10 + 12 + 1
            assert out["labels"][n, source] == pytest.approx(1 - out["labels"][n, n], abs=1e-5)
        np.testing.assert_allclose(out["labels"][n].sum(), 1.0, atol=1e-5)
    assert pasted > 4


def test_random_erasing_boxes_probability_and_fill(active_backend):
    x = images(n=300, h=10, w=10, seed=2)
    y, _ = run(layers.RandomErasing(factor=(1, 1), scale=(0.25, 0.25), fill_value=7.0), x, True)
    for image, own in zip(y, x):
        mask = np.any(image != own, axis=-1)
        assert_rectangle(mask)
        assert np.all(image[mask] == 7.0)
        rows, cols = np.nonzero(mask)
        # a side of sqrt(0.25) * 10 = 5 pixels, its float start anywhere: 5 pixels (or 6)
        assert 5 <= rows.max() - rows.min() + 1 <= 6 and 5 <= cols.max() - cols.min() + 1 <= 6
    # the default factor 1.0: p ~ U(0, 1), so half the images; noise clipped to value_range
    y, _ = run(layers.RandomErasing(value_range=(0, 100)), x, True)
    erased = np.array([not np.array_equal(a, b) for a, b in zip(y, x)])
    assert 0.4 < erased.mean() < 0.6
    noise = y[y != x]
    assert noise.min() >= 0 and noise.max() <= 100 and np.mean(noise == 0) > 0.3


def test_gaussian_blur_probability(active_backend):
    x = images(n=300, h=4, w=4, seed=5)
    y, _ = run(layers.RandomGaussianBlur(factor=(0.2, 0.2), sigma=(0.5, 0.5)), x, True)
    blurred = np.array([not np.allclose(a, b) for a, b in zip(y, x)])
    assert 0.12 < blurred.mean() < 0.28


def test_calls_on_data_unbatched_dicts_and_new_draws_each_call(active_backend):
    x = images(n=6, h=5, w=5)
    for make in LAYERS:
        layer = make()
        assert layer(x[0]).shape == (5, 5, 3)
        out = layer({"images": x, "labels": np.eye(6, dtype=np.float32)})
        assert out["images"].shape == x.shape and out["labels"].shape == (6, 6)
        np.testing.assert_array_equal(layer(x, training=False), x)
    np.testing.assert_array_equal(layers.CutMix()(x[0]), x[0])   # Keras's CutMix needs a batch
    flips = layers.Pipeline([layers.RandomFlip()])   # a layer drawing on the backend, too
    assert len({flips(x).tobytes() for _ in range(8)}) > 1
    mix = layers.MixUp(seed=4)
    assert not np.array_equal(mix(x), mix(x))   # each call draws anew (Keras's SeedGenerator)
    np.testing.assert_array_equal(layers.MixUp(seed=4)(x), layers.MixUp(seed=4)(x))


def test_cpu_kernels_match_their_reference_twins(isa):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(7)
    ptr = lambda a: ffi.cast("float *", a.ctypes.data)   # noqa: E731
    x = rng.normal(size=(9, 13, 11, 3)).astype(np.float32) * 50
    x.reshape(-1)[::97] = np.nan
    n, h, w, c = x.shape

    def twins(name, *args):
        fast, reference = np.full_like(x, 3.0), np.full_like(x, -3.0)
        getattr(lib, f"minidl_{name}_forward")(ptr(fast), ptr(x), *args)
        getattr(lib, f"minidl_{name}_reference")(ptr(reference), ptr(x), *args)
        np.testing.assert_allclose(fast, reference, rtol=1e-6, atol=1e-5)

    mix = np.stack([rng.uniform(0, 1, n), rng.uniform(-1, 1, n), rng.permutation(n)], 1).astype(np.float32)
    mix[0, 2] = 40   # clamped to the last image
    twins("batch_mix", ptr(mix), n, h * w * c)
    boxes = np.stack([rng.uniform(-3, w, n), rng.uniform(0, w + 3, n), rng.uniform(-3, h, n),
                      rng.uniform(0, h + 3, n), rng.integers(0, n, n), np.zeros(n), np.zeros(n)],
                     1).astype(np.float32)
    boxes[1, 0] = np.nan
    twins("image_paste", ptr(boxes), ptr(x), -20.0, 30.0, n, h, w, c, n, h, w)
    source = rng.normal(size=(4, 5, 6, c)).astype(np.float32) * 50   # read from offsets, clamped
    boxes[:, 4] = rng.integers(0, 4, n)
    boxes[:, 5:] = rng.integers(-8, 8, (n, 2))
    boxes[2, 6] = np.nan
    twins("image_paste", ptr(boxes), ptr(source), -20.0, 30.0, n, h, w, c, 4, 5, 6)
    for kh, kw in ((3, 3), (5, 3), (1, 7)):
        kernel = rng.uniform(0, 1, (kh, kw)).astype(np.float32)
        weights = rng.uniform(-1, 2, n).astype(np.float32)
        weights[::4] = 0
        twins("image_filter_blend", ptr(kernel), ptr(weights), 0.0, 255.0, n, h, w, c, kh, kw)


@pytest.mark.parametrize("make, message", [
    (lambda: layers.RandomErasing(factor=2), r"`factor` argument .* range \[0, 1\]"),
    (lambda: layers.RandomErasing(scale=(0.1, 0.2, 0.3)), "`scale` argument"),
    (lambda: layers.RandomErasing(fill_value=(1, 2)), "`fill_value` argument"),
    (lambda: layers.RandomErasing(fill_value="red"), "`fill_value` argument"),
    (lambda: layers.RandomGaussianBlur(kernel_size=4), "kernel_size must be an odd number"),
    (lambda: layers.RandomGaussianBlur(sigma=2.0), "`sigma` argument"),
    (lambda: layers.RandomSharpness(-1), "`factor` argument"),
    (lambda: layers.RandomSharpness(0.2, value_range=(1, 0)), "value_range must have low < high"),
    (lambda: layers.MixUp(alpha=0), "alpha must be a number > 0"),
    (lambda: layers.CutMix(factor=(0.1, 0.2, 0.3)), "`factor` argument"),
    (lambda: layers.CutMix(data_format="channels_first"), "channels_last"),
    (lambda: layers.Pipeline(layers.MixUp()), "layers must be a list of layers"),
])
def test_bad_arguments_name_the_layer(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_data_is_refused_with_the_shapes():
    x = images(n=4, h=5, w=5)
    with pytest.raises(ValueError, match=r"'images' and optionally 'labels'.*bounding_boxes"):
        layers.MixUp()({"images": x, "bounding_boxes": x})
    with pytest.raises(ValueError, match=r"one row per image, got labels of shape \(3, 2\) for 4"):
        layers.CutMix()({"images": x, "labels": np.zeros((3, 2), np.float32)})
    with pytest.raises(ValueError, match=r"expects images \(H, W, C\) or a batch .* \(5, 5\)"):
        layers.RandomSharpness(0.3)(x[0, :, :, 0])
    with pytest.raises(ValueError, match=r"three numbers needs 3 channels.*\(None, 5, 5, 1\)"):
        layers.RandomErasing(fill_value=(1, 2, 3))(x[..., :1])


def test_configs_are_keras_and_round_trip():
    assert layers.RandomErasing().get_config()["factor"] == [0.0, 1.0]
    assert layers.RandomGaussianBlur().get_config()["sigma"] == [0.0, 1.0]
    assert layers.RandomGaussianBlur().get_config()["kernel_size"] == [3, 3]
    assert layers.RandomSharpness(0.3).get_config()["factor"] == [0.0, 0.3]
    assert layers.MixUp().get_config()["alpha"] == 0.2
    config = layers.Pipeline([layers.RandomFlip(), layers.MixUp()], name="augment").get_config()
    assert set(config) == {"layers", "name"} and config["layers"][1]["class_name"] == "MixUp"
    for make in LAYERS:
        layer = make()
        clone = layers.deserialize(type(layer).__name__, layer.get_config())
        strip = lambda c: {k: v for k, v in c.items() if k != "name"}   # noqa: E731
        if isinstance(layer, layers.Pipeline):
            assert [type(s) for s in clone.layers] == [type(s) for s in layer.layers]
            strip = lambda c: [s["config"].get("mode") for s in c["layers"]]   # noqa: E731
        assert strip(clone.get_config()) == strip(layer.get_config())


def test_keras_configs_load():
    import json
    from minidl import saving
    for spec in json.loads(str(REFERENCE["configs"])):
        layer = saving.deserialize_keras_object(spec)
        assert type(layer).__name__ == spec["class_name"]
        if spec["class_name"] == "Pipeline":
            assert [type(sub).__name__ for sub in layer.layers] == ["MixUp", "RandomSharpness"]
            continue
        ours = layer.get_config()
        for key, value in spec["config"].items():
            if key not in ("dtype", "name", "trainable"):
                assert ours[key] == (list(value) if isinstance(value, (tuple, list)) else value), key


def fitted(epochs_per_call, seed=None):
    minidl.set_seed(3)
    x, y = images(n=32, h=6, w=6, seed=1), np.arange(32) % 3
    model = minidl.Sequential([
        layers.Input((6, 6, 3)),
        layers.Pipeline([layers.RandomErasing(seed=seed), layers.RandomGaussianBlur(),
                         layers.RandomSharpness(0.7)]),
        layers.MixUp(), layers.CutMix(), layers.Rescaling(1 / 255),
        layers.Conv2D(4, 3, activation="relu"), layers.Flatten(), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    done = 0
    for epochs in epochs_per_call:
        model.fit(x, y, batch_size=16, epochs=done + epochs, initial_epoch=done, verbose=0)
        done += epochs
    assert model.predict(x, verbose=0).shape == (32, 3)
    return model.get_weights()


def test_augmented_training_repeats_and_resumes_exactly(active_backend):
    once = fitted([2])
    for a, b in zip(once, fitted([1, 1])):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(once, fitted([2], seed=5)))
