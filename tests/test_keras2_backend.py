"""Keras 2's `K.` tensor functions (minidl.backend) on every backend, as mnist_siamese uses them."""

import numpy as np
import pytest

import minidl
from minidl import backend as K
from minidl import layers, optimizers

X = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -0.25]], np.float32)


@pytest.mark.parametrize("call, expected", [
    (lambda: K.sum(K.square(X), axis=1, keepdims=True), np.sum(X * X, axis=1, keepdims=True)),
    (lambda: K.mean(X), np.mean(X)),
    (lambda: K.max(X, axis=0), X.max(axis=0)),
    (lambda: K.sqrt(K.maximum(K.abs(X), K.epsilon())), np.sqrt(np.maximum(np.abs(X), 1e-7))),
    (lambda: K.argmax(X), X.argmax(axis=-1)),
    (lambda: K.concatenate([X, X]), np.concatenate([X, X], axis=-1)),
    (lambda: K.relu(X, alpha=0.1, max_value=3.5), np.minimum(np.where(X >= 0, X, 0.1 * X), 3.5)),
    (lambda: K.relu(X, threshold=1.0), np.where(X >= 1.0, X, 0.0)),
    (lambda: K.pow(K.abs(X), 3), np.abs(X) ** 3),
    (lambda: K.clip(X, -1.0, 1.0), np.clip(X, -1.0, 1.0)),
    (lambda: K.batch_flatten(X.reshape(2, 3, 1)), X),
    (lambda: K.flatten(X), X.ravel()),
    (lambda: K.transpose(X), X.T),
    (lambda: K.softmax(X), np.exp(X) / np.exp(X).sum(axis=-1, keepdims=True)),
    (lambda: K.cast(K.less(X, 0.5), "float32"), (X < 0.5).astype(np.float32)),
])
def test_keras2_functions_match_numpy(active_backend, call, expected):
    np.testing.assert_allclose(np.asarray(call()), expected, rtol=1e-6, atol=1e-6)


def test_int_shape():
    assert K.int_shape(X) == (2, 3)


def euclidean_distance(vects):
    x, y = vects
    return K.sqrt(K.maximum(K.sum(K.square(x - y), axis=1, keepdims=True), K.epsilon()))


def contrastive_loss(y_true, y_pred):
    margin = 1
    return K.mean(y_true * K.square(y_pred) + (1 - y_true) * K.square(K.maximum(margin - y_pred, 0)))


def accuracy(y_true, y_pred):
    return K.mean(K.equal(y_true, K.cast(y_pred < 0.5, "float32")))


def test_mnist_siamese_functions_train_a_shared_base(active_backend):
    """The classic script's Lambda distance, loss and metric, written with K, on a shared base."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(2, 6)) * 3
    first, same = rng.integers(0, 2, 256), rng.integers(0, 2, 256)
    second = np.where(same == 1, first, 1 - first)
    a = (centers[first] + rng.normal(size=(256, 6)) * 0.3).astype(np.float32)
    b = (centers[second] + rng.normal(size=(256, 6)) * 0.3).astype(np.float32)
    minidl.set_seed(2)
    base = minidl.Sequential([layers.Input((6,)), layers.Dense(8, activation="relu")])
    in_a, in_b = layers.Input((6,)), layers.Input((6,))
    distance = layers.Lambda(euclidean_distance)([base(in_a), base(in_b)])
    model = minidl.Model([in_a, in_b], distance)
    model.compile(loss=contrastive_loss, optimizer=optimizers.RMSprop(0.01), metrics=[accuracy])
    history = model.fit([a, b], same.astype(np.float32), batch_size=32, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses
    assert history.history["accuracy"][-1] > 0.9
