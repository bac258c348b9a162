"""The airbench94 recipe's general pieces on every backend: learning-rate multipliers,
FreezeWeights, Lookahead, test-time augmentation, the dirac and patch-whitening initializers,
AlternatingFlipIterator, zoo.airbench94, and examples/cifar10.py --model airbench94."""

import numpy as np
import pytest

import minidl
from minidl import callbacks, initializers, layers, optimizers, zoo
from minidl.models import Sequential
from minidl.recipes import Airbench94, AlternatingFlipIterator

from test_zoo_examples import run_example, write_small_cifar


def dense_model(units=3, inputs=4, optimizer=None, batchnorm=False):
    model = Sequential([layers.Input((inputs,))] + ([layers.BatchNormalization(momentum=0.5)] if batchnorm else [])
                       + [layers.Dense(units, name="dense")])
    model.compile(optimizer=optimizer or optimizers.SGD(0.1), loss="mse")
    return model


def data(n=8, inputs=4, units=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, inputs)).astype(np.float32), rng.normal(size=(n, units)).astype(np.float32))


def mse_gradients(model, x, y):
    """dL/dkernel and dL/dbias of a Dense-only model under mean squared error (numpy)."""
    kernel, bias = model.get_weights()
    pred = x @ kernel + bias
    dpred = 2 * (pred - y) / pred.size
    return x.T @ dpred, dpred.sum(axis=0)


# ------------------------------------------------------------- learning-rate multipliers
def test_learning_rate_multipliers_scale_the_step_not_the_decay(active_backend):
    x, y = data()
    model = dense_model(optimizer=optimizers.SGD(0.1, weight_decay=0.5,
                                                 learning_rate_multipliers={"dense/bias$": 64.0}))
    model.set_weights([np.full((4, 3), 0.2, np.float32), np.full(3, 0.3, np.float32)])
    kernel, bias = model.get_weights()
    dkernel, dbias = mse_gradients(model, x, y)
    model.train_on_batch(x, y)
    new_kernel, new_bias = model.get_weights()
    decay = 0.1 * 0.5   # lr * weight_decay for both: the multiplier leaves the decay alone
    np.testing.assert_allclose(new_kernel, kernel * (1 - decay) - 0.1 * dkernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(new_bias, bias * (1 - decay) - 64 * 0.1 * dbias, rtol=1e-5, atol=1e-6)


def test_learning_rate_multiplier_zero_freezes_and_first_match_wins(active_backend):
    x, y = data()
    table = {"dense/kernel": 0.0, "dense": 2.0}
    model = dense_model(optimizer=optimizers.SGD(0.1, momentum=0.9, weight_decay=0.5,
                                                 learning_rate_multipliers=table))
    kernel, bias = model.get_weights()
    _, dbias = mse_gradients(model, x, y)
    model.train_on_batch(x, y)
    np.testing.assert_array_equal(model.get_weights()[0], kernel)
    np.testing.assert_allclose(model.get_weights()[1], bias * (1 - 0.05) - 2 * 0.1 * dbias, rtol=1e-5, atol=1e-6)
    config = model.optimizer.get_config()
    assert config["learning_rate_multipliers"] == table
    assert optimizers.SGD.from_config(config).learning_rate_multipliers == table


def test_learning_rate_multipliers_bad_input():
    with pytest.raises(ValueError, match="learning_rate_multipliers\\['bias'\\]"):
        optimizers.SGD(learning_rate_multipliers={"bias": -1})
    with pytest.raises(TypeError, match="regular expressions"):
        optimizers.Adam(learning_rate_multipliers={3: 1.0})
    with pytest.raises(ValueError, match="not a regular expression"):
        optimizers.SGD(learning_rate_multipliers={"(": 1.0})
    with pytest.raises(TypeError, match="must be a dict"):
        optimizers.SGD(learning_rate_multipliers=[("bias", 2.0)])
    assert "learning_rate_multipliers" not in optimizers.SGD().get_config()


def test_freeze_weights_stops_a_weight_from_the_given_epoch(active_backend):
    x, y = data(16)
    model = dense_model()
    kernels = []

    class Record(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            kernels.append(self.model.get_weights())

    model.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False,
              callbacks=[callbacks.FreezeWeights("dense/bias", from_epoch=2), Record()])
    assert not np.array_equal(kernels[0][1], kernels[1][1])        # bias trained in epoch 2
    np.testing.assert_array_equal(kernels[1][1], kernels[2][1])     # frozen in epoch 3
    assert not np.array_equal(kernels[1][0], kernels[2][0])         # the kernel still trains
    assert model.optimizer.learning_rate_multipliers == {"dense/bias": 0.0}


# ------------------------------------------------------------------------- lookahead
def test_lookahead_matches_its_rule_on_every_weight(active_backend):
    x, y = data(24)
    decay = lambda step: 0.2 + step / 100   # noqa: E731
    minidl.set_seed(3)
    model = dense_model(batchnorm=True)
    minidl.set_seed(3)
    twin = dense_model(batchnorm=True)
    lookahead = callbacks.Lookahead(sync_period=2, decay=decay)
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, callbacks=[lookahead])

    slow = [w.copy() for w in twin.get_weights()]   # moving statistics included
    for step in range(1, 7):
        part = slice(8 * ((step - 1) % 3), 8 * ((step - 1) % 3 + 1))
        twin.train_on_batch(x[part], y[part])
        if step % 2 == 0:
            d = decay(step)
            slow = [d * s + (1 - d) * w for s, w in zip(slow, twin.get_weights())]
            twin.set_weights(slow)
    for got, want in zip(model.get_weights(), twin.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    state = lookahead.get_state()
    assert len(state) == len(model.weights)
    for got, want in zip(state, slow):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_lookahead_pulls_back_at_the_end_and_takes_a_saved_state(active_backend):
    x, y = data(16)
    model = dense_model()
    start = model.get_weights()
    lookahead = callbacks.Lookahead(sync_period=100, decay=1.0)   # never syncs inside the fit
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[lookahead])
    for got, want in zip(model.get_weights(), start):   # decay 1: the slow weights never moved
        np.testing.assert_allclose(got, want, rtol=1e-6)
    resumed = callbacks.Lookahead(sync_period=100, decay=1.0)
    resumed.set_state([w + 1 for w in start])
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[resumed])
    for got, want in zip(model.get_weights(), start):
        np.testing.assert_allclose(got, want + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="sync_period"):
        callbacks.Lookahead(sync_period=0)
    with pytest.raises(ValueError, match="decay"):
        callbacks.Lookahead(decay=1.5)


