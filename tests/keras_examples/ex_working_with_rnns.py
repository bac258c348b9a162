"""Corpus example: working with RNNs.

Modeled on keras-team/keras-io guides/working_with_rnns.py (commit 4849412): Sequential
Embedding + LSTM / GRU(return_sequences=True) + SimpleRNN models, an encoder LSTM with
return_state=True whose states are a decoder LSTM's initial_state in a two-input Model,
stateful=True LSTM fed consecutive chunks then reset_states(), layer.states reused as another
LSTM's initial_state, Bidirectional in Sequential, and LSTM(units) against RNN(LSTMCell(units))
sharing weights with set_weights / get_weights, trained on digit rows as time steps with
SparseCategoricalCrossentropy(from_logits=True) and "sgd", then predict_on_batch. Written anew
for minidl's corpus with the same Keras 3 API; synthetic digits, small sizes, Input layers in
place of input_shape= arguments."""

import numpy as np

import minidl as keras
from minidl import layers
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

model = keras.Sequential([keras.Input((None,), dtype="int32"), layers.Embedding(input_dim=1000, output_dim=64),
                          layers.LSTM(128), layers.Dense(10)])
model.summary()
assert model.output_shape == (None, 10)

model = keras.Sequential([keras.Input((None,), dtype="int32"), layers.Embedding(input_dim=1000, output_dim=64),
                          layers.GRU(64, return_sequences=True), layers.SimpleRNN(32), layers.Dense(10)])
assert model.predict(np.ones((2, 7), "int32"), verbose=0).shape == (2, 10)

encoder_input = layers.Input(shape=(None,))
encoder_embedded = layers.Embedding(input_dim=1000, output_dim=64)(encoder_input)
output, state_h, state_c = layers.LSTM(64, return_state=True, name="encoder")(encoder_embedded)
decoder_input = layers.Input(shape=(None,))
decoder_embedded = layers.Embedding(input_dim=2000, output_dim=64)(decoder_input)
decoder_output = layers.LSTM(64, name="decoder")(decoder_embedded, initial_state=[state_h, state_c])
model = keras.Model([encoder_input, decoder_input], layers.Dense(10)(decoder_output))
assert model.predict([np.ones((2, 5)), np.ones((2, 6))], verbose=0).shape == (2, 10)

rng = np.random.default_rng(0)
paragraphs = [rng.random((20, 10, 50)).astype(np.float32) for _ in range(3)]
lstm_layer = layers.LSTM(64, stateful=True)
for paragraph in paragraphs:
    output = lstm_layer(paragraph)
whole = layers.LSTM(64)
whole(paragraphs[0])
whole.set_weights(lstm_layer.get_weights())
np.testing.assert_allclose(keras.ops.convert_to_numpy(output),
                           keras.ops.convert_to_numpy(whole(np.concatenate(paragraphs, axis=1))), rtol=1e-4, atol=1e-5)
lstm_layer.reset_states()
np.testing.assert_allclose(keras.ops.convert_to_numpy(lstm_layer(paragraphs[0])),
                           keras.ops.convert_to_numpy(whole(paragraphs[0])), rtol=1e-4, atol=1e-5)

lstm_layer = layers.LSTM(64, stateful=True)
lstm_layer(paragraphs[0])
lstm_layer(paragraphs[1])
existing_state = lstm_layer.states
new_lstm_layer = layers.LSTM(64)
new_output = new_lstm_layer(paragraphs[2], initial_state=existing_state)
assert tuple(new_output.shape) == (20, 64)

model = keras.Sequential([keras.Input((5, 10)), layers.Bidirectional(layers.LSTM(64, return_sequences=True)),
                          layers.Bidirectional(layers.LSTM(32)), layers.Dense(10)])
assert model.output_shape == (None, 10)

batch_size, input_dim, units, output_size = 64, 28, 32, 10


def build_model(allow_cudnn_kernel=True):
    if allow_cudnn_kernel:
        lstm_layer = layers.LSTM(units)
    else:
        lstm_layer = layers.RNN(layers.LSTMCell(units))
    return keras.models.Sequential([keras.Input((None, input_dim)), lstm_layer, layers.BatchNormalization(),
                                    layers.Dense(output_size)])


(x_train, y_train), (x_test, y_test) = digits(1000, 1), digits(200, 2)
x_train, x_test = x_train / 255.0, x_test / 255.0
sample, sample_label = x_train[0], y_train[0]
model = build_model(allow_cudnn_kernel=True)
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd",
              metrics=["accuracy"])
model.fit(x_train, y_train, validation_data=(x_test, y_test), batch_size=batch_size, epochs=1, verbose=0)

noncudnn_model = build_model(allow_cudnn_kernel=False)
noncudnn_model.set_weights(model.get_weights())
np.testing.assert_allclose(noncudnn_model.predict(x_test[:8], verbose=0), model.predict(x_test[:8], verbose=0),
                           rtol=1e-4, atol=1e-5)
noncudnn_model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd",
                       metrics=["accuracy"])
history = noncudnn_model.fit(x_train, y_train, validation_data=(x_test, y_test), batch_size=batch_size, epochs=1,
                             verbose=0)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}

result = np.argmax(model.predict_on_batch(np.expand_dims(sample, 0)), axis=1)
print("Predicted result is:", result, "target result is:", sample_label)
assert result.shape == (1,)
