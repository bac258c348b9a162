"""Losses and metrics on outputs with more than one non-batch axis, e.g. a conv output
(N, H, W, K): as Keras does, each position is scored over the last axis, then the mean is
taken over every position of every sample.

A 1x1 convolution is a Dense layer applied at every position, so a conv model on
(N, H, W, C) inputs must give the loss, metrics and update of the Dense model trained
on the N*H*W rows of C values: that comparison checks forward, gradient scale and metric
counts on every backend.
"""

import numpy as np
import pytest

import minidl
from minidl import layers, losses, optimizers
from minidl.models import Sequential

BACKENDS = minidl.available_backends()
N, H, W, C, K = 6, 3, 4, 5, 4


@pytest.fixture(autouse=True)
def restore_backend():
    yield
    minidl.set_backend("numpy")


def _targets(kind, rng, shape):
    """Targets for `shape` outputs (..., K): one-hot, 0/1, real values or class labels."""
    labels = rng.integers(0, K, size=shape[:-1])
    if kind == "labels":
        return labels
    if kind == "onehot":
        return np.eye(K, dtype=np.float32)[labels]
    if kind == "binary":
        return (rng.random(shape) > 0.5).astype(np.float32)
    return rng.normal(size=shape).astype(np.float32)


CASES = [  # (loss, output activation, targets)
    ("mse", "linear", "real"),
    ("binary_crossentropy", "sigmoid", "binary"),
    (lambda: losses.BinaryCrossentropy(from_logits=True), "linear", "binary"),
    ("categorical_crossentropy", "softmax", "onehot"),
    (lambda: losses.CategoricalCrossentropy(from_logits=True), "linear", "onehot"),
    ("sparse_categorical_crossentropy", "softmax", "labels"),
]
IDS = ["mse", "bce", "bce-logits", "cce", "cce-logits", "sparse-cce"]


def _pair(backend, loss, activation):
    """(conv model on (H, W, C), dense model on (C,)) with the same weights, compiled alike."""
    minidl.set_backend(backend)
    minidl.set_seed(1)
    conv = Sequential([layers.Input((H, W, C)), layers.Conv2D(K, 1, activation=activation)])
    dense = Sequential([layers.Input((C,)), layers.Dense(K, activation=activation)])
    kernel, bias = conv.get_weights()
    dense.set_weights([kernel.reshape(C, K), bias])
    for model in (conv, dense):
        model.compile(optimizer=optimizers.SGD(0.5), metrics=["accuracy"],
                      loss=loss() if callable(loss) else loss)
    return conv, dense


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("loss, activation, kind", CASES, ids=IDS)
def test_a_conv_output_is_scored_per_position_like_rows(backend, loss, activation, kind):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N, H, W, C)).astype(np.float32)
    y = _targets(kind, rng, (N, H, W, K))
    conv, dense = _pair(backend, loss, activation)
    rows_x, rows_y = x.reshape(-1, C), y.reshape((N * H * W,) + y.shape[3:])

    np.testing.assert_allclose(conv.evaluate(x, y), dense.evaluate(rows_x, rows_y, batch_size=N * H * W),
                               rtol=2e-5, atol=1e-6)
    got, want = conv.train_on_batch(x, y), dense.train_on_batch(rows_x, rows_y)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    (k_conv, b_conv), (k_dense, b_dense) = conv.get_weights(), dense.get_weights()
    np.testing.assert_allclose(k_conv.reshape(C, K), k_dense, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(b_conv, b_dense, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fit_on_a_conv_output_matches_keras_means(backend):
    """The reported case: mse and binary_crossentropy on a (6, 6) conv output used to raise
    an internal error in fit; the loss is the Keras mean over positions and last axis."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 8, 8, 2)).astype(np.float32)
    y = (rng.random((40, 6, 6, 3)) > 0.5).astype(np.float32)
    for loss, activation in (("mse", "linear"), ("binary_crossentropy", "sigmoid")):
        minidl.set_backend(backend)
        model = Sequential([layers.Input((8, 8, 2)), layers.Conv2D(3, 3, activation=activation)])
        model.compile(optimizer="adam", loss=loss, metrics=["binary_accuracy"])
        history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)
        assert len(history.history["loss"]) == 2
        p = model.predict(x).astype(np.float64)
        if loss == "mse":
            want = np.mean(np.mean((p - y) ** 2, axis=-1))
        else:
            p = np.clip(p, 1e-7, 1 - 1e-7)
            want = np.mean(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p), axis=-1))
        loss_value, accuracy = model.evaluate(x, y)
        np.testing.assert_allclose(loss_value, want, rtol=1e-4)
        np.testing.assert_allclose(accuracy, np.mean((p > 0.5) == (y > 0.5)), atol=1e-6)


def test_sparse_labels_per_position_and_their_errors():
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((H, W, C)), layers.Conv2D(K, 1, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(2)
    x, labels = rng.normal(size=(N, H, W, C)).astype(np.float32), rng.integers(0, K, (N, H, W))
    assert model.evaluate(x, labels) == model.evaluate(x, labels[..., None])
    p = model.predict(x)
    np.testing.assert_allclose(model.evaluate(x, labels)[1], np.mean(p.argmax(-1) == labels),
                               atol=1e-6)
    with pytest.raises(ValueError, match=r"y: .*expects integer class labels of shape "
                                         r"\(N, 3, 4\) or \(N, 3, 4, 1\), got shape \(6,\)"):
        model.fit(x, labels[:, 0, 0], verbose=0)
