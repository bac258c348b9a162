"""Keras masks passed by hand and to custom calls, as keras-io's masking guide uses them:
`lstm(x, mask=embedding.compute_mask(ids))` inside a custom layer's call and on arrays,
compute_mask on host arrays giving a Tensor, and a custom layer's `call(inputs, mask=None)`
getting its input's mask in a functional model. On every backend; the LSTM numbers are the
ones real Keras 3.15.1 printed for these weights (see test_sequential_rebuild.py)."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops

from test_sequential_rebuild import KERAS_X6, X6, _lstm_weights


class EmbedThenLSTM(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = layers.Embedding(10, 3, mask_zero=True)
        self.lstm = layers.LSTM(2)

    def call(self, inputs):
        x = self.embedding(inputs)
        return self.lstm(x, mask=self.embedding.compute_mask(inputs))


def test_a_mask_passed_to_an_lstm_inside_a_call(active_backend):
    layer = EmbedThenLSTM()
    layer(X6)
    weights = _lstm_weights()
    layer.embedding.set_weights(weights[:1])
    layer.lstm.set_weights(weights[1:])
    np.testing.assert_allclose(ops.convert_to_numpy(layer(X6)), KERAS_X6, rtol=1e-5, atol=1e-6)


def test_a_mask_passed_to_an_lstm_on_arrays(active_backend):
    weights = _lstm_weights()
    embedded = weights[0][X6]
    lstm = layers.LSTM(2)
    lstm(embedded)
    lstm.set_weights(weights[1:])
    np.testing.assert_allclose(lstm(embedded, mask=X6 != 0), KERAS_X6, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"mask must have shape \(batch, timesteps\) = \(2, 6\)"):
        lstm(embedded, mask=np.ones((2, 5), bool))


def test_a_mask_on_symbolic_tensors_is_refused():
    inputs = minidl.layers.Input((6, 3))
    with pytest.raises(ValueError, match="mask= is not taken on symbolic tensors"):
        layers.LSTM(2)(inputs, mask=minidl.layers.Input((6,)))


def test_compute_mask_of_host_arrays(active_backend):
    ids = np.array([[1, 2, 0]], "int32")
    embedding = layers.Embedding(10, 4, mask_zero=True)
    embedding(ids)
    np.testing.assert_array_equal(ops.convert_to_numpy(embedding.compute_mask(ids)), [[1, 1, 0]])
    masking = layers.Masking()
    x = np.array([[[1.0, 0.0], [0.0, 0.0]]], "float32")
    masking(x)
    np.testing.assert_array_equal(ops.convert_to_numpy(masking.compute_mask(x)), [[1, 0]])


class TemporalSoftmax(layers.Layer):
    def call(self, inputs, mask=None):
        weights = ops.expand_dims(ops.cast(mask, "float32"), -1)
        exp = ops.exp(inputs) * weights
        return exp / ops.sum(exp, axis=1, keepdims=True)


def test_a_custom_call_gets_its_inputs_mask(active_backend):
    inputs = minidl.layers.Input((None,), dtype="int32")
    x = layers.Embedding(10, 4, mask_zero=True)(inputs)
    x = layers.Dense(1)(x)   # passes the mask on, as Keras's Dense
    model = minidl.Model(inputs, TemporalSoftmax()(x))
    ids = np.array([[1, 2, 0, 3, 0], [4, 0, 0, 0, 0]], "int32")
    y = ops.convert_to_numpy(model(ids))
    np.testing.assert_allclose(y.sum(axis=1), 1, rtol=1e-5)
    assert (y[ids == 0] == 0).all() and (y[ids != 0] > 0).all()


def test_a_custom_call_without_a_masked_input_gets_none(active_backend):
    seen = []

    class Spy(layers.Layer):
        def call(self, inputs, mask=None):
            seen.append(mask is None)
            return inputs

    inputs = minidl.layers.Input((3,))
    model = minidl.Model(inputs, Spy()(layers.Dense(2)(inputs)))
    model(np.ones((2, 3), "float32"))
    assert seen and all(seen)
