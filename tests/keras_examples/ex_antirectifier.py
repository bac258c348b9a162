"""Corpus example: a custom layer, the Antirectifier.

Modeled on keras-team/keras-io examples/keras_recipes/antirectifier.py (commit 2dd71c6): a
Layer subclass with build() / add_weight / call written with ops / get_config, in a Sequential
MNIST classifier trained with RMSprop, from_logits cross-entropy and SparseCategoricalAccuracy.
Written anew for minidl's corpus with the same Keras 3 API; synthetic digits, small sizes."""


import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class Antirectifier(layers.Layer):
    def __init__(self, initializer="he_normal", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        output_dim = input_shape[-1]
        self.kernel = self.add_weight(shape=(output_dim * 2, output_dim), initializer=self.initializer,
                                      name="kernel", trainable=True)

    def call(self, inputs):
        inputs = inputs - ops.mean(inputs, axis=-1, keepdims=True)
        pos, neg = ops.relu(inputs), ops.relu(-inputs)
        return ops.matmul(ops.concatenate([pos, neg], axis=-1), self.kernel)

    def get_config(self):
        return {**super().get_config(), "initializer": keras.initializers.serialize(self.initializer)}


(x_train, y_train), (x_test, y_test) = (digits(1200, 1), digits(300, 2))
x_train = x_train.reshape(-1, 784).astype("float32") / 255
x_test = x_test.reshape(-1, 784).astype("float32") / 255

model = keras.Sequential([keras.Input(shape=(784,)), layers.Dense(64), Antirectifier(), layers.Dense(64),
                          Antirectifier(), layers.Dropout(0.5), layers.Dense(10)])
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.RMSprop(),
              metrics=[keras.metrics.SparseCategoricalAccuracy()])
history = model.fit(x_train, y_train, batch_size=64, epochs=3, validation_split=0.15, verbose=0)
assert set(history.history) == {"loss", "sparse_categorical_accuracy", "val_loss",
                                 "val_sparse_categorical_accuracy"}, history.history.keys()
loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
print("test accuracy", accuracy)
assert accuracy > 0.9
config = model.layers[1].get_config()
assert Antirectifier.from_config(config).initializer.__class__.__name__ == "HeNormal"