# ---------------------------------------------------------- test-time augmentation
def reference_views(x, mode):
    pad = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")   # PyTorch's reflect
    h, w = x.shape[1:3]
    up_left, down_right = pad[:, 0:h, 0:w], pad[:, 2:h + 2, 2:w + 2]
    if mode == "flip":
        return [(x, 0.5), (x[:, :, ::-1], 0.5)]
    return [(x, 0.25), (x[:, :, ::-1], 0.25), (up_left, 0.125), (up_left[:, :, ::-1], 0.125),
            (down_right, 0.125), (down_right[:, :, ::-1], 0.125)]


@pytest.mark.parametrize("mode", ["flip", "flip_translate"])
def test_tta_averages_logits_over_the_views(active_backend, mode):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 6, 5, 2)).astype(np.float32)
    y = rng.integers(0, 4, size=7)
    model = Sequential([layers.Input((6, 5, 2)), layers.Conv2D(3, 3, padding="same"), layers.Flatten(),
                        layers.Dense(4, activation="softmax")])
    model.compile("sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    logits = sum(w * np.log(model.predict(v)) for v, w in reference_views(x, mode))
    want = np.exp(logits - logits.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict(x, batch_size=4, tta=mode), want, rtol=1e-4, atol=1e-6)
    loss, accuracy = model.evaluate(x, y, batch_size=4, tta=mode)
    picked = want[np.arange(7), y]
    assert loss == pytest.approx(-np.log(picked).mean(), rel=1e-4)
    assert accuracy == pytest.approx(np.mean(want.argmax(axis=1) == y))
    assert not np.allclose(model.predict(x), want, atol=1e-4)   # the views do change the outputs


def test_tta_on_linear_outputs_and_bad_input():
    minidl.set_backend("numpy")
    x = np.random.default_rng(1).normal(size=(3, 4, 4, 1)).astype(np.float32)
    model = Sequential([layers.Input((4, 4, 1)), layers.Conv2D(2, 2), layers.Flatten(), layers.Dense(2)])
    want = sum(w * model.predict(v) for v, w in reference_views(x, "flip_translate"))
    np.testing.assert_allclose(model.predict(x, tta="flip_translate"), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="tta must be None or one of"):
        model.predict(x, tta="rotate")
    flat = dense_model()
    with pytest.raises(ValueError, match="needs image inputs"):
        flat.predict(np.zeros((2, 4), np.float32), tta="flip")


def test_tta_on_images_of_unknown_size():
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((None, None, 2)), layers.Conv2D(3, 3, padding="same"),
                        layers.GlobalAveragePooling2D(), layers.Dense(2)])
    for shape in ((3, 6, 5, 2), (2, 4, 7, 2)):
        x = np.random.default_rng(2).normal(size=shape).astype(np.float32)
        want = sum(w * model.predict(v) for v, w in reference_views(x, "flip_translate"))
        np.testing.assert_allclose(model.predict(x, tta="flip_translate"), want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------- initializers
def test_patch_whitening_matches_a_numpy_eigendecomposition():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(30, 6, 7, 3)) * np.array([1.0, 2.0, 0.5]) + 0.3
    patches = np.array([images[n, i:i + 2, j:j + 2, :].ravel() for n in range(30)
                        for i in range(5) for j in range(6)])
    values, vectors = np.linalg.eigh(patches.T @ patches / len(patches))
    whitening = initializers.PatchWhitening((2, 2), epsilon=1e-3, chunk=7).adapt(images)
    kernel = whitening((2, 2, 3, 24)).reshape(12, 24)
    for j in range(12):   # largest eigenvalue first, each vector up to its sign, then its negative
        want = vectors[:, 11 - j] / np.sqrt(values[11 - j] + 1e-3)
        sign = np.sign(kernel[:, j] @ want)
        np.testing.assert_allclose(kernel[:, j], sign * want, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(kernel[:, 12 + j], -kernel[:, j])
    # the first half whitens the patches (up to epsilon)
    out = patches @ kernel[:, :12]
    np.testing.assert_allclose(out.T @ out / len(out), np.diag(values[::-1] / (values[::-1] + 1e-3)),
                               atol=1e-6)
    with pytest.raises(ValueError, match="adapt"):
        initializers.PatchWhitening()((2, 2, 3, 24))
    with pytest.raises(ValueError, match="fitted for kernels of shape"):
        whitening((3, 3, 3, 24))


def test_initialize_from_data_sets_a_built_layer(active_backend):
    images = np.random.default_rng(0).normal(size=(10, 5, 5, 3)).astype(np.float32)
    model = Sequential([layers.Input((5, 5, 3)), layers.Conv2D(24, 2, name="whiten")])
    layer = model.get_layer("whiten")
    bias = layer.get_weights()[1]
    initializers.initialize_from_data(layer, images, kernel=initializers.PatchWhitening())
    np.testing.assert_allclose(layer.get_weights()[0],
                               initializers.PatchWhitening().adapt(images)((2, 2, 3, 24)), rtol=1e-6)
    np.testing.assert_array_equal(layer.get_weights()[1], bias)
    with pytest.raises(ValueError, match="no weight 'gamma'"):
        initializers.initialize_from_data(layer, images, gamma=initializers.PatchWhitening())


def test_dirac_convolution_is_the_identity(active_backend):
    x = np.random.default_rng(0).normal(size=(2, 5, 5, 4)).astype(np.float32)
    same = Sequential([layers.Input((5, 5, 4)), layers.Conv2D(4, 3, padding="same", use_bias=False,
                                                              kernel_initializer="dirac")])
    np.testing.assert_allclose(same.predict(x), x, rtol=1e-6, atol=1e-6)
    wider = initializers.get("dirac")((3, 3, 4, 6))
    assert np.array_equal(wider[..., :4], initializers.get("dirac")((3, 3, 4, 4)))
    assert np.all(np.abs(wider[..., 4:]) <= 1 / np.sqrt(36)) and np.any(wider[..., 4:] != 0)
    with pytest.raises(ValueError, match="conv kernel shape"):
        initializers.get("dirac")((3, 4))


# ------------------------------------------------------------------- data pipeline
def test_alternating_flip_iterator_flips_every_other_epoch_and_translates():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(10, 6, 6, 1), dtype=np.uint8)
    plain = AlternatingFlipIterator(x, np.arange(10), batch_size=4, translate=0, shuffle=False, seed=1)
    assert len(plain) == 2   # drop_last
    base = plain.base_flips()
    assert 0 < base.sum() < 10
    for epoch in range(3):
        plain.on_epoch_begin(epoch)
        batches = [b.copy() for b, _ in plain]
        flips = base ^ (epoch % 2)
        for k, image in enumerate(np.concatenate(batches)[..., 0]):
            want = x[k, :, :, 0][:, ::-1] if flips[k] else x[k, :, :, 0]
            np.testing.assert_allclose(image, want / 255.0, rtol=1e-6)

    moved = AlternatingFlipIterator(x, np.arange(10), batch_size=5, translate=2, seed=2)
    padded = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="reflect")[..., 0] / 255.0
    shifts = set()
    for images, labels in moved:
        for image, label in zip(images[..., 0], labels):
            found = [(dy, dx) for dy in range(5) for dx in range(5) for f in (False, True)
                     if np.allclose((padded[label, dy:dy + 6, dx:dx + 6])[:, ::-1 if f else 1], image)]
            assert found, "each image is a window of the reflect-padded image"
            shifts.update(found)
    assert len(shifts) > 3
    state = moved.get_state()
    again = AlternatingFlipIterator(x, np.arange(10), batch_size=5, translate=2, seed=99)
    again.set_state(state)
    first = [b.copy() for b, _ in moved]
    np.testing.assert_array_equal(np.concatenate(first), np.concatenate([b.copy() for b, _ in again]))
    with pytest.raises(ValueError, match="translate"):
        AlternatingFlipIterator(x, batch_size=2, translate=-1)


