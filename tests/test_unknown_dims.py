"""Input(shape=(None, ...)): dimensions known only from the data, as Keras 3 has them.

Every test runs with each backend active (active_backend); results are compared with the
numpy backend's, the reference."""

import gc
import os
import weakref

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends.window import Window2D


def _seeded_weights(model, seed=1):
    """The same weights on every backend (BatchNormalization keeps its initial ones)."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if not isinstance(layer, layers.BatchNormalization):
            layer.set_weights([rng.normal(scale=0.3, size=w.shape).astype(np.float32)
                               for w in layer.get_weights()])


class _NoShape(layers.Layer):
    """A custom layer whose call uses another layer and that gives no compute_output_shape."""

    def __init__(self):
        super().__init__()
        self.inner = layers.Dense(2)

    def call(self, x):
        return self.inner(x)


def _classifier():
    inp = minidl.Input((None, None, 3))
    x = layers.Conv2D(6, 3, padding="same", activation="relu")(inp)
    x = layers.BatchNormalization()(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(5, 3, strides=2, activation="relu")(x)
    x = layers.AveragePooling2D(padding="same")(x)
    x = layers.Concatenate()([layers.GlobalAveragePooling2D()(x),
                              layers.GlobalMaxPooling2D()(x)])
    return minidl.Model(inp, layers.Dense(4, activation="softmax")(x))


def _segmenter():
    inp = minidl.Input((None, None, 3))
    x = layers.ZeroPadding2D(1)(inp)
    x = layers.Conv2D(4, 3, activation="relu")(x)
    x = layers.Cropping2D(((1, 0), (0, 1)))(layers.ZeroPadding2D(((1, 0), (0, 1)))(x))
    return minidl.Model(inp, layers.Conv2D(3, 1, activation="softmax")(x))


def _train_and_predict(make, backend, x, y, x_new, val=None):
    minidl.set_backend(backend)
    model = make()
    _seeded_weights(model)
    model.compile(minidl.optimizers.SGD(0.05), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0,
                        validation_data=val)
    return history.history, model.predict(x_new, batch_size=3), model


def _data(seed, n, h, w):
    return np.random.default_rng(seed).normal(size=(n, h, w, 3)).astype(np.float32)


def test_fully_convolutional_trains_on_16_predicts_on_24(active_backend):
    x, x_new = _data(0, 8, 16, 16), _data(1, 5, 24, 24)
    y = np.random.default_rng(2).integers(0, 4, 8)
    val = (_data(3, 4, 20, 20), np.arange(4))
    ref_hist, ref, _ = _train_and_predict(_classifier, "numpy", x, y, x_new, val)
    hist, out, model = _train_and_predict(_classifier, active_backend, x, y, x_new, val)
    assert out.shape == (5, 4) and np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-5)
    for key in ("loss", "val_loss"):
        np.testing.assert_allclose(hist[key], ref_hist[key], rtol=2e-4)
    # another size again, and the first one: the plans follow the batch
    np.testing.assert_allclose(model.predict(x[:3]), model.predict(x)[:3], rtol=1e-5, atol=1e-6)
    assert model.predict(_data(4, 2, 9, 13)).shape == (2, 4)


def test_output_with_unknown_dims_takes_each_batch_shape(active_backend):
    """A per-pixel output (None, None, None, 3): targets, losses and metrics of each call
    are sized from its data (fit on 16x16 with 12x12 validation data, evaluate on 24x24)."""
    rng = np.random.default_rng(5)
    x, x_new = _data(0, 8, 16, 16), _data(1, 3, 24, 24)
    y = rng.integers(0, 3, (8, 16, 16))
    val = (_data(2, 4, 12, 12), rng.integers(0, 3, (4, 12, 12)))
    ref_hist, ref, _ = _train_and_predict(_segmenter, "numpy", x, y, x_new, val)
    hist, out, model = _train_and_predict(_segmenter, active_backend, x, y, x_new, val)
    assert model.output_shape == (None, None, None, 3) and out.shape == (3, 24, 24, 3)
    np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-5)
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(hist[key], ref_hist[key], rtol=2e-4, atol=1e-6)
    y_new = rng.integers(0, 3, (3, 24, 24))
    loss, acc = model.evaluate(x_new, y_new, verbose=0)
    expected = -np.mean(np.log(np.take_along_axis(out, y_new[..., None], -1)))
    np.testing.assert_allclose(loss, expected, rtol=1e-4)
    np.testing.assert_allclose(acc, np.mean(out.argmax(-1) == y_new), rtol=1e-6)
    weights = np.array([2.0, 0.0, 0.5], np.float32)   # Keras: sum(w * loss) / samples
    per_sample = -np.log(np.take_along_axis(out, y_new[..., None], -1)).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(model.evaluate(x_new, y_new, sample_weight=weights, verbose=0)[0],
                               np.sum(weights * per_sample) / 3, rtol=1e-4)
    with pytest.raises(ValueError, match=r"targets of shape|expects"):
        model.evaluate(x_new, rng.integers(0, 3, (3, 16, 16)), verbose=0)


def test_sequence_of_unknown_length(active_backend):
    """Input((None, 16)): Dense works on the last axis of each position, whatever the
    length; a sequence predicts what its positions predict one by one."""
    inp = minidl.Input((None, 16))
    x = layers.Dense(8, activation="relu")(inp)
    x = layers.LayerNormalization()(x)
    model = minidl.Model(inp, layers.Dense(3)(x))
    assert model.output_shape == (None, None, 3)
    model.compile("adam", "mse")
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(6, 5, 16)), rng.normal(size=(6, 5, 3)), verbose=0)
    seq = rng.normal(size=(2, 7, 16)).astype(np.float32)
    out = model.predict(seq)
    assert out.shape == (2, 7, 3)
    one_by_one = np.stack([model.predict(seq[:, t:t + 1])[:, 0] for t in range(7)], axis=1)
    np.testing.assert_allclose(out, one_by_one, rtol=1e-5, atol=1e-6)


def test_summary_and_shapes_show_none(active_backend):
    model = _classifier()
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(None, None, None, 3)" in text and "(None, None, None, 6)" in text
    assert "(None, 5)" in text and "(None, 10)" in text
    assert model.input_shape == (None, None, None, 3)
    assert model.layers[1].output.shape == (None, None, None, 6)


@pytest.mark.parametrize("build, match", [
    (lambda i: layers.Dense(3)(layers.Flatten()(i)), r"Dense 'dense.*'.*last dimension.*\(None, None\)"),
    (lambda i: layers.Dense(3)(minidl.Input((4, None))), r"Dense .*last dimension.*\(None, 4, None\)"),
    (lambda i: layers.Conv2D(2, 3)(minidl.Input((None, None, None))), r"Conv2D .*'kernel'.*\(3, 3, None, 2\)"),
    (lambda i: layers.BatchNormalization()(minidl.Input((5, None))), r"BatchNormalization .*\(None, 5, None\)"),
    (lambda i: _NoShape()(i), r"_NoShape .*unknown \(None\) dims.*compute_output_shape"),
    (lambda i: layers.Conv2D(2, 5)(minidl.Input((None, 3, 1))), r"Conv2D .*kernel \(5, 5\) is larger.*\(None, None, 3, 1\)"),
])
def test_layers_that_need_a_known_dim_say_so(active_backend, build, match):
    with pytest.raises(ValueError, match=match):
        build(minidl.Input((None, None, 3)))


def test_batches_that_do_not_fit_are_refused_by_name(active_backend):
    model = minidl.Sequential([minidl.Input((None, None, 3)), layers.Conv2D(2, 3),
                               layers.MaxPooling2D(4), layers.GlobalAveragePooling2D()])
    with pytest.raises(ValueError, match=r"expects x of shape \(None, None, None, 3\), got \(1, 8, 8, 4\)"):
        model.predict(np.zeros((1, 8, 8, 4)))
    with pytest.raises(ValueError, match=r"Conv2D 'conv2d.*kernel \(3, 3\) is larger than its input \(None, 2, 9, 3\)"):
        model.predict(np.zeros((1, 2, 9, 3)))
    with pytest.raises(ValueError, match=r"MaxPooling2D .*pool_size \(4, 4\) is larger.*\(None, 3, 3, 2\)"):
        model.predict(np.zeros((1, 5, 5, 3)))
    assert model.predict(np.zeros((1, 6, 9, 3))).shape == (1, 2)


def test_save_load_and_config_keep_none(active_backend, tmp_path):
    model = _classifier()
    _seeded_weights(model)
    x = _data(0, 2, 11, 17)
    config = model.get_config()
    assert [None, None, 3] in [list(spec["config"].get("shape", [])) for spec in config["layers"]]
    clone = minidl.Model.from_config(config)
    assert clone.input_shape == (None, None, None, 3)
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    loaded = minidl.models.load_model(path)
    assert loaded.input_shape == (None, None, None, 3)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    seq = minidl.Sequential([minidl.Input((None, None, 3)), layers.Conv2D(2, 3),
                             layers.GlobalMaxPooling2D()])
    seq.save(path)
    again = minidl.models.load_model(path)
    np.testing.assert_array_equal(again.predict(x), seq.predict(x))
    built = minidl.Sequential([layers.Conv2D(2, 3), layers.GlobalAveragePooling2D()])
    built.build((None, None, None, 3))
    assert built.output_shape == (None, 2)


def test_one_plan_and_one_buffer_set_whatever_the_shapes(active_backend):
    """Plans and buffers follow the latest batch: after five image sizes each window layer's
    call (its graph step's context) holds one plan (of the last size) and no buffers beyond
    its roles."""
    model = _classifier()

    def calls():
        return [step.call for step in model.graph._steps]

    def windows():
        return [call for call in calls() if hasattr(call.layer, "_make_plan")]

    model.predict(_data(0, 2, 16, 16))
    slots = [len(call.buffers._slots) for call in calls()]
    plans = []
    for size in (9, 12, 20, 31, 24):
        model.predict(_data(size, 2, size, size + 1))
        plans += [weakref.ref(call.plan) for call in windows()]
    gc.collect()
    alive = [p() for p in plans if p() is not None]
    assert len(alive) == len(windows()) == 5 and all(isinstance(p, Window2D) for p in alive)
    assert all(any(p is call.plan for call in windows()) for p in alive)   # only the latest ones
    assert windows()[0].plan.in_shape == (2, 24, 25, 3)
    assert [len(call.buffers._slots) for call in calls()] == slots


def test_eager_call_and_fixed_shapes_unchanged(active_backend):
    conv = layers.Conv2D(2, 3, padding="same")
    inp = minidl.Input((None, None, 1))
    conv(inp)
    assert conv.output_shape == (None, None, 2)
    assert conv(np.ones((1, 5, 4, 1), np.float32)).shape == (1, 5, 4, 2)
    assert conv(np.ones((2, 3, 7, 1), np.float32)).shape == (2, 3, 7, 2)
    # the same layer on a known size: its call's tensor has that size
    assert conv(minidl.Input((8, 6, 1))).shape == (None, 8, 6, 2)
    fixed = layers.Conv2D(2, 3)
    fixed(minidl.Input((8, 8, 1)))
    assert not fixed._unknown_dims
    with pytest.raises(ValueError, match="was built for input shape"):
        fixed(minidl.Input((9, 8, 1)))


class _Block(layers.Layer):
    """A custom layer with a Conv2D built in build() for unknown sizes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv = layers.Conv2D(4, 3, padding="same")

    def build(self, input_shape):
        self.conv.build(input_shape)

    def call(self, x):
        return minidl.ops.relu(self.conv(x)) + 1.0

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (4,)


class _Scale(layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

    def call(self, x):
        return x * self.w


def test_custom_layers_and_lambda(active_backend):
    """Layers written with minidl.ops: shapes from compute_output_shape, or probed (an
    output dim that follows the unknown input dims is unknown too)."""
    inp = minidl.Input((None, None, 3))
    x = layers.Lambda(lambda t: t * 0.5)(inp)
    x = _Scale()(x)
    x = _Block()(x)
    assert x.shape == (None, None, None, 4)
    x = layers.Lambda(lambda t: minidl.ops.mean(t, axis=(1, 2)))(x)
    assert x.shape == (None, 4)
    model = minidl.Model(inp, layers.Dense(2)(x))
    model.compile("adam", "mse")
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(4, 8, 8, 3)), rng.normal(size=(4, 2)), verbose=0)
    images = _data(3, 2, 13, 11)
    out = model.predict(images)
    assert out.shape == (2, 2)
    # the same weights on a known size give the same numbers
    fixed_in = minidl.Input((13, 11, 3))
    fixed = minidl.Model(fixed_in, model.layers[-1](model.layers[-2](model.layers[-3](
        model.layers[-4](model.layers[-5](fixed_in))))))
    np.testing.assert_allclose(fixed.predict(images), out, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [lambda: layers.Resizing(6, 5), lambda: layers.CenterCrop(4, 6),
                                  lambda: layers.RandomCrop(5, 4, seed=3),
                                  lambda: layers.Resizing(6, 5, crop_to_aspect_ratio=True)])
