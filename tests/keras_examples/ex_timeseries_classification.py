"""Corpus example: timeseries classification from scratch.

Modeled on keras-team/keras-io examples/timeseries/timeseries_classification_from_scratch.py
(commit ad4fc80): univariate series reshaped to (n, steps, 1), a fully convolutional network
(keras.layers.Input(input_shape), Conv1D(filters=64, kernel_size=3, padding="same") /
BatchNormalization / ReLU three times, GlobalAveragePooling1D, Dense softmax) built with
keras.models.Model, callbacks ModelCheckpoint(save_best_only=True, monitor="val_loss"),
ReduceLROnPlateau(factor=0.5, patience, min_lr) and EarlyStopping, "sparse_categorical_crossentropy"
with metrics ["sparse_categorical_accuracy"], validation_split, then models.load_model of the
best checkpoint and evaluate. Written anew for minidl's corpus with the same Keras 3 API;
synthetic sine waves in place of FordA, 32 filters, 10 epochs, a .keras checkpoint. With so few
steps BatchNormalization's moving statistics leave the test accuracy near chance on this data, in
Keras 3.15.1 (torch) as in minidl (checked with the same script), so the checks are on training
accuracy, the callbacks and the checkpoint round trip."""

import os
import tempfile

import numpy as np

import minidl as keras
from _data import series

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

x_train, y_train = series(600, 128, 1)
x_test, y_test = series(200, 128, 2)
num_classes = len(np.unique(y_train))
idx = np.random.default_rng(0).permutation(len(x_train))
x_train, y_train = x_train[idx], y_train[idx]


def make_model(input_shape):
    input_layer = keras.layers.Input(input_shape)
    x = input_layer
    for _ in range(3):
        x = keras.layers.Conv1D(filters=32, kernel_size=3, padding="same")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.ReLU()(x)
    gap = keras.layers.GlobalAveragePooling1D()(x)
    output_layer = keras.layers.Dense(num_classes, activation="softmax")(gap)
    return keras.models.Model(inputs=input_layer, outputs=output_layer)


model = make_model(input_shape=x_train.shape[1:])
best = os.path.join(tempfile.mkdtemp(), "best_model.keras")
callbacks = [keras.callbacks.ModelCheckpoint(best, save_best_only=True, monitor="val_loss"),
             keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2, min_lr=0.0001),
             keras.callbacks.EarlyStopping(monitor="val_loss", patience=5, verbose=1)]
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["sparse_categorical_accuracy"])
# BatchNormalization's moving statistics (momentum 0.99) need a few hundred steps to settle
history = model.fit(x_train, y_train, batch_size=16, epochs=10, callbacks=callbacks, validation_split=0.2, verbose=0)
assert {"loss", "sparse_categorical_accuracy", "val_loss", "val_sparse_categorical_accuracy"} <= set(history.history)
assert os.path.exists(best)

assert history.history["sparse_categorical_accuracy"][-1] > 0.9, history.history
assert "learning_rate" in history.history        # ReduceLROnPlateau logs it, as in Keras 3
model = keras.models.load_model(best)
test_loss, test_acc = model.evaluate(x_test, y_test, verbose=0)
print("Test accuracy", test_acc, "Test loss", test_loss)
assert min(history.history["val_loss"]) <= model.evaluate(x_train[-120:], y_train[-120:], verbose=0)[0] + 1e-3
probabilities = model.predict(x_test[:10], verbose=0)
np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
