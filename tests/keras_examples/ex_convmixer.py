"""Corpus example: image classification with ConvMixer.

Modeled on keras-team/keras-io examples/vision/convmixer.py (commit b8bb4c0): a
data_augmentation Sequential (RandomCrop(image_size, image_size), RandomFlip("horizontal"))
applied to the training batches, a functional model of Rescaling(scale=1 / 255), a patch stem
Conv2D(filters, kernel_size=patch_size, strides=patch_size), activation blocks of
Activation("gelu") + BatchNormalization, ConvMixer blocks of DepthwiseConv2D(kernel_size,
padding="same") with an Add() residual and a pointwise Conv2D(filters, kernel_size=1),
GlobalAvgPool2D and a softmax Dense; AdamW(learning_rate, weight_decay), the string loss
"sparse_categorical_crossentropy" with metrics ["accuracy"], ModelCheckpoint(monitor=
"val_accuracy", save_best_only=True, save_weights_only=True), load_weights, evaluate, and the
weights read back for plotting (model.layers[2].get_weights(), the DepthwiseConv2D layers
found by isinstance and get_config()["kernel_size"]). Written anew for minidl's corpus with
the same Keras 3 API; what differs: synthetic 3-channel digit images (16 x 16, labels shaped
(n, 1) as CIFAR-10's) in place of CIFAR-10, the tf.data pipeline replaced by the augmentation
called on the training arrays and fit on arrays with validation_data, keras.optimizers.AdamW
in place of tensorflow_addons', ConvMixer-32/2 in place of 256/8, 10 epochs, no plots. The checks are on the training
accuracy, History keys, the checkpoint and the weight shapes: the test accuracy stays near
chance with so few steps in Keras 3.15.1 as in minidl (the same script was run in both)."""

import os
import tempfile

import numpy as np

import minidl as keras
from minidl import layers
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

learning_rate, weight_decay, batch_size, num_epochs = 0.001, 0.0001, 64, 10
image_size = 16


def cifar_like(n, seed):
    x, y = digits(n, seed, size=image_size)
    return np.repeat(x[..., None], 3, axis=-1), y.reshape(-1, 1)   # uint8 (n, h, w, 3), (n, 1)


(x_train, y_train), (x_test, y_test) = cifar_like(2000, 1), cifar_like(300, 2)
val_split = 0.1
val_indices = int(len(x_train) * val_split)
new_x_train, new_y_train = x_train[val_indices:], y_train[val_indices:]
x_val, y_val = x_train[:val_indices], y_train[:val_indices]

data_augmentation = keras.Sequential(
    [layers.RandomCrop(image_size, image_size), layers.RandomFlip("horizontal")],
    name="data_augmentation",
)
augmented = keras.ops.convert_to_numpy(data_augmentation(new_x_train.astype("float32"), training=True))
assert augmented.shape == new_x_train.shape, augmented.shape


def activation_block(x):
    x = layers.Activation("gelu")(x)
    return layers.BatchNormalization()(x)


def conv_stem(x, filters, patch_size):
    x = layers.Conv2D(filters, kernel_size=patch_size, strides=patch_size)(x)
    return activation_block(x)


def conv_mixer_block(x, filters, kernel_size):
    x0 = x
    x = layers.DepthwiseConv2D(kernel_size=kernel_size, padding="same")(x)   # spatial mixing
    x = layers.Add()([activation_block(x), x0])
    x = layers.Conv2D(filters, kernel_size=1)(x)                            # channel mixing
    return activation_block(x)


def get_conv_mixer(image_size=16, filters=32, depth=2, kernel_size=5, patch_size=2, num_classes=10):
    inputs = keras.Input((image_size, image_size, 3))
    x = layers.Rescaling(scale=1.0 / 255)(inputs)
    x = conv_stem(x, filters, patch_size)
    for _ in range(depth):
        x = conv_mixer_block(x, filters, kernel_size)
    x = layers.GlobalAvgPool2D()(x)
    outputs = layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def run_experiment(model):
    optimizer = keras.optimizers.AdamW(learning_rate=learning_rate, weight_decay=weight_decay)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    checkpoint_filepath = os.path.join(tempfile.mkdtemp(), "checkpoint.weights.h5")
    checkpoint_callback = keras.callbacks.ModelCheckpoint(checkpoint_filepath, monitor="val_accuracy",
                                                          save_best_only=True, save_weights_only=True)
    history = model.fit(augmented, new_y_train, batch_size=batch_size, validation_data=(x_val, y_val),
                        epochs=num_epochs, callbacks=[checkpoint_callback], verbose=0)
    assert os.path.exists(checkpoint_filepath)
    model.load_weights(checkpoint_filepath)
    _, accuracy = model.evaluate(x_test, y_test, batch_size=batch_size, verbose=0)
    print(f"Test accuracy: {round(accuracy * 100, 2)}%")
    return history, model, accuracy


conv_mixer_model = get_conv_mixer()
history, conv_mixer_model, accuracy = run_experiment(conv_mixer_model)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, history.history.keys()
assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]
assert history.history["accuracy"][-1] > 0.9, history.history["accuracy"]   # chance is 0.1
# no check on the test accuracy: in a few hundred steps BatchNormalization's moving variance
# (momentum 0.99, started at 1) stays far above the tiny variance of these activations, so
# inference-mode accuracy is near chance: 0.19 here, 0.21 with Keras 3.15.1 on this script
assert 0.0 <= accuracy <= 1.0, accuracy

# the weights the original plots: the patch embeddings, then a depthwise kernel
patch_embeddings = conv_mixer_model.layers[2].get_weights()[0]
assert patch_embeddings.shape == (2, 2, 3, 32), patch_embeddings.shape
depthwise = [i for i, layer in enumerate(conv_mixer_model.layers)
             if isinstance(layer, layers.DepthwiseConv2D) and layer.get_config()["kernel_size"] == (5, 5)]
assert len(depthwise) == 2, depthwise
kernel = conv_mixer_model.layers[depthwise[0]].get_weights()[0]
assert kernel.shape == (5, 5, 32, 1), kernel.shape
kernel = np.expand_dims(kernel.squeeze(), axis=2)
assert kernel.shape == (5, 5, 1, 32)
