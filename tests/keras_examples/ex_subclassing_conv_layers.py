"""Corpus example: customizing the convolution operation of a Conv2D layer.

Modeled on keras-team/keras-io examples/keras_recipes/subclassing_conv_layers.py (commit
12d96f9): a StandardizedConv2D made two ways — overriding convolution_op(inputs, kernel) on a
Conv2D subclass, and calling self.convolution_op from an overridden call() with the bias added
by hand — used as drop-in Conv2D layers in an MNIST Sequential (InputLayer, MaxPooling2D,
Flatten, Dropout, Dense softmax) trained with "categorical_crossentropy" and
utils.to_categorical labels. Written anew for minidl's corpus with the same Keras 3 API
(ops.mean / ops.var / ops.conv in place of tf.nn.*); synthetic digits, 2 epochs."""

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class StandardizedConv2DWithOverride(layers.Conv2D):
    def convolution_op(self, inputs, kernel):
        mean, var = ops.mean(kernel, axis=[0, 1, 2], keepdims=True), ops.var(kernel, axis=[0, 1, 2], keepdims=True)
        return ops.conv(inputs, (kernel - mean) / ops.sqrt(var + 1e-10), padding="valid", strides=list(self.strides))


class StandardizedConv2DWithCall(layers.Conv2D):
    def call(self, inputs):
        mean = ops.mean(self.kernel, axis=[0, 1, 2], keepdims=True)
        var = ops.var(self.kernel, axis=[0, 1, 2], keepdims=True)
        result = self.convolution_op(inputs, (self.kernel - mean) / ops.sqrt(var + 1e-10))
        if self.use_bias:
            result = result + self.bias
        return result


num_classes, input_shape = 10, (28, 28, 1)
(x_train, y_train), (x_test, y_test) = digits(1000, 1), digits(200, 2)
x_train = np.expand_dims(x_train.astype("float32") / 255, -1)
x_test = np.expand_dims(x_test.astype("float32") / 255, -1)
y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

layer = StandardizedConv2DWithOverride(4, kernel_size=(3, 3))
out = ops.convert_to_numpy(layer(x_train[:2]))
kernel = ops.convert_to_numpy(layer.kernel)
standardized = (kernel - kernel.mean(axis=(0, 1, 2))) / np.sqrt(kernel.var(axis=(0, 1, 2)) + 1e-10)
plain = layers.Conv2D(4, kernel_size=(3, 3))
plain(x_train[:2])
plain.set_weights([standardized, ops.convert_to_numpy(layer.bias)])
np.testing.assert_allclose(out, ops.convert_to_numpy(plain(x_train[:2])), rtol=1e-4, atol=1e-4)

model = keras.Sequential([
    layers.InputLayer(shape=input_shape),
    StandardizedConv2DWithCall(32, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    StandardizedConv2DWithOverride(64, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Flatten(),
    layers.Dropout(0.5),
    layers.Dense(num_classes, activation="softmax"),
])
model.summary()
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=128, epochs=2, validation_split=0.1, verbose=0)
print(history.history)
assert model.evaluate(x_test, y_test, verbose=0)[1] > 0.5