# -------------------------------------------------------------------------- recipe
def test_airbench94_network_and_recipe_settings():
    minidl.set_backend("numpy")
    model = zoo.build("airbench94")
    assert model.count_params() == 1_973_944 and model.output_shape == (None, 10)
    recipe = Airbench94()
    assert recipe.total_steps(48) == 476 and recipe.fit_epochs == 10   # airbench's 9.9 epochs
    optimizer = recipe.optimizer(476)
    assert isinstance(optimizer, optimizers.Lookahead) and optimizer.sync_period == 5
    assert optimizer.decay(476) == pytest.approx(0.95 ** 5) and optimizer.decay(238) == pytest.approx(0.95 ** 5 / 8)
    sgd = optimizer.inner_optimizer
    assert isinstance(sgd, optimizers.TorchSGD) and sgd.nesterov and sgd.momentum == 0.85
    assert optimizer.current_learning_rate() == pytest.approx(0.2 * 1.5)
    optimizer.iterations = int(476 * 0.23)
    assert optimizer.current_learning_rate() == pytest.approx(1.5)
    # airbench's torch group weight_decay wd * batch / lr, for the batch-sum loss: / batch here
    assert sgd.weight_decay == pytest.approx(0.0153 / 11.5)
    paths = model.graph.trainable_weight_paths()
    optimizer.build(model.backend, [w.value for w in model.trainable_weights], paths)
    multipliers = dict(zip(paths, sgd._multipliers))
    assert multipliers["whiten/kernel"] == 0 and multipliers["whiten/bias"] == 1
    assert multipliers["group2_norm1/beta"] == 64 and multipliers["group2_conv1/kernel"] == 1


