"""Corpus example: the Sequential model guide.

Modeled on keras-team/keras-io guides/sequential_model.py: a Sequential built from a list and
with add(), pop(), lazy building (weights appear on the first call), summary(), an Input first,
a feature extractor Model(inputs=model.inputs, outputs=[layer.output ...]) and transfer learning
by freezing all layers but the last. Written anew for minidl's corpus with the same Keras 3 API."""

import numpy as np

import minidl as keras
from minidl import layers

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

model = keras.Sequential([layers.Dense(2, activation="relu", name="layer1"),
                          layers.Dense(3, activation="relu", name="layer2"),
                          layers.Dense(4, name="layer3")])
x = np.ones((3, 3), "float32")
y = model(x)
assert y.shape == (3, 4)
assert len(model.layers) == 3

model = keras.Sequential()
model.add(layers.Dense(2, activation="relu"))
model.add(layers.Dense(3, activation="relu"))
model.add(layers.Dense(4))
model.pop()
assert len(model.layers) == 2

layer = layers.Dense(3)
assert layer.weights == []          # no weights before the layer is built
layer(np.ones((1, 4), "float32"))
assert len(layer.weights) == 2

model = keras.Sequential([layers.Dense(2, activation="relu"), layers.Dense(3, activation="relu"),
                          layers.Dense(4)])
model(np.ones((1, 4), "float32"))
assert len(model.weights) == 6
model.summary()

model = keras.Sequential()
model.add(keras.Input(shape=(250, 250, 3)))
model.add(layers.Conv2D(8, 5, strides=2, activation="relu"))
model.add(layers.Conv2D(8, 3, activation="relu"))
model.add(layers.MaxPooling2D(3))
model.summary()
model.add(layers.Conv2D(8, 3, activation="relu"))
model.add(layers.MaxPooling2D(2))
model.add(layers.GlobalMaxPooling2D())
model.add(layers.Dense(10))

extractor = keras.Model(inputs=model.inputs, outputs=[layer.output for layer in model.layers])
features = extractor(np.ones((1, 250, 250, 3), "float32"))
assert len(features) == len(model.layers)

# transfer learning: freeze all layers but the last
model = keras.Sequential([keras.Input(shape=(784,)), layers.Dense(32, activation="relu"),
                          layers.Dense(32, activation="relu"), layers.Dense(10)])
for layer in model.layers[:-1]:
    layer.trainable = False
model.compile(optimizer="adam", loss="mse")
frozen = [w.copy() for w in model.layers[0].get_weights()]
last = model.layers[-1].get_weights()[0].copy()
model.fit(np.random.random((64, 784)).astype("float32"), np.random.random((64, 10)).astype("float32"),
          epochs=1, verbose=0)
assert all((a == b).all() for a, b in zip(frozen, model.layers[0].get_weights()))
assert not (last == model.layers[-1].get_weights()[0]).all()
print("ok")
