"""Corpus example: the endpoint layer pattern.

Modeled on keras-team/keras-io examples/keras_recipes/endpoint_layer_pattern.py (commit
8320a6c): a LogisticEndpoint layer that takes the targets as an input, adds its loss with
add_loss() and tracks an accuracy metric of its own; the model is compiled without a loss and
trained on a dict of inputs; then an inference model without the targets. Written anew for
minidl's corpus with the same Keras 3 API; random data as in the original."""

import numpy as np

import minidl as keras
from minidl import layers

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class LogisticEndpoint(layers.Layer):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
        self.accuracy_metric = keras.metrics.BinaryAccuracy()

    def call(self, logits, targets=None, sample_weight=None):
        if targets is not None:
            loss = self.loss_fn(targets, logits, sample_weight)
            self.add_loss(loss)
            self.accuracy_metric.update_state(targets, logits, sample_weight)
        return keras.ops.sigmoid(logits)


inputs = keras.Input((764,), name="inputs")
logits = layers.Dense(1)(inputs)
targets = keras.Input((1,), name="targets")
sample_weight = keras.Input((1,), name="sample_weight")
preds = LogisticEndpoint()(logits, targets, sample_weight)
model = keras.Model([inputs, targets, sample_weight], preds)

rng = np.random.default_rng(0)
data = {"inputs": rng.random((1000, 764)).astype("float32"),
        "targets": rng.random((1000, 1)).astype("float32"),
        "sample_weight": rng.random((1000, 1)).astype("float32")}
model.compile(keras.optimizers.Adam(1e-3))
history = model.fit(data, epochs=2, verbose=0)
losses = history.history["loss"]
print("loss per epoch", losses)
assert losses[1] < losses[0]

inference = keras.Model(inputs, layers.Activation("sigmoid")(logits))
out = inference.predict(data["inputs"][:4], verbose=0)
assert out.shape == (4, 1) and ((out > 0) & (out < 1)).all()
