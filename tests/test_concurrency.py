"""A model runs fit, evaluate, predict and its weight calls in one thread at a time: a
second thread gets ModelInUseError at once, instead of outputs computed with buffers that
the training step is overwriting, or training steps lost between two fits."""

import threading

import numpy as np
import pytest

import minidl
from minidl import callbacks, layers
from minidl.models import Sequential
from minidl.models.concurrency import ModelInUseError


def build():
    minidl.set_backend("numpy")   # the threads share this process-wide choice
    minidl.set_seed(2)
    model = Sequential([layers.Input((6,)), layers.Dense(8, activation="relu"),
                        layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


X = np.random.default_rng(0).normal(size=(64, 6)).astype(np.float32)
Y = np.arange(64) % 3


class HoldAtBatch(callbacks.Callback):
    """Holds fit inside batch 2 until released, so another thread can try the model."""

    def __init__(self):
        super().__init__()
        self.inside, self.release = threading.Event(), threading.Event()

    def on_train_batch_end(self, batch, logs=None):
        if batch == 2:
            self.inside.set()
            assert self.release.wait(30)


def test_a_second_thread_is_refused_while_fit_runs():
    model = build()
    hold, errors = HoldAtBatch(), []
    weights = model.get_weights()

    def train():
        try:
            model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[hold])
        except BaseException as exc:   # reported below: a failure here must fail the test
            errors.append(exc)

    thread = threading.Thread(target=train, name="trainer")
    thread.start()
    try:
        assert hold.inside.wait(30)
        calls = {"predict": lambda: model.predict(X), "fit": lambda: model.fit(X, Y, verbose=0),
                 "evaluate": lambda: model.evaluate(X, Y),
                 "predict_on_batch": lambda: model.predict_on_batch(X[:4]),
                 "train_on_batch": lambda: model.train_on_batch(X[:4], Y[:4]),
                 "set_weights": lambda: model.set_weights(weights),
                 "get_weights": model.get_weights,
                 "compile": lambda: model.compile(optimizer="sgd", loss="mse")}
        for name, call in calls.items():
            with pytest.raises(ModelInUseError, match=rf"\.{name}\(\): the model is running "
                                                      r"fit\(\) in thread 'trainer'"):
                call()
    finally:
        hold.release.set()
        thread.join(30)
    assert errors == []
    assert model.optimizer.iterations == 2 * 8            # no step lost or added
    reference = build()
    reference.fit(X, Y, batch_size=8, epochs=2, verbose=0)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))   # usable again


def test_the_training_thread_may_use_the_model_from_its_callbacks(tmp_path):
    """Inside fit, in its own thread, a callback may predict, evaluate and save."""
    model = build()
    seen = []

    class UseModel(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((model.predict(X[:5]).shape, len(model.evaluate(X, Y))))
            model.save(tmp_path / "m.minidl")

    model.fit(X, Y, batch_size=16, epochs=2, verbose=0, callbacks=[UseModel()])
    assert seen == [((5, 3), 2)] * 2 and (tmp_path / "m.minidl").exists()


def test_threads_take_turns_without_error_when_calls_do_not_overlap():
    model, results = build(), []
    for _ in range(3):
        thread = threading.Thread(target=lambda: results.append(model.predict(X)))
        thread.start()
        thread.join(30)
    assert len(results) == 3 and all(np.array_equal(r, results[0]) for r in results)
