"""Behaviours of Keras 3 that public scripts rely on (issue 24), each checked on every backend
where one is involved."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops


def _mnist_like_model():
    inputs = minidl.Input((28, 28, 1))
    x = layers.Conv2D(2, 3)(inputs)
    outputs = layers.Dense(3, activation="softmax")(layers.Flatten()(x))
    model = minidl.Model(inputs, outputs)
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_an_array_without_the_trailing_1_axis_fits_input(active_backend):
    """Keras's Functional._adjust_input_rank: (N, 28, 28) is fed to Input((28, 28, 1))."""
    model = _mnist_like_model()
    x = np.random.default_rng(0).random((6, 28, 28)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2])
    np.testing.assert_allclose(model.predict(x, verbose=0), model.predict(x[..., None], verbose=0),
                               rtol=1e-6)
    history = model.fit(x, y, batch_size=3, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert np.isfinite(model.evaluate(x, y, verbose=0)[0])
    assert model(x).shape == (6, 3)


def test_an_extra_trailing_1_axis_is_dropped(active_backend):
    inputs = minidl.Input((5,))
    model = minidl.Model(inputs, layers.Dense(2)(inputs))
    x = np.ones((4, 5, 1), np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), model.predict(x[..., 0], verbose=0))
    with pytest.raises(ValueError, match=r"expects x of shape \(None, 5\)"):
        model.predict(np.ones((4, 5, 2)), verbose=0)   # only a 1 axis is added or dropped


class _Block(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seq = minidl.Sequential([layers.Dense(4, activation="relu"), layers.Dense(3)])

    def call(self, x):
        return self.seq(x)


def test_a_sequential_without_input_builds_inside_a_custom_layer(active_backend):
    inputs = minidl.Input((5,))
    model = minidl.Model(inputs, _Block()(inputs))
    assert len(model.weights) == 4 and len(model.trainable_weights) == 4
    assert model.predict(np.ones((2, 5)), verbose=0).shape == (2, 3)
    model.compile("adam", "mse")
    before = [w.copy() for w in model.get_weights()]
    model.fit(np.random.rand(16, 5), np.random.rand(16, 3), epochs=2, verbose=0)
    assert all(np.abs(a - b).max() > 0 for a, b in zip(before, model.get_weights()))


class _LogsSeen(minidl.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def _keep(self, hook, logs):
        self.seen.setdefault(hook, logs)

    def on_train_begin(self, logs=None):
        self._keep("train_begin", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._keep("epoch_begin", logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._keep("batch_begin", logs)

    def on_test_begin(self, logs=None):
        self._keep("test_begin", logs)

    def on_predict_begin(self, logs=None):
        self._keep("predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._keep("predict_end", logs)


def test_logs_is_a_dict_in_the_begin_hooks(active_backend):
    model = minidl.Sequential([layers.Input((2,)), layers.Dense(1)])
    model.compile("sgd", "mse")
    cb = _LogsSeen()
    x, y = np.ones((4, 2)), np.ones((4, 1))
    model.fit(x, y, epochs=1, verbose=0, callbacks=[cb])
    model.evaluate(x, y, verbose=0, callbacks=[cb])
    model.predict(x, verbose=0, callbacks=[cb])
    for hook in ("train_begin", "epoch_begin", "batch_begin", "test_begin", "predict_begin",
                 "predict_end"):
        assert isinstance(cb.seen[hook], dict), hook


class _Student(minidl.Model):
    """A subclass whose compile takes arguments Model.compile does not (Keras's distiller)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(2)

    def call(self, x):
        return self.dense(x)

    def compile(self, optimizer, metrics, student_loss_fn, alpha=0.1):
        super().compile(optimizer=optimizer, loss=student_loss_fn, metrics=metrics)
        self.alpha = alpha


def test_a_deferred_compile_is_replayed_with_model_compile_s_arguments(active_backend):
    model = _Student()
    model.compile(optimizer="adam", metrics=["accuracy"], student_loss_fn="mse", alpha=0.5)
    history = model.fit(np.ones((8, 3)), np.zeros((8, 2)), epochs=1, verbose=0)
    assert model.alpha == 0.5 and set(history.history) >= {"loss", "accuracy"}


def test_register_keras_serializable_registers_functions():
    @minidl.saving.register_keras_serializable(package="behaviours")
    def halve(x):
        return x * 0.5

    assert minidl.saving.get_registered_name(halve) == "behaviours>halve"
    assert minidl.saving.get_registered_object("behaviours>halve") is halve
    assert minidl.utils.get_registered_name(halve) == "behaviours>halve"


class _SqueezeAll(layers.Layer):
    def call(self, x):
        return ops.squeeze(x)


class _SumOverBatch(layers.Layer):
    def call(self, x):
        return ops.sum(x, axis=0)


def test_a_call_that_squeezes_every_unit_axis_keeps_the_batch_axis(active_backend):
    """Keras's symbolic (None, 3, 1) squeezes to (None, 3): the batch axis is not a 1."""
    inputs = minidl.Input((3, 1))
    out = _SqueezeAll()(inputs)
    assert out.shape == (None, 3)
    model = minidl.Model(inputs, layers.Dense(2)(out))
    assert model.predict(np.ones((4, 3, 1)), verbose=0).shape == (4, 2)
    with pytest.raises(ValueError, match="call must keep the batch axis in a model"):
        _SumOverBatch()(minidl.Input((3,)))   # a model's graph carries batches only


def test_a_call_that_drops_the_batch_axis_runs_eagerly(active_backend):
    """Keras 3.15.1 (side venv): the layer on a (2, 3) array of ones returns [2, 2, 2], and
    called on another batch size it returns that batch's sum; inside another layer's call it
    is one more op, also in a model that trains."""
    layer = _SumOverBatch()
    np.testing.assert_array_equal(layer(np.ones((2, 3), "float32")), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(layer(np.ones((4, 3), "float32")), [4.0, 4.0, 4.0])

    class Scaled(layers.Layer):
        def __init__(self):
            super().__init__()
            self.total = _SumOverBatch()

        def call(self, x):
            return x * ops.mean(self.total(x))

    inputs = minidl.Input((3,))
    model = minidl.Model(inputs, layers.Dense(1)(Scaled()(inputs)))
    model.compile("sgd", "mse")
    history = model.fit(np.ones((4, 3)), np.ones((4, 1)), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert model.predict(np.ones((2, 3)), verbose=0).shape == (2, 1)
