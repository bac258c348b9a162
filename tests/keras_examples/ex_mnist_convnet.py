"""Corpus example: a simple MNIST convnet.

Modeled on keras-team/keras-io examples/vision/mnist_convnet.py (commit 02cfe80): images scaled
to [0, 1] with a channel axis added by np.expand_dims, labels one-hot with
utils.to_categorical, a Sequential of Input / Conv2D(kernel_size=(3, 3)) / MaxPooling2D(pool_size=
(2, 2)) / Flatten / Dropout / Dense(softmax), summary(), compile with the string loss
"categorical_crossentropy", optimizer "adam" and metrics ["accuracy"], fit with
validation_split, evaluate. Written anew for minidl's corpus with the same Keras 3 API;
synthetic digits (1500 in place of 60000), 3 epochs in place of 15."""

import numpy as np

import minidl as keras
from minidl import layers
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

num_classes, input_shape = 10, (28, 28, 1)
(x_train, y_train), (x_test, y_test) = digits(1500, 1), digits(300, 2)
x_train = np.expand_dims(x_train.astype("float32") / 255, -1)
x_test = np.expand_dims(x_test.astype("float32") / 255, -1)
y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)
assert y_train.shape == (1500, 10)

model = keras.Sequential([
    keras.Input(shape=input_shape),
    layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Flatten(),
    layers.Dropout(0.5),
    layers.Dense(num_classes, activation="softmax"),
])
model.summary()
assert model.count_params() == 34826, model.count_params()   # the same count as Keras prints

model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=128, epochs=3, validation_split=0.1, verbose=0)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, history.history.keys()
assert history.history["loss"][-1] < history.history["loss"][0]
score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0], "Test accuracy:", score[1])
assert score[1] > 0.9
