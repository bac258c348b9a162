"""Model.add_weight: a subclassed model's own weights (keras-io's Perceiver makes its latent
array in build), trained by fit, listed first in weights / get_weights (Keras 3's order),
counted, and saved and loaded with the model's weights. Expected values were printed by
Keras 3.15.1 (torch backend) running the same code."""

import numpy as np
import pytest

import minidl as keras
from minidl import layers

X = np.array([[0.1, -0.2, 0.3], [0.5, 0.4, -0.1], [-0.3, 0.2, 0.2], [0.0, 0.1, -0.4]], "float32")
Y = np.array([[0.5, -0.5]] * 4, "float32")
W = np.array([[0.1, 0.2], [-0.3, 0.1], [0.2, -0.2]], "float32")
K_D = np.array([[0.3, -0.2], [0.1, 0.2], [-0.4, 0.5]], "float32")


class Scaled(keras.Model):
    """A Dense beside x @ w * s, w and s the model's own (s not trainable); its build does not
    call super().build, as Keras allows."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d = layers.Dense(2, name="d")

    def build(self, input_shape):
        self.w = self.add_weight(shape=(3, 2), initializer="random_normal", trainable=True)
        self.s = self.add_weight(shape=(2,), initializer="ones", trainable=False, name="scale")

    def call(self, x):
        return self.d(x) + keras.ops.matmul(x, self.w) * self.s


class Latent(keras.Model):
    """The Perceiver's pattern: the weight and the sublayers made in build, then super's."""

    def build(self, input_shape):
        self.latent = self.add_weight(shape=(3, 2), initializer="random_normal")
        self.head = layers.Dense(1, name="head")
        super().build(input_shape)

    def call(self, x):
        return self.head(keras.ops.matmul(x, self.latent))


def _fixed():
    model = Scaled(name="scaled")
    model(X)
    model.set_weights([W, np.array([1.0, 2.0], "float32"), K_D, np.zeros(2, "float32")])
    return model


def test_the_model_own_weights_come_first(active_backend):
    model = Scaled(name="scaled")
    out = model(X[:1])
    assert out.shape == (1, 2)
    # Keras 3.15.1: 16 params, 3 trainable weights (variable, d/kernel, d/bias), 1 not (scale)
    assert model.count_params() == 16
    assert [tuple(w.shape) for w in model.weights] == [(3, 2), (2,), (3, 2), (2,)]
    assert [w.name for w in model.non_trainable_weights] == ["scale"]
    assert len(model.trainable_weights) == 3
    assert [a.shape for a in model.get_weights()] == [(3, 2), (2,), (3, 2), (2,)]
    np.testing.assert_array_equal(model.get_weights()[1], [1.0, 1.0])   # "ones"
    lines = []
    model.summary(print_fn=lines.append)
    assert "Total params: 16" in lines and "Trainable params: 14" in lines
    assert "Non-trainable params: 2" in lines


def test_fit_trains_the_weight_as_keras_does(active_backend):
    model = _fixed()
    model.compile(keras.optimizers.SGD(0.1), "mse")
    history = model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    # Keras 3.15.1: history["loss"] and the weights after fit
    np.testing.assert_allclose(history.history["loss"], [0.2960749864578247, 0.23615504801273346],
                               rtol=1e-4)
    expected = [[[0.10049327462911606, 0.1757022589445114], [-0.28908494114875793, 0.0657925009727478],
                 [0.2036038041114807, -0.197806254029274]],
                [1.0, 2.0],
                [[0.3004932701587677, -0.21214888989925385], [0.11091504991054535, 0.18289624154567719],
                 [-0.3963962197303772, 0.5010968446731567]],
                [0.09389825165271759, -0.10653750598430634]]
    for got, want in zip(model.get_weights(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_save_weights_and_load_weights_round_trip_the_weight(active_backend, tmp_path):
    model = _fixed()
    model.compile(keras.optimizers.SGD(0.1), "mse")
    model.fit(X, Y, epochs=1, verbose=0)
    path = tmp_path / "scaled.minidl"
    model.save_weights(path)
    other = Scaled(name="other")
    other(X[:1])
    other.load_weights(path)
    for got, want in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(other.predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-6)


def test_a_build_that_calls_super_trains_the_latent_array(active_backend):
    keras.utils.set_random_seed(3)
    model = Latent()
    model.compile(keras.optimizers.SGD(0.1), "mse")
    model.fit(X, Y[:, :1], epochs=1, verbose=0)   # built by fit
    before = model.get_weights()[0].copy()
    assert before.shape == (3, 2) and model.count_params() == 6 + 3
    model.fit(X, Y[:, :1], epochs=1, verbose=0)
    assert not np.allclose(model.get_weights()[0], before)


def test_add_weight_after_the_build_is_refused():
    model = Scaled(name="late")
    model(X[:1])
    with pytest.raises(ValueError, match=r"Scaled 'late'.add_weight: the model is built"):
        model.add_weight(shape=(2,))
