"""Corpus example: a convolutional autoencoder for image denoising.

Modeled on keras-team/keras-io examples/vision/autoencoder.py (commit f8f7dd3): images
normalized and reshaped to (n, 28, 28, 1), a noisy copy (noise_factor * normal, clipped), a
functional encoder of Conv2D(padding="same") / MaxPooling2D((2, 2), padding="same") and a
decoder of Conv2DTranspose(strides=2, padding="same") with a sigmoid Conv2D output, compiled
with "adam" and "binary_crossentropy", fit as an autoencoder (x=clean, y=clean, shuffle=True,
validation_data) then as a denoiser (x=noisy, y=clean), predict. Written anew for minidl's
corpus with the same Keras 3 API; synthetic digits, a few epochs."""

import numpy as np

import minidl
from minidl import layers
from minidl.models import Model
from _data import digits

minidl.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(0)


def preprocess(array):
    return np.reshape(array.astype("float32") / 255.0, (len(array), 28, 28, 1))


def noise(array):
    return np.clip(array + 0.4 * rng.normal(loc=0.0, scale=1.0, size=array.shape), 0.0, 1.0).astype("float32")


(train_data, _), (test_data, _) = digits(800, 1), digits(200, 2)
train_data, test_data = preprocess(train_data), preprocess(test_data)
noisy_train_data, noisy_test_data = noise(train_data), noise(test_data)

inputs = layers.Input(shape=(28, 28, 1))
x = layers.Conv2D(16, (3, 3), activation="relu", padding="same")(inputs)
x = layers.MaxPooling2D((2, 2), padding="same")(x)
x = layers.Conv2D(16, (3, 3), activation="relu", padding="same")(x)
x = layers.MaxPooling2D((2, 2), padding="same")(x)
x = layers.Conv2DTranspose(16, (3, 3), strides=2, activation="relu", padding="same")(x)
x = layers.Conv2DTranspose(16, (3, 3), strides=2, activation="relu", padding="same")(x)
x = layers.Conv2D(1, (3, 3), activation="sigmoid", padding="same")(x)
autoencoder = Model(inputs, x)
autoencoder.compile(optimizer="adam", loss="binary_crossentropy")
autoencoder.summary()

history = autoencoder.fit(x=train_data, y=train_data, epochs=2, batch_size=64, shuffle=True,
                          validation_data=(test_data, test_data), verbose=0)
assert set(history.history) == {"loss", "val_loss"}
predictions = autoencoder.predict(test_data, verbose=0)
assert predictions.shape == test_data.shape

history = autoencoder.fit(x=noisy_train_data, y=train_data, epochs=4, batch_size=64, shuffle=True,
                          validation_data=(noisy_test_data, test_data), verbose=0)
print("denoising val_loss", history.history["val_loss"])
assert history.history["val_loss"][-1] < history.history["val_loss"][0]
denoised = autoencoder.predict(noisy_test_data, verbose=0)
error_noisy = np.mean((noisy_test_data - test_data) ** 2)
error_denoised = np.mean((denoised - test_data) ** 2)
print("mse noisy", error_noisy, "denoised", error_denoised)
assert error_denoised < 0.7 * error_noisy
