"""Writes tests/data/keras_add_loss.npz with real Keras 3.15.1 (torch backend): one SGD step of
(a) an endpoint model compiled without a loss, whose layer adds a weighted binary
cross-entropy with add_loss, and (b) a model with a compiled mse loss and a layer adding an L2
activity term with add_loss: the reported losses and the weights after the step.

    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_add_loss.py
"""

import os

import keras
import numpy as np
from keras import layers, ops

rng = np.random.default_rng(12)
out = {}


class Endpoint(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    def call(self, logits, targets=None, sample_weight=None):
        if targets is not None:
            self.add_loss(self.loss_fn(targets, logits, sample_weight))
        return ops.sigmoid(logits)


class Penalty(layers.Layer):
    def call(self, x):
        self.add_loss(0.05 * ops.sum(ops.square(x)))
        return x


x = rng.standard_normal((8, 5)).astype("float32")
t = (rng.random((8, 1)) > 0.5).astype("float32")
w = rng.random((8, 1)).astype("float32")
inputs, targets, weights = keras.Input((5,)), keras.Input((1,)), keras.Input((1,))
model = keras.Model([inputs, targets, weights],
                    Endpoint()(layers.Dense(1)(inputs), targets, weights))
model.set_weights([rng.standard_normal(v.shape).astype("float32") for v in model.weights])
out["endpoint/x"], out["endpoint/t"], out["endpoint/w"] = x, t, w
for i, v in enumerate(model.get_weights()):
    out[f"endpoint/before{i}"] = v
model.compile(keras.optimizers.SGD(0.5))
out["endpoint/loss"] = np.float32(model.train_on_batch([x, t, w]))
for i, v in enumerate(model.get_weights()):
    out[f"endpoint/after{i}"] = v

y = rng.standard_normal((8, 2)).astype("float32")
inputs = keras.Input((5,))
h = Penalty()(layers.Dense(3)(inputs))
model = keras.Model(inputs, layers.Dense(2)(h))
model.set_weights([rng.standard_normal(v.shape).astype("float32") for v in model.weights])
for i, v in enumerate(model.get_weights()):
    out[f"penalty/before{i}"] = v
out["penalty/y"] = y
model.compile(keras.optimizers.SGD(0.1), "mse")
out["penalty/eval_loss"] = np.float32(model.evaluate(x, y, verbose=0))
out["penalty/loss"] = np.float32(model.train_on_batch(x, y))
for i, v in enumerate(model.get_weights()):
    out[f"penalty/after{i}"] = v
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_add_loss.npz")
np.savez(path, **out)
print("wrote", path)
