"""Writes activations.json: Keras 3.15.1's activation functions (and their gradients, by torch
autograd) on a fixed input, for tests/test_activations_fn.py.
Run: KERAS_BACKEND=torch /work/kvenv/bin/python tests/keras3_reference/make_activations.py"""
import json
import os

import keras
import numpy as np
import torch

x = np.array([[-3.5, -1.2, -0.5, -0.1, 0.0, 0.3, 0.5, 0.8, 1.0, 2.5, 4.0, 7.0],
              [6.5, -6.5, 0.25, -0.25, 1.5, -1.5, 3.0, -3.0, 0.05, -2.0, 0.75, -0.75]], np.float32)
g = np.linspace(-1.0, 1.3, x.size, dtype=np.float32).reshape(x.shape)   # the upstream gradient

CASES = [("relu", {}), ("relu", {"negative_slope": 0.1}), ("relu", {"max_value": 2.0}),
         ("relu", {"threshold": 0.4}), ("relu", {"negative_slope": 0.1, "max_value": 6.0, "threshold": 0.5}),
         ("relu", {"max_value": 6.0}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.05}),
         ("relu6", {}), ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {}), ("celu", {"alpha": 2.0}),
         ("threshold", {"threshold": 0.3, "default_value": -1.0}), ("gelu", {}), ("gelu", {"approximate": True}),
         ("silu", {}), ("swish", {}), ("mish", {}), ("softplus", {}), ("softsign", {}), ("squareplus", {}),
         ("squareplus", {"b": 1.0}), ("exponential", {}), ("linear", {}), ("sigmoid", {}), ("hard_sigmoid", {}),
         ("sparse_sigmoid", {}), ("log_sigmoid", {}), ("hard_silu", {}), ("hard_swish", {}), ("tanh", {}),
         ("hard_tanh", {}), ("tanh_shrink", {}), ("hard_shrink", {}), ("hard_shrink", {"threshold": 1.0}),
         ("soft_shrink", {}), ("soft_shrink", {"threshold": 1.0}), ("sparse_plus", {}), ("softmax", {}),
         ("softmax", {"axis": 0}), ("log_softmax", {}), ("log_softmax", {"axis": 0}), ("glu", {}),
         ("glu", {"axis": 0})]

out = []
for name, kwargs in CASES:
    t = torch.tensor(x, requires_grad=True)
    y = getattr(keras.activations, name)(t, **kwargs)
    (y * torch.tensor(g[:, :y.shape[1]] if y.shape[1] != x.shape[1] else g[:y.shape[0]])).sum().backward()
    out.append({"name": name, "kwargs": kwargs, "y": y.detach().numpy().tolist(), "dx": t.grad.numpy().tolist()})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "activations.json.tmp"), "w") as f:
    json.dump({"keras": keras.__version__, "x": x.tolist(), "g": g.tolist(), "cases": out,
               "serialize": {n: keras.activations.serialize(getattr(keras.activations, n))
                             for n in ("relu", "swish", "hard_swish", "gelu", "linear", "softmax")}}, f)
os.replace(os.path.join(here, "activations.json.tmp"), os.path.join(here, "activations.json"))
