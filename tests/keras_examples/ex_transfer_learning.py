"""Corpus example: transfer learning and fine-tuning.

Modeled on keras-team/keras-io guides/transfer_learning.py (commit 0a57de4): weights /
trainable_weights / non_trainable_weights of Dense and BatchNormalization, layer.trainable =
False freezing a layer through fit, `trainable` set recursively on nested models, the
workflow base_model.trainable = False -> base_model(inputs, training=False) ->
GlobalAveragePooling2D -> Dense, BinaryCrossentropy(from_logits=True) with BinaryAccuracy,
then unfreezing and recompiling with Adam(1e-5) for fine-tuning while BatchNormalization stays
in inference mode; finally the guide's base model, applications.Xception(include_top=False),
built here with weights=None. Written anew for minidl's corpus with the same Keras 3 API; a
small convnet base "pretrained" on synthetic digits in place of ImageNet weights for the
workflow, synthetic images in place of cats vs dogs."""

import numpy as np

import minidl as keras
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

layer = keras.layers.Dense(3)
layer.build((None, 4))
assert (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)) == (2, 2, 0)
layer = keras.layers.BatchNormalization()
layer.build((None, 4))
assert (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)) == (4, 2, 2)
layer = keras.layers.Dense(3)
layer.build((None, 4))
layer.trainable = False
assert (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)) == (2, 0, 2)

layer1 = keras.layers.Dense(3, activation="relu")
layer2 = keras.layers.Dense(3, activation="sigmoid")
model = keras.Sequential([keras.Input(shape=(3,)), layer1, layer2])
layer1.trainable = False
initial_layer1_weights_values = layer1.get_weights()
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.random((2, 3)), np.random.random((2, 3)), verbose=0)
final_layer1_weights_values = layer1.get_weights()
np.testing.assert_allclose(initial_layer1_weights_values[0], final_layer1_weights_values[0])
np.testing.assert_allclose(initial_layer1_weights_values[1], final_layer1_weights_values[1])

inner_model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(3, activation="relu"),
                                keras.layers.Dense(3, activation="relu")])
model = keras.Sequential([keras.Input(shape=(3,)), inner_model, keras.layers.Dense(3, activation="sigmoid")])
model.trainable = False
assert inner_model.trainable is False and inner_model.layers[0].trainable is False

# a small base model, trained first on one task (ten digit classes)
(x_digits, y_digits) = digits(800, 1, size=32)
images = np.repeat(x_digits[..., None], 3, axis=-1).astype("float32") / 255.0
base_inputs = keras.Input(shape=(32, 32, 3))
x = keras.layers.Conv2D(16, 3, activation="relu")(base_inputs)
x = keras.layers.BatchNormalization()(x)
x = keras.layers.MaxPooling2D()(x)
base_outputs = keras.layers.Conv2D(32, 3, activation="relu")(x)
base_model = keras.Model(base_inputs, base_outputs, name="base")
pretrain = keras.Sequential([base_model, keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)])
pretrain.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
# enough steps for BatchNormalization's moving statistics (momentum 0.99) to settle
pretrain.fit(images, y_digits, epochs=4, batch_size=16, verbose=0)

# the new task: is there a bar at all? (half the images are plain noise; global pooling keeps
# that, where it would lose the bar's position)
rng = np.random.default_rng(3)
new_y = (rng.random(len(images)) < 0.5).astype("float32")
noise_only = rng.integers(0, 60, images.shape).astype("float32") / 255.0
images = np.where(new_y[:, None, None, None] == 1, images, noise_only).astype("float32")
base_model.trainable = False
inputs = keras.Input(shape=(32, 32, 3))
x = base_model(inputs, training=False)
x = keras.layers.GlobalAveragePooling2D()(x)
outputs = keras.layers.Dense(1)(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(), loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=[keras.metrics.BinaryAccuracy()])
frozen = [w.copy() for w in base_model.get_weights()]
history = model.fit(images, new_y, epochs=10, batch_size=16, validation_split=0.2, verbose=0)
assert all((a == b).all() for a, b in zip(frozen, base_model.get_weights()))   # BN statistics included
print("transfer", history.history["val_binary_accuracy"])
assert history.history["val_binary_accuracy"][-1] > 0.75

base_model.trainable = True
model.compile(optimizer=keras.optimizers.Adam(1e-5), loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=[keras.metrics.BinaryAccuracy()])
bn = base_model.layers[2]
moving = [w.copy() for w in bn.non_trainable_weights and bn.get_weights()[2:]]
history = model.fit(images, new_y, epochs=1, batch_size=64, validation_split=0.2, verbose=0)
assert not (frozen[0] == base_model.get_weights()[0]).all()       # fine-tuned
np.testing.assert_array_equal(moving[0], bn.get_weights()[2])      # BN kept in inference mode
print("fine-tuned", history.history)

base_model = keras.applications.Xception(weights=None, input_shape=(71, 71, 3), include_top=False)
base_model.trainable = False
inputs = keras.Input(shape=(71, 71, 3))
scale_layer = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)
x = base_model(scale_layer(inputs), training=False)
outputs = keras.layers.Dense(1)(keras.layers.GlobalAveragePooling2D()(x))
model = keras.Model(inputs, outputs)
assert model.predict(np.zeros((1, 71, 71, 3), "float32"), verbose=0).shape == (1, 1)
