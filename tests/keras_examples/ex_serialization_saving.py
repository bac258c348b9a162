"""Corpus example: serialization and saving.

Modeled on keras-team/keras-io guides/serialization_and_saving.py (commit 013606a, read in its
tf.keras form; written here with the Keras 3 spelling of the same calls): whole-model
save() / models.load_model round trips that keep the optimizer so training resumes, a
subclassed Model with get_config / from_config loaded with custom_objects, layer and model
get_config / from_config, to_json / models.model_from_json, layers.serialize / deserialize of a
custom layer, a custom layer and a custom activation function registered with
register_keras_serializable and loaded inside custom_object_scope, models.clone_model,
get_weights / set_weights between models, and save_weights / load_weights (.weights.h5).
Written anew for minidl's corpus; random data, small sizes."""

import os
import tempfile

import numpy as np

import minidl as keras

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

tmp = tempfile.mkdtemp()


def get_model():
    inputs = keras.Input(shape=(32,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer="adam", loss="mean_squared_error")
    return model


rng = np.random.default_rng(0)
test_input, test_target = rng.random((128, 32)).astype("float32"), rng.random((128, 1)).astype("float32")
model = get_model()
model.fit(test_input, test_target, verbose=0)
path = os.path.join(tmp, "my_model.keras")
model.save(path)
reconstructed_model = keras.models.load_model(path)
np.testing.assert_allclose(model.predict(test_input, verbose=0), reconstructed_model.predict(test_input, verbose=0),
                           rtol=1e-6)
# compiled, with the optimizer state: training goes on identically
model.fit(test_input, test_target, verbose=0, shuffle=False)
reconstructed_model.fit(test_input, test_target, verbose=0, shuffle=False)
np.testing.assert_allclose(model.predict(test_input, verbose=0), reconstructed_model.predict(test_input, verbose=0),
                           rtol=1e-5, atol=1e-6)


@keras.saving.register_keras_serializable(package="corpus")
class CustomModel(keras.Model):
    def __init__(self, hidden_units, **kwargs):
        super().__init__(**kwargs)
        self.hidden_units = hidden_units
        self.dense_layers = [keras.layers.Dense(u) for u in hidden_units]

    def call(self, inputs):
        x = inputs
        for layer in self.dense_layers:
            x = layer(x)
        return x

    def get_config(self):
        return {**super().get_config(), "hidden_units": self.hidden_units}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


model = CustomModel([16, 16, 10])
input_arr = rng.random((1, 5)).astype("float32")
outputs = model(input_arr)
path = os.path.join(tmp, "custom_model.keras")
model.save(path)
loaded_1 = keras.models.load_model(path, custom_objects={"CustomModel": CustomModel})
np.testing.assert_allclose(keras.ops.convert_to_numpy(loaded_1(input_arr)), keras.ops.convert_to_numpy(outputs),
                           rtol=1e-5)
assert loaded_1.hidden_units == [16, 16, 10]

layer = keras.layers.Dense(3, activation="relu")
new_layer = keras.layers.Dense.from_config(layer.get_config())
assert new_layer.units == 3 and new_layer.activation is keras.activations.relu

model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
new_model = keras.Sequential.from_config(model.get_config())
assert len(new_model.layers) == 1

inputs = keras.Input((32,))
model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
new_model = keras.Model.from_config(model.get_config())
assert new_model.output_shape == (None, 1)

model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
new_model = keras.models.model_from_json(model.to_json())
assert new_model.count_params() == 33


class CustomLayer(keras.layers.Layer):
    def __init__(self, a, **kwargs):
        super().__init__(**kwargs)
        self.var = keras.Variable(a, name="var_a")

    def call(self, inputs, training=False):
        return inputs * self.var if training else inputs

    def get_config(self):
        return {**super().get_config(), "a": float(keras.ops.convert_to_numpy(self.var))}


layer = CustomLayer(5.0)
layer.var.assign(2.0)
serialized_layer = keras.layers.serialize(layer)
new_layer = keras.layers.deserialize(serialized_layer, custom_objects={"CustomLayer": CustomLayer})
assert float(keras.ops.convert_to_numpy(new_layer.var)) == 2.0


@keras.saving.register_keras_serializable(package="corpus")
class CustomDense(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return keras.ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@keras.saving.register_keras_serializable(package="corpus", name="custom_fn")
def custom_activation(x):
    return keras.ops.tanh(x) ** 2


inputs = keras.Input((32,))
x = CustomDense(32)(inputs)
outputs = keras.layers.Activation(custom_activation)(x)
model = keras.Model(inputs, outputs)
config = model.get_config()
custom_objects = {"CustomDense": CustomDense, "custom_fn": custom_activation}
with keras.saving.custom_object_scope(custom_objects):
    new_model = keras.Model.from_config(config)
assert new_model.layers[-1].activation is custom_activation

path = os.path.join(tmp, "registered.keras")
model.save(path)
reloaded = keras.models.load_model(path)
np.testing.assert_allclose(reloaded.predict(test_input, verbose=0), model.predict(test_input, verbose=0), rtol=1e-5)

with keras.saving.custom_object_scope(custom_objects):
    new_model = keras.models.clone_model(model)
assert len(new_model.weights) == len(model.weights)


def create_layer():
    layer = keras.layers.Dense(64, activation="relu", name="dense_2")
    layer.build((None, 784))
    return layer


layer_1, layer_2 = create_layer(), create_layer()
layer_2.set_weights(layer_1.get_weights())
np.testing.assert_array_equal(layer_2.get_weights()[0], layer_1.get_weights()[0])


def create_functional():
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
    return keras.Model(inputs=inputs, outputs=keras.layers.Dense(10, name="predictions")(x))


functional_model = create_functional()
path = os.path.join(tmp, "pretrained.weights.h5")
functional_model.save_weights(path)
other = create_functional()
other.load_weights(path)
probe = rng.random((2, 784)).astype("float32")
np.testing.assert_allclose(other.predict(probe, verbose=0), functional_model.predict(probe, verbose=0), rtol=1e-6)
print("ok")