def test_resampling_layers_plan_each_size(active_backend, make):
    """Resizing, CenterCrop and RandomCrop on unknown sizes: the steps of each new size, the
    same numbers as the layer built for that size, and a training step runs."""
    layer = make()
    inp = minidl.Input((None, None, 3))
    model = minidl.Model(inp, layers.Conv2D(2, 1)(layer(inp)))
    model.compile("sgd", "mse")
    for size in ((9, 7), (5, 10), (9, 7)):
        images = _data(size[0], 2, *size)
        fixed_in = minidl.Input(size + (3,))
        fixed = minidl.Model(fixed_in, model.layers[-1](make()(fixed_in)))
        np.testing.assert_allclose(model.predict(images), fixed.predict(images), rtol=1e-5,
                                   atol=1e-6)
        model.fit(images, np.zeros((2,) + model.output_shape[1:]), verbose=0)
        call = next(step.call for step in model.graph._steps if step.layer is layer)
        assert call.image_steps[1] == size   # the steps this call planned for the batch's size


class _Batches:
    """A data iterator whose batches differ in image size."""

    def __init__(self, batches):
        self.batches = batches

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        return iter(self.batches)


def test_iterator_batches_of_several_sizes(active_backend):
    """Each batch of an iterator may have its own size: the loss is the mean of the batch
    losses (weighted by their samples) and accuracy counts every pixel, as Keras."""
    rng = np.random.default_rng(0)
    model = minidl.Sequential([minidl.Input((None, None, 3)), layers.Conv2D(3, 3, padding="same"),
                               layers.Conv2D(2, 1, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    data = [(_data(s, n, s, s + 1), rng.integers(0, 2, (n, s, s + 1))) for s, n in ((4, 2), (12, 6))]
    history = model.fit(_Batches(data), epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    loss, acc = model.evaluate(_Batches(data), verbose=0)
    probs = [model.predict(x) for x, _ in data]
    means = [-np.log(np.take_along_axis(p, y[..., None], -1)).mean() for p, (_, y) in zip(probs, data)]
    np.testing.assert_allclose(loss, (2 * means[0] + 6 * means[1]) / 8, rtol=1e-4)
    hits = np.concatenate([(p.argmax(-1) == y).ravel() for p, (_, y) in zip(probs, data)])
    np.testing.assert_allclose(acc, hits.mean(), rtol=1e-6)