def test_airbench94_trains_alike_on_every_backend():
    """Two recipe steps from one initialization give the same losses on every backend."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(64, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=64)
    losses = {}
    for name in [b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()]:
        minidl.set_backend(name)
        minidl.set_seed(0)
        recipe = Airbench94(epochs=1, batch_size=32)
        train = recipe.train_data(x, y, seed=0, prefetch=False)
        model = recipe.build(x, len(train))
        history = model.fit(train, epochs=1, verbose=0, callbacks=recipe.callbacks(len(train)))
        losses[name] = history.history["loss"][0]
        kernel = model.get_layer("whiten").get_weights()[0]
        np.testing.assert_allclose(kernel, initializers.PatchWhitening().adapt(recipe.normalize(x))(kernel.shape),
                                   rtol=1e-4, atol=1e-5)   # frozen
    minidl.set_backend("numpy")
    assert np.isfinite(losses["numpy"])
    for name, loss in losses.items():
        assert loss == pytest.approx(losses["numpy"], rel=2e-3), (name, losses)


def test_cifar10_example_runs_airbench94_on_a_small_subset(tmp_path):
    write_small_cifar(tmp_path / "data")
    done = run_example(["--backend", "cpu", "--model", "airbench94", "--data-dir", str(tmp_path / "data"),
                        "--batch-size", "32", "--epochs", "2", "--test-limit", "16", "--verbose", "0"],
                       tmp_path)
    assert done.returncode == 0, done.stderr
    assert "epoch 1/2:" in done.stdout and "epoch 2/2:" in done.stdout and "loss" in done.stdout
    assert "with test-time augmentation (flip_translate)" in done.stdout
    assert "summary: airbench94 on cpu" in done.stdout and "s in all" in done.stdout
    refused = run_example(["--model", "airbench94", "--optimizer", "adam"], tmp_path)
    assert refused.returncode != 0 and "trains with its recipe" in refused.stderr


@pytest.mark.parametrize("size", [7, 3])
def test_cpu_backward_filter_at_airbench_shapes_matches_numpy(size):
    """7x7 and 3x3 images at 256 channels take im2col's backward-filter in chunks of 96 rows
    (csrc/conv.c): several chunks, split between threads, against the numpy backend."""
    from minidl.backends.cpu import create
    from minidl.backends.numpy_backend import NumpyBackend
    rng = np.random.default_rng(size)
    x = rng.standard_normal((9, size, size, 256), dtype=np.float32)
    dout = rng.standard_normal((9, size, size, 32), dtype=np.float32)
    results = []
    for backend in (create(), NumpyBackend()):
        plan = backend.conv2d_plan(x.shape, (3, 3, 256, 32), (1, 1), "same")
        dw, db = backend.empty((3, 3, 256, 32)), backend.empty((32,))
        backend.conv2d_backward_filter(dw, db, backend.from_numpy(dout), backend.from_numpy(x), plan)
        results.append((backend.to_numpy(dw), backend.to_numpy(db)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-4, atol=2e-3)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-3)


def test_airbench94_head_keeps_pytorchs_default_linear_draw():
    # airbench's nn.Linear(256, 10) weights are uniform(+-1/sqrt(256)) = +-1/16, not Keras's +-0.05
    minidl.set_backend("numpy")
    minidl.utils.set_random_seed(0)
    kernel = zoo.build("airbench94").get_layer("head").get_weights()[0]
    assert kernel.shape == (256, 10)
    assert 0.058 < np.abs(kernel).max() <= 1 / 16
    assert np.std(kernel) == pytest.approx(1 / 16 / np.sqrt(3), rel=0.1)
    conv = initializers.get("torch_uniform")((3, 3, 8, 4))   # fan_in 3 * 3 * 8 = 72
    assert np.abs(conv).max() <= 1 / np.sqrt(72) and np.abs(conv).max() > 0.9 / np.sqrt(72)



def test_airbench94_resumed_run_ends_bitwise_equal(tmp_path):
    """A recipe run saved after its first epoch and resumed from the file (the lookahead's slow
    weights and the optimizer in it, the recipe's callbacks passed again: the whitening-bias
    freeze, the stop inside a fractional last epoch) ends with the uninterrupted run's weights."""
    minidl.set_backend("cpu")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(48, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=48)
    recipe = Airbench94(epochs=2.5, batch_size=16, whiten_bias_epochs=1)
    runs = []
    for stop in (None, 1):
        minidl.set_seed(0)
        train = recipe.train_data(x, y, seed=0, prefetch=False)
        model = recipe.build(x, len(train))
        path = str(tmp_path / f"run{stop}.mdl")
        model.fit(train, epochs=stop or recipe.fit_epochs, verbose=0,
                  callbacks=recipe.callbacks(len(train)) + [callbacks.ModelCheckpoint(path)])
        if stop:
            model = minidl.models.load_model(path)
            assert isinstance(model.optimizer, optimizers.Lookahead) and model.optimizer.iterations == 3
            model.fit(train, epochs=recipe.fit_epochs, initial_epoch=model.trained_epochs, verbose=0,
                      callbacks=recipe.callbacks(len(train)))
        runs.append(model)
    whole, resumed = runs
    assert whole.optimizer.iterations == resumed.optimizer.iterations == 8   # ceil(2.5 * 3)
    for a, b in zip(whole.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_cifar10_example_resumes_airbench94(tmp_path):
    write_small_cifar(tmp_path / "data")
    common = ["--backend", "cpu", "--model", "airbench94", "--data-dir", str(tmp_path / "data"),
              "--batch-size", "32", "--test-limit", "16", "--verbose", "0",
              "--checkpoint", str(tmp_path / "run.mdl")]
    first = run_example(common + ["--epochs", "1.5"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "epoch 2/1.5:" in first.stdout   # ceil(1.5 * 3) = 5 steps: the second epoch cut short
    first = run_example(common + ["--epochs", "1"], tmp_path)
    resumed = run_example(common + ["--epochs", "2", "--resume"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 epochs done" in resumed.stdout and "epoch 2/2:" in resumed.stdout
    wrong = run_example(common + ["--epochs", "2.5", "--model", "resnet20"], tmp_path)
    assert wrong.returncode != 0 and "whole number" in wrong.stderr
