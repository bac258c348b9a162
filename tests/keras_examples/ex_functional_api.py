"""Corpus example: the Functional API guide.

Modeled on keras-team/keras-io guides/functional_api.py (commit 14a2af7): Input / layer calls /
Model(inputs, outputs, name=...), summary(), fit with validation_split and evaluate, save() and
models.load_model, one graph of layers shared by an encoder and an autoencoder (Conv2D,
MaxPooling2D, GlobalMaxPooling2D, Reshape, Conv2DTranspose, UpSampling2D), models called like
layers and nested, an ensemble with layers.average, a multi-input multi-output model compiled
with losses and loss_weights given as lists and as dicts keyed by output name, a toy ResNet with
layers.add, a shared Embedding, and a feature-extraction model built from a layer's output.
Written anew for minidl's corpus with the same Keras 3 API; synthetic digits / random data,
small sizes and epochs."""

import os
import tempfile

import numpy as np

import minidl as keras
from minidl import layers
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

inputs = keras.Input(shape=(784,))
assert tuple(inputs.shape) == (None, 784)
x = layers.Dense(64, activation="relu")(inputs)
x = layers.Dense(64, activation="relu")(x)
outputs = layers.Dense(10)(x)
model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")
model.summary()

(x_train, y_train), (x_test, y_test) = digits(1000, 1), digits(200, 2)
x_train = x_train.reshape(-1, 784).astype("float32") / 255
x_test = x_test.reshape(-1, 784).astype("float32") / 255
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.RMSprop(), metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2, verbose=0)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, history.history.keys()
test_scores = model.evaluate(x_test, y_test, verbose=0)
print("test loss / accuracy", test_scores)
assert test_scores[1] > 0.8

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "my_model.keras")
    model.save(path)
    restored = keras.models.load_model(path)
np.testing.assert_allclose(restored.predict(x_test[:8], verbose=0), model.predict(x_test[:8], verbose=0),
                           rtol=1e-5, atol=1e-5)

# one graph of layers, two models
encoder_input = keras.Input(shape=(28, 28, 1), name="img")
x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.MaxPooling2D(3)(x)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.Conv2D(16, 3, activation="relu")(x)
encoder_output = layers.GlobalMaxPooling2D()(x)
encoder = keras.Model(encoder_input, encoder_output, name="encoder")

decoder_input = keras.Input(shape=(16,), name="encoded_img")
x = layers.Reshape((4, 4, 1))(decoder_input)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
x = layers.UpSampling2D(3)(x)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
decoder = keras.Model(decoder_input, decoder_output, name="decoder")

autoencoder_input = keras.Input(shape=(28, 28, 1), name="img")
autoencoder = keras.Model(autoencoder_input, decoder(encoder(autoencoder_input)), name="autoencoder")
out = autoencoder.predict(np.zeros((2, 28, 28, 1), "float32"), verbose=0)
assert out.shape == (2, 28, 28, 1), out.shape


def get_model():
    inputs = keras.Input(shape=(128,))
    return keras.Model(inputs, layers.Dense(1)(inputs))


model1, model2, model3 = get_model(), get_model(), get_model()
inputs = keras.Input(shape=(128,))
ensemble = keras.Model(inputs, layers.average([model1(inputs), model2(inputs), model3(inputs)]))
probe = np.random.default_rng(0).random((4, 128)).astype("float32")
expected = (model1.predict(probe, verbose=0) + model2.predict(probe, verbose=0) + model3.predict(probe, verbose=0)) / 3
np.testing.assert_allclose(ensemble.predict(probe, verbose=0), expected, rtol=1e-5, atol=1e-5)

# multiple inputs and outputs
num_tags, num_words, num_departments = 12, 500, 4
title_input = keras.Input(shape=(None,), name="title")
body_input = keras.Input(shape=(None,), name="body")
tags_input = keras.Input(shape=(num_tags,), name="tags")
title_features = layers.LSTM(16)(layers.Embedding(num_words, 16)(title_input))
body_features = layers.LSTM(8)(layers.Embedding(num_words, 16)(body_input))
x = layers.concatenate([title_features, body_features, tags_input])
priority_pred = layers.Dense(1, name="priority")(x)
department_pred = layers.Dense(num_departments, name="department")(x)
model = keras.Model(inputs=[title_input, body_input, tags_input], outputs=[priority_pred, department_pred])
model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
              loss=[keras.losses.BinaryCrossentropy(from_logits=True),
                    keras.losses.CategoricalCrossentropy(from_logits=True)],
              loss_weights=[1.0, 0.2])
model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
              loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
                    "department": keras.losses.CategoricalCrossentropy(from_logits=True)},
              loss_weights={"priority": 1.0, "department": 0.2})
rng = np.random.default_rng(1)
title_data = rng.integers(0, num_words, (128, 10))
body_data = rng.integers(0, num_words, (128, 20))
tags_data = rng.integers(0, 2, (128, num_tags)).astype("float32")
priority_targets = rng.random((128, 1))
dept_targets = rng.integers(0, 2, (128, num_departments))
history = model.fit({"title": title_data, "body": body_data, "tags": tags_data},
                    {"priority": priority_targets, "department": dept_targets}, epochs=2, batch_size=32,
                    verbose=0)
assert {"loss", "priority_loss", "department_loss"} <= set(history.history), history.history.keys()

# a toy ResNet
inputs = keras.Input(shape=(32, 32, 3), name="img")
x = layers.Conv2D(16, 3, activation="relu")(inputs)
x = layers.Conv2D(16, 3, activation="relu")(x)
block_1_output = layers.MaxPooling2D(3)(x)
x = layers.Conv2D(16, 3, activation="relu", padding="same")(block_1_output)
x = layers.Conv2D(16, 3, activation="relu", padding="same")(x)
block_2_output = layers.add([x, block_1_output])
x = layers.Conv2D(16, 3, activation="relu")(block_2_output)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dense(32, activation="relu")(x)
x = layers.Dropout(0.5)(x)
outputs = layers.Dense(10)(x)
model = keras.Model(inputs, outputs, name="toy_resnet")
x_img = rng.random((64, 32, 32, 3)).astype("float32")
y_img = keras.utils.to_categorical(rng.integers(0, 10, 64), 10)
model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
              loss=keras.losses.CategoricalCrossentropy(from_logits=True), metrics=["acc"])
history = model.fit(x_img, y_img, batch_size=16, epochs=1, validation_split=0.2, verbose=0)
assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}, history.history.keys()

# shared layers, feature extraction
shared_embedding = layers.Embedding(1000, 16)
text_input_a = keras.Input(shape=(None,), dtype="int32")
text_input_b = keras.Input(shape=(None,), dtype="int32")
encoded_a, encoded_b = shared_embedding(text_input_a), shared_embedding(text_input_b)
shared = keras.Model([text_input_a, text_input_b], [encoded_a, encoded_b])
a, b = shared.predict([np.array([[3, 4]]), np.array([[3, 4]])], verbose=0)
np.testing.assert_allclose(a, b)

extractor = keras.Model(inputs=encoder.inputs, outputs=[layer.output for layer in encoder.layers])
features = extractor(np.ones((1, 28, 28, 1), "float32"))
assert len(features) == len(encoder.layers)
print("ok")
