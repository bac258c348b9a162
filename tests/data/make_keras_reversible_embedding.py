"""Writes tests/data/keras_reversible_embedding.npz with real Keras 3.15.1 (torch backend): a
model that embeds tokens with a ReversibleEmbedding, mixes them with a Dense, and projects back
with the same layer (reverse=True), tied and untied, with a logit soft cap: outputs, and the
gradients of sum(output * cotangent) for every weight.

    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_reversible_embedding.py
"""
import os
import numpy as np
import keras
import torch

rng = np.random.default_rng(6)
out = {}
tokens = np.array([[1, 4, 0, 2], [3, 3, 1, 0]], dtype="int32")
out["tokens"] = tokens
for name, tie, cap in (("tied", True, None), ("untied_cap", False, 2.0)):
    inp = keras.Input((4,), dtype="int32")
    emb = keras.layers.ReversibleEmbedding(5, 3, tie_weights=tie, logit_soft_cap=cap)
    h = keras.layers.Dense(3, activation="tanh")(emb(inp))
    model = keras.Model(inp, emb(h, reverse=True))
    weights = [rng.standard_normal(w.shape).astype("float32") * 0.7 for w in model.weights]
    model.set_weights(weights)
    for i, w in enumerate(model.weights):
        out[f"{name}/weight{i}"] = weights[i]
        out[f"{name}/weight_name{i}"] = np.array(w.path)
    y = model(tokens)
    cot = rng.standard_normal(tuple(y.shape)).astype("float32")
    loss = (y * torch.tensor(cot)).sum()
    grads = torch.autograd.grad(loss, [w.value for w in model.trainable_weights])
    out[f"{name}/out"] = keras.ops.convert_to_numpy(y)
    out[f"{name}/cotangent"] = cot
    for i, g in enumerate(grads):
        out[f"{name}/grad{i}"] = g.detach().numpy()
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reversible_embedding.npz")
np.savez(path, **out)
print("wrote", path)
