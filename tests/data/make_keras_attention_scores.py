"""Writes tests/data/keras_attention_scores.npz with real Keras 3.15.1 (torch backend): the
output and the attention scores of MultiHeadAttention (causal, with an attention mask) and of
Attention (use_scale), and the gradients of sum(out * c1) + sum(scores * c2) for the inputs and
the weights, which tests/test_attention_scores.py compares minidl's two-output calls with.

    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_attention_scores.py
"""

import os

import keras
import numpy as np
import torch

rng = np.random.default_rng(41)
out = {}


def record(name, layer, inputs, call):
    tensors = [torch.tensor(x, requires_grad=True) for x in inputs]
    y, scores = call(*tensors)
    c1 = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    c2 = rng.standard_normal(tuple(scores.shape)).astype(np.float32)
    ((y * torch.tensor(c1)).sum() + (scores * torch.tensor(c2)).sum()).backward()
    out[f"{name}/out"], out[f"{name}/scores"] = y.detach().numpy(), scores.detach().numpy()
    out[f"{name}/c1"], out[f"{name}/c2"] = c1, c2
    for i, (x, t) in enumerate(zip(inputs, tensors)):
        out[f"{name}/input{i}"] = x
        out[f"{name}/dinput{i}"] = t.grad.numpy()
    for i, w in enumerate(layer.weights):
        out[f"{name}/weight{i}"] = keras.ops.convert_to_numpy(w)
        out[f"{name}/dweight{i}"] = w.value.grad.numpy()


q = rng.standard_normal((2, 4, 6)).astype(np.float32)
v = rng.standard_normal((2, 5, 6)).astype(np.float32)
mask = (rng.random((2, 4, 5)) > 0.3).astype(np.float32)
mask[..., 0] = 1
mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
mha(q, v)
for w in mha.weights:
    w.assign(rng.standard_normal(w.shape).astype(np.float32) * 0.5)
record("mha", mha, [q, v], lambda a, b: mha(a, b, attention_mask=torch.tensor(mask),
                                            return_attention_scores=True))
out["mha/mask"] = mask
att = keras.layers.Attention(use_scale=True)
att([q, v])
att.scale.assign(np.float32(0.7))
record("attention", att, [q, v], lambda a, b: att([a, b], return_attention_scores=True,
                                                  use_causal_mask=True))
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_attention_scores.npz")
np.savez(path, **out)
print("wrote", path)
