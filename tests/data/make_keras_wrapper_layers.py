"""Writes tests/data/keras_wrapper_layers.npz with real Keras 3.15.1 (torch backend):
SpectralNormalization around a Dense and a Conv2D (one training call from fixed weights and
vector_u: output, the normalized kernel, the new vector_u; then an inference call), and the
training loss of a model with ActivityRegularization.

    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_wrapper_layers.py
"""

import os

import numpy as np
import keras

rng = np.random.default_rng(3)
out = {}

for name, make, shape in (("dense", lambda: keras.layers.Dense(4), (2, 5)),
                          ("conv", lambda: keras.layers.Conv2D(3, 2), (2, 4, 4, 2))):
    layer = keras.layers.SpectralNormalization(make(), power_iterations=2)
    x = rng.standard_normal(shape).astype("float32")
    layer.build(x.shape)
    kernel = rng.standard_normal(tuple(layer.layer.kernel.shape)).astype("float32")
    u = rng.standard_normal((1, kernel.shape[-1])).astype("float32")
    bias = rng.standard_normal(tuple(layer.layer.bias.shape)).astype("float32")
    layer.layer.kernel.assign(kernel)
    layer.layer.bias.assign(bias)
    layer.vector_u.assign(u)
    out[f"{name}/x"], out[f"{name}/kernel"], out[f"{name}/bias"], out[f"{name}/u"] = x, kernel, bias, u
    out[f"{name}/train_out"] = keras.ops.convert_to_numpy(layer(x, training=True))
    out[f"{name}/new_kernel"] = keras.ops.convert_to_numpy(layer.layer.kernel)
    out[f"{name}/new_u"] = keras.ops.convert_to_numpy(layer.vector_u)
    out[f"{name}/infer_out"] = keras.ops.convert_to_numpy(layer(x, training=False))
    out[f"{name}/weight_names"] = np.array([w.path.split("/", 1)[-1] for w in layer.weights])

inp = keras.Input((3,))
y = keras.layers.ActivityRegularization(l1=0.1, l2=0.02)(inp)
model = keras.Model(inp, keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")(y))
model.compile("sgd", "mse")
x = rng.standard_normal((4, 3)).astype("float32")
t = rng.standard_normal((4, 1)).astype("float32")
out["activity/x"], out["activity/y"] = x, t
out["activity/loss"] = np.float32(model.evaluate(x, t, verbose=0))
path = os.path.join(os.path.dirname(__file__), "keras_wrapper_layers.npz")
np.savez(path, **out)
print("wrote", path, sorted(out))
