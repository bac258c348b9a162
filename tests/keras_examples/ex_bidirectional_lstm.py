"""Corpus example: a bidirectional LSTM on IMDB.

Modeled on keras-team/keras-io examples/nlp/bidirectional_lstm_imdb.py (commit 0a4be8b): an
Input(shape=(None,), dtype="int32") for variable-length sequences, Embedding, two stacked
Bidirectional(LSTM(...)) (the first with return_sequences=True), a sigmoid Dense, summary(),
preprocessing.sequence.pad_sequences(maxlen=...), "adam" / "binary_crossentropy" / "accuracy",
validation_data. Written anew for minidl's corpus with the same Keras 3 API; synthetic token
sequences in place of IMDB, vocab 1000, maxlen 40, LSTM(16), 2 epochs."""

import minidl as keras
from minidl import layers
from _data import tokens

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

max_features, maxlen = 1000, 40
inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(max_features, 32)(inputs)
x = layers.Bidirectional(layers.LSTM(16, return_sequences=True))(x)
x = layers.Bidirectional(layers.LSTM(16))(x)
outputs = layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(inputs, outputs)
model.summary()
assert model.layers[2].output.shape[-1] == 32

(x_train, y_train), (x_val, y_val) = tokens(800, 50, max_features, 1), tokens(200, 50, max_features, 2)
x_train = keras.preprocessing.sequence.pad_sequences([row[row > 0] for row in x_train], maxlen=maxlen)
x_val = keras.preprocessing.sequence.pad_sequences([row[row > 0] for row in x_val], maxlen=maxlen)
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val), verbose=0)
print(history.history)
assert history.history["val_accuracy"][-1] > 0.75
