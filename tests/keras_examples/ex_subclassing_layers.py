"""Corpus example: making new layers and models via subclassing.

Modeled on keras-team/keras-io guides/making_new_layers_and_models_via_subclassing.py (commit
175a5e4): a Linear layer with add_weight in __init__ and then lazily in build(), weights
tracked as attributes (layer.weights == [w, b]), a non-trainable weight updated with assign_add,
layers nested in layers, add_loss() with layer.losses reset on each call, a kernel_regularizer's
loss in layer.losses, add_loss losses used by fit() with and without a compiled loss,
get_config / from_config with **kwargs, a `training` argument in call(), and a subclassed
Model trained with fit(). Written anew for minidl's corpus with the same Keras 3 API (ops in
place of tf.*); random data, small sizes."""

import numpy as np

import minidl as keras
from minidl import layers, ops

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class Linear(layers.Layer):
    def __init__(self, units=32, input_dim=32):
        super().__init__()
        self.w = self.add_weight(shape=(input_dim, units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b


x = ops.ones((2, 2))
linear_layer = Linear(4, 2)
y = linear_layer(x)
assert tuple(y.shape) == (2, 4)
assert linear_layer.weights == [linear_layer.w, linear_layer.b]


class ComputeSum(layers.Layer):
    def __init__(self, input_dim):
        super().__init__()
        self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False)

    def call(self, inputs):
        self.total.assign_add(ops.sum(inputs, axis=0))
        return self.total


my_sum = ComputeSum(2)
my_sum(x)
y = my_sum(x)
np.testing.assert_allclose(ops.convert_to_numpy(y), [4.0, 4.0])
assert len(my_sum.weights) == 1 and len(my_sum.non_trainable_weights) == 1 and my_sum.trainable_weights == []


class Linear(layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal",
                                 trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


class MLPBlock(layers.Layer):
    def __init__(self):
        super().__init__()
        self.linear_1 = Linear(32)
        self.linear_2 = Linear(32)
        self.linear_3 = Linear(1)

    def call(self, inputs):
        x = ops.relu(self.linear_1(inputs))
        x = ops.relu(self.linear_2(x))
        return self.linear_3(x)


mlp = MLPBlock()
y = mlp(ops.ones(shape=(3, 64)))
assert len(mlp.weights) == 6 and len(mlp.trainable_weights) == 6


class ActivityRegularizationLayer(layers.Layer):
    def __init__(self, rate=1e-2):
        super().__init__()
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * ops.mean(inputs))
        return inputs


class OuterLayer(layers.Layer):
    def __init__(self):
        super().__init__()
        self.activity_reg = ActivityRegularizationLayer(1e-2)

    def call(self, inputs):
        return self.activity_reg(inputs)


layer = OuterLayer()
assert len(layer.losses) == 0
layer(ops.zeros((1, 1)))
assert len(layer.losses) == 1
layer(ops.zeros((1, 1)))
assert len(layer.losses) == 1     # reset at the start of each __call__


class OuterLayerWithKernelRegularizer(layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(32, kernel_regularizer=keras.regularizers.l2(1e-3))

    def call(self, inputs):
        return self.dense(inputs)


layer = OuterLayerWithKernelRegularizer()
layer(ops.zeros((1, 1)))
kernel = ops.convert_to_numpy(layer.dense.kernel)
assert len(layer.losses) == 1
np.testing.assert_allclose(float(ops.convert_to_numpy(layer.losses[0])), 1e-3 * (kernel ** 2).sum(), rtol=1e-4)

inputs = keras.Input(shape=(3,))
outputs = ActivityRegularizationLayer()(inputs)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.random((2, 3)), np.random.random((2, 3)), verbose=0)
model.compile(optimizer="adam")
history = model.fit(np.random.random((2, 3)), np.random.random((2, 3)), verbose=0)
assert "loss" in history.history

layer = Linear(64)
config = layer.get_config()
assert config["units"] == 64 and "name" in config
new_layer = Linear.from_config(config)
assert new_layer.units == 64


class CustomDropout(layers.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs, training=None):
        if training:
            return keras.random.dropout(inputs, rate=self.rate, seed=self.seed_generator)
        return inputs


drop = CustomDropout(0.5)
ones = np.ones((4, 100), "float32")
assert (ops.convert_to_numpy(drop(ones)) == 1).all()
dropped = ops.convert_to_numpy(drop(ones, training=True))
assert (dropped == 0).any() and set(np.unique(dropped)) <= {0.0, 2.0}


class MLP(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.block = MLPBlock()
        self.dropout = CustomDropout(0.1)

    def call(self, inputs, training=None):
        return self.block(self.dropout(inputs, training=training))


rng = np.random.default_rng(0)
x = rng.random((256, 8)).astype("float32")
y = x.sum(axis=1, keepdims=True)
mlp = MLP()
mlp.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
history = mlp.fit(x, y, epochs=5, batch_size=32, verbose=0)
print("losses", history.history["loss"])
assert history.history["loss"][-1] < history.history["loss"][0]
assert mlp.predict(x[:3], verbose=0).shape == (3, 1)
print("ok")
