"""A Sequential built by its first call (or fit / predict) takes later data of other lengths
where its layers allow it, as Keras's, which runs its layers again on each call: an Embedding +
LSTM stack on any number of steps, a Conv1D + global pooling on any length; a Dense after a
Flatten still needs the first length. On every backend, against numbers printed by real Keras
3.15.1 (torch backend) for the same fixed weights."""

import numpy as np
import pytest

import minidl
from minidl import layers


def _lstm_weights():
    """The fixed weights the Keras script set (Embedding(10, 3), LSTM(2))."""
    emb = (np.arange(30, dtype="float32").reshape(10, 3) % 7 - 3) / 5
    kernel = (np.arange(24, dtype="float32").reshape(3, 8) % 5 - 2) / 6
    recurrent = (np.arange(16, dtype="float32").reshape(2, 8) % 3 - 1) / 4
    bias = np.linspace(-0.2, 0.3, 8).astype("float32")
    return [emb, kernel, recurrent, bias]


X6 = np.array([[1, 2, 3, 0, 0, 0], [4, 5, 6, 7, 8, 9]], "int32")
X10 = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9, 1], [9, 8, 7, 0, 0, 0, 0, 0, 0, 0]], "int32")
# printed by Keras 3.15.1 (KERAS_BACKEND=torch) for the model and weights above
KERAS_X6 = [[0.027857454493641853, 0.056689806282520294], [0.06060098484158516, 0.03362099453806877]]
KERAS_X10 = [[0.020517457276582718, 0.0553683303296566], [0.0013290136121213436, 0.10164659470319748]]
# after fit(X6, ones) then fit(X10, ones), one SGD step each (batch_size=2, shuffle=False)
KERAS_AFTER_FIT = [[0.024411700665950775, 0.06031979247927666],
                   [0.0052404021844267845, 0.10550025850534439]]


def _masked_lstm():
    return minidl.Sequential([layers.Embedding(10, 3, mask_zero=True), layers.LSTM(2)])


def test_a_model_built_by_its_first_call_takes_other_lengths(active_backend):
    model = _masked_lstm()
    model(X6)
    model.set_weights(_lstm_weights())
    np.testing.assert_allclose(model(X6), KERAS_X6, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model(X10), KERAS_X10, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X10, verbose=0), KERAS_X10, rtol=1e-5, atol=1e-6)
    assert model.input_shape == (None, None)   # Keras records (2, 6) but never enforces it


def test_fit_on_one_length_then_another_trains_the_same_weights(active_backend):
    model = _masked_lstm()
    model(X6)
    model.set_weights(_lstm_weights())
    model.compile("sgd", "mse")
    ones = np.ones((2, 2), "float32")
    model.fit(X6, ones, verbose=0, batch_size=2, shuffle=False)
    model.fit(X10, ones, verbose=0, batch_size=2, shuffle=False)
    np.testing.assert_allclose(model(X10), KERAS_AFTER_FIT, rtol=1e-4, atol=1e-6)


def test_a_model_built_by_fit_takes_other_lengths(active_backend):
    model = _masked_lstm()
    model.compile("sgd", "mse")
    model.fit(X6, np.ones((2, 2), "float32"), verbose=0)
    assert model.predict(X10, verbose=0).shape == (2, 2)


def test_conv1d_with_global_pooling_takes_any_length(active_backend):
    model = minidl.Sequential([layers.Conv1D(2, 3), layers.GlobalMaxPooling1D()])
    model(np.arange(2 * 8 * 3, dtype="float32").reshape(2, 8, 3) / 50)
    model.set_weights([(np.arange(18, dtype="float32").reshape(3, 3, 2) % 4 - 1.5) / 3,
                       np.array([0.1, -0.1], "float32")])
    assert model.input_shape == (None, None, 3)   # the channels stay known: the kernel needs them
    longer = np.cos(np.arange(2 * 12 * 3, dtype="float32")).reshape(2, 12, 3)
    # printed by Keras 3.15.1 (torch backend)
    np.testing.assert_allclose(model(longer), [[0.5161998271942139, 0.1597498655319214],
                                               [0.33308857679367065, 0.0732438787817955]],
                               rtol=1e-5, atol=1e-6)


def test_a_dense_after_flatten_keeps_the_first_length(active_backend):
    # Keras: "Input 0 ... of layer 'dense' is incompatible with the layer: expected axis -1 of
    # input shape to have value 24, but received input with shape (3, 40)"
    model = minidl.Sequential([layers.Embedding(50, 4), layers.Flatten(), layers.Dense(3)])
    model(np.ones((3, 6), "int32"))
    assert model.input_shape == (None, 6)
    with pytest.raises(ValueError, match=r"expects x of shape \(None, 6\), got \(3, 10\)"):
        model(np.ones((3, 10), "int32"))


def test_dense_keeps_its_features(active_backend):
    model = minidl.Sequential([layers.Dense(3)])
    model(np.ones((2, 5), "float32"))
    assert model.input_shape == (None, 5)
    with pytest.raises(ValueError, match=r"expects x of shape \(None, 5\), got \(2, 7\)"):
        model(np.ones((2, 7), "float32"))


def test_a_layer_built_before_keeps_its_weights_through_the_tries(active_backend):
    dense = layers.Dense(2)
    dense(np.ones((1, 24), "float32"))
    before = [w.copy() for w in dense.get_weights()]
    model = minidl.Sequential([layers.Embedding(50, 4), layers.Flatten(), dense])
    model(np.ones((3, 6), "int32"))   # (None,) fails at the Dense, (6,) builds
    for old, new in zip(before, dense.get_weights()):
        np.testing.assert_array_equal(old, new)
    assert model.input_shape == (None, 6)


def test_explicit_input_and_build_keep_their_shape(active_backend):
    model = minidl.Sequential([layers.Input((6,)), layers.Embedding(10, 3), layers.LSTM(2)])
    assert model.input_shape == (None, 6)
    other = _masked_lstm()
    other.build((None, 6))
    assert other.input_shape == (None, 6)


def _input_index(name):
    """input_layer -> 0, input_layer_3 -> 3 (the process-wide counter's value)."""
    return 0 if name == "input_layer" else int(name.rpartition("_")[2])


def test_one_input_name_whatever_the_tries():
    model = minidl.Sequential([layers.Conv2D(2, 3), layers.Flatten(), layers.Dense(1)])
    model(np.ones((1, 6, 6, 1), "float32"))   # tries (None, None, None), (None, None, 1), (6, 6, 1)
    assert model.input_shape == (None, 6, 6, 1)
    follow = minidl.layers.Input((2,))
    assert _input_index(follow.name) == _input_index(model.inputs[0].name) + 1
