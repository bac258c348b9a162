"""Corpus example: MixUp augmentation for image classification.

Modeled on keras-team/keras-io examples/vision/mixup.py (commit be6d366): labels one-hot
(tf.one_hot there, ops.one_hot here), two shuffled copies of the training set zipped batch by
batch, a mix_up function that samples lambda from a Beta distribution built from two gamma
samples (keras.random.gamma(shape, alpha)), reshapes it to (batch, 1, 1, 1) and (batch, 1) and
mixes images and labels; a Sequential of Conv2D(16, (5, 5), activation="relu", input_shape=...)
/ MaxPooling2D / Conv2D / MaxPooling2D / Dropout / GlobalAvgPool2D / Dense / softmax Dense;
the initial weights saved with save_weights and loaded into two fresh models, each compiled
with "categorical_crossentropy", "adam" and ["accuracy"], one trained on the mixed-up data and
one on the plain data, both evaluated. Written anew for minidl's corpus with the same Keras 3
API; what differs: synthetic digits (1200 + 300 held out) in place of FashionMNIST, the
tf.data pipelines (shuffle, zip, batch, map) replaced by two permutations of the arrays mixed
batch by batch into arrays once before fit, the weights file named *.weights.h5 as Keras 3
requires, 4 epochs, no plots."""

import os
import tempfile

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

(x_train, y_train), (x_test, y_test) = digits(1500, 1), digits(300, 2)
x_train = np.reshape(x_train.astype("float32") / 255.0, (-1, 28, 28, 1))
y_train = ops.convert_to_numpy(ops.one_hot(y_train, 10))
x_test = np.reshape(x_test.astype("float32") / 255.0, (-1, 28, 28, 1))
y_test = ops.convert_to_numpy(ops.one_hot(y_test, 10))
assert y_train.shape == (1500, 10) and y_train.sum() == 1500

BATCH_SIZE, EPOCHS = 64, 4
val_samples = 300
x_val, y_val = x_train[:val_samples], y_train[:val_samples]
new_x_train, new_y_train = x_train[val_samples:], y_train[val_samples:]


def sample_beta_distribution(size, concentration_0=0.2, concentration_1=0.2):
    gamma_1_sample = keras.random.gamma(shape=[size], alpha=concentration_1)
    gamma_2_sample = keras.random.gamma(shape=[size], alpha=concentration_0)
    return gamma_1_sample / (gamma_1_sample + gamma_2_sample)


def mix_up(ds_one, ds_two, alpha=0.2):
    images_one, labels_one = ds_one
    images_two, labels_two = ds_two
    batch_size = ops.shape(images_one)[0]
    l = sample_beta_distribution(batch_size, alpha, alpha)
    x_l = ops.reshape(l, (batch_size, 1, 1, 1))
    y_l = ops.reshape(l, (batch_size, 1))
    images = images_one * x_l + images_two * (1 - x_l)
    labels = labels_one * y_l + labels_two * (1 - y_l)
    return images, labels


# two shuffled copies of the training set, zipped batch by batch and mixed (the tf.data
# shuffle / zip / batch / map pipeline of the original, as arrays)
rng = np.random.default_rng(0)
one, two = rng.permutation(len(new_x_train)), rng.permutation(len(new_x_train))
mixed = [mix_up((new_x_train[one[i:i + BATCH_SIZE]], new_y_train[one[i:i + BATCH_SIZE]]),
                (new_x_train[two[i:i + BATCH_SIZE]], new_y_train[two[i:i + BATCH_SIZE]]), alpha=0.2)
         for i in range(0, len(new_x_train), BATCH_SIZE)]
x_mixed = np.concatenate([ops.convert_to_numpy(images) for images, _ in mixed])
y_mixed = np.concatenate([ops.convert_to_numpy(labels) for _, labels in mixed])
assert x_mixed.shape == new_x_train.shape and y_mixed.shape == new_y_train.shape
np.testing.assert_allclose(y_mixed.sum(axis=1), 1.0, rtol=1e-5)          # still a distribution
assert 0.0 <= x_mixed.min() and x_mixed.max() <= 1.0
lam = y_mixed.max(axis=1)
assert (lam < 0.99).mean() > 0.2, "the beta(0.2, 0.2) lambdas should mix many pairs"


def get_training_model():
    return keras.Sequential([
        layers.Conv2D(16, (5, 5), activation="relu", input_shape=(28, 28, 1)),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(32, (5, 5), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Dropout(0.2),
        layers.GlobalAvgPool2D(),
        layers.Dense(128, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ])


weights_path = os.path.join(tempfile.mkdtemp(), "initial_weights.weights.h5")
initial_model = get_training_model()
initial_model.save_weights(weights_path)

accuracies = {}
for name, (x, y) in {"mixup": (x_mixed, y_mixed), "plain": (new_x_train, new_y_train)}.items():
    model = get_training_model()
    model.load_weights(weights_path)
    for a, b in zip(model.get_weights(), initial_model.get_weights()):
        np.testing.assert_array_equal(a, b)          # both start from the same weights
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=BATCH_SIZE, validation_data=(x_val, y_val), epochs=EPOCHS, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, history.history.keys()
    assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]
    _, test_acc = model.evaluate(x_test, y_test, verbose=0)
    print(f"{name}: Test accuracy: {test_acc * 100:.2f}%")
    accuracies[name] = test_acc
assert min(accuracies.values()) > 0.3, accuracies                  # chance is 0.1
