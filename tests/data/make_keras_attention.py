"""Writes tests/data/keras_attention.npz with real Keras 3.15.1 (torch backend): inputs, weights,
outputs, attention scores and gradients of MultiHeadAttention, Attention and EinsumDense, which
tests/test_attention.py compares minidl's with. Run:
    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_attention.py
"""

import os

import keras
import numpy as np
import torch

rng = np.random.default_rng(22)
cases = {}


def grads(layer, inputs, call):
    """Output, input gradients and weight gradients of sum(output * cotangent)."""
    tensors = [torch.tensor(x, requires_grad=True) for x in inputs]
    out = call(*tensors)
    cotangent = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    (out * torch.tensor(cotangent)).sum().backward()
    return (out.detach().numpy(), cotangent, [t.grad.numpy() for t in tensors],
            [w.value.grad.numpy() for w in layer.trainable_weights])


def store(name, inputs, weights, out, cotangent, dinputs, dweights, **extra):
    cases[f"{name}/out"] = out
    cases[f"{name}/cotangent"] = cotangent
    for i, x in enumerate(inputs):
        cases[f"{name}/input{i}"] = x
        cases[f"{name}/dinput{i}"] = dinputs[i]
    for i, (w, g) in enumerate(zip(weights, dweights)):
        cases[f"{name}/weight{i}"] = w
        cases[f"{name}/dweight{i}"] = g
    for key, value in extra.items():
        cases[f"{name}/{key}"] = value


def set_random_weights(layer):
    weights = [(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in layer.weights]
    layer.set_weights(weights)
    return weights


# MultiHeadAttention with value_dim != key_dim, an attention mask and the causal mask
B, Tq, Tv = 2, 4, 5
q = rng.standard_normal((B, Tq, 6)).astype(np.float32)
v = rng.standard_normal((B, Tv, 3)).astype(np.float32)
mask = (rng.random((B, Tq, Tv)) > 0.3)
mask[1, 2] = False   # a row that may attend nothing
mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)
mha(q, v)
weights = set_random_weights(mha)
_, scores = mha(q, v, attention_mask=mask, use_causal_mask=True, return_attention_scores=True)
out, cot, dins, dws = grads(mha, [q, v], lambda a, b: mha(a, b, attention_mask=torch.tensor(mask),
                                                            use_causal_mask=True))
store("mha_masked", [q, v], weights, out, cot, dins, dws, mask=mask.astype(np.float32),
      scores=scores.detach().numpy(),
      weight_names=np.array([w.path.split("/", 1)[1] for w in mha.weights]))

# self-attention with a separate key, output_shape and no bias
x = rng.standard_normal((B, Tq, 8)).astype(np.float32)
kx = rng.standard_normal((B, Tq, 5)).astype(np.float32)
mha2 = keras.layers.MultiHeadAttention(num_heads=3, key_dim=2, output_shape=7, use_bias=False)
mha2(x, x, kx)
weights = set_random_weights(mha2)
out, cot, dins, dws = grads(mha2, [x, x, kx], lambda a, b, c: mha2(a, b, c))
store("mha_key", [x, x, kx], weights, out, cot, dins, dws)

# Attention (Luong) with use_scale and the causal mask
qa = rng.standard_normal((B, Tq, 4)).astype(np.float32)
va = rng.standard_normal((B, Tq, 4)).astype(np.float32)
att = keras.layers.Attention(use_scale=True)
att([qa, va])
att.set_weights([np.array(0.7, np.float32)])
out, cot, dins, dws = grads(att, [qa, va], lambda a, b: att([a, b], use_causal_mask=True))
store("attention_causal", [qa, va], [np.array(0.7, np.float32)], out, cot, dins, dws)

# EinsumDense equations
for name, equation, in_shape, out_shape, bias in (
        ("einsum_abc_cde", "abc,cde->abde", (B, 3, 4), (None, 2, 5), "de"),
        ("einsum_abcd_cde", "abcd,cde->abe", (B, 3, 2, 4), (None, 6), "e"),
        ("einsum_ab_bc", "ab,bc->ac", (B, 4), (3,), "c"),
        ("einsum_abc_cd", "abc,cd->abd", (B, 3, 4), (None, 5), None)):
    x = rng.standard_normal(in_shape).astype(np.float32)
    layer = keras.layers.EinsumDense(equation, out_shape, bias_axes=bias, activation="relu")
    layer(x)
    weights = set_random_weights(layer)
    out, cot, dins, dws = grads(layer, [x], lambda a: layer(a))
    store(name, [x], weights, out, cot, dins, dws)

# normalization layers of the transformer kit
x = rng.standard_normal((B, 3, 8)).astype(np.float32)
x[0, 0] = 0   # a zero row: UnitNormalization's 1e12 cap
for name, layer in (("rms_norm", keras.layers.RMSNormalization()),
                    ("unit_norm", keras.layers.UnitNormalization()),
                    ("group_norm", keras.layers.GroupNormalization(groups=4))):
    layer(x)
    weights = set_random_weights(layer) if layer.weights else []
    out, cot, dins, dws = grads(layer, [x], lambda a: layer(a))
    store(name, [x], weights, out, cot, dins, dws)

# ops.dot_product_attention: grouped-query heads (4 query heads, 2 key / value heads), a
# boolean mask (B, 1, T, S) and the causal mask
qo = rng.standard_normal((B, 4, 4, 3)).astype(np.float32)
ko = rng.standard_normal((B, 5, 2, 3)).astype(np.float32)
vo = rng.standard_normal((B, 5, 2, 2)).astype(np.float32)
mo = rng.random((B, 1, 4, 5)) > 0.2
mo[:, :, :, 0] = True   # every query may attend a key (Keras's own kernels differ on empty rows)
tensors = [torch.tensor(x, requires_grad=True) for x in (qo, ko, vo)]
out = keras.ops.dot_product_attention(*tensors, mask=torch.tensor(mo), is_causal=True, scale=0.4)
cot = rng.standard_normal(tuple(out.shape)).astype(np.float32)
(out * torch.tensor(cot)).sum().backward()
store("dpa_gqa", [qo, ko, vo], [], out.detach().numpy(), cot, [t.grad.numpy() for t in tensors], [],
      mask=mo.astype(np.float32))

# GroupQueryAttention: 4 query heads sharing 2 key / value heads, causal
gq = rng.standard_normal((B, Tq, 8)).astype(np.float32)
gv = rng.standard_normal((B, Tv, 6)).astype(np.float32)
gqa = keras.layers.GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2)
gqa(gq, gv)
weights = set_random_weights(gqa)
out, cot, dins, dws = grads(gqa, [gq, gv], lambda a, b: gqa(a, b, use_causal_mask=True))
store("gqa", [gq, gv], weights, out, cot, dins, dws)

# AdditiveAttention with its scale, causal, and a separate key
qd = rng.standard_normal((B, Tq, 4)).astype(np.float32)
vd = rng.standard_normal((B, Tv, 3)).astype(np.float32)
kd = rng.standard_normal((B, Tv, 4)).astype(np.float32)
add = keras.layers.AdditiveAttention()
add([qd, vd, kd])
weights = set_random_weights(add)
out, cot, dins, dws = grads(add, [qd, vd, kd], lambda a, b, c: add([a, b, c], use_causal_mask=True))
store("additive", [qd, vd, kd], weights, out, cot, dins, dws)

# Dot: (B, n) . (B, n) normalized, and (B, T, d) . (B, d, S) over axes (2, 1)
for name, shapes, axes, normalize in (("dot_2d", ((B, 5), (B, 5)), 1, True),
                                      ("dot_3d", ((B, 3, 4), (B, 4, 6)), (2, 1), False)):
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    layer = keras.layers.Dot(axes, normalize=normalize)
    out, cot, dins, dws = grads(layer, xs, lambda a, b: layer([a, b]))
    store(name, xs, [], out, cot, dins, dws)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_attention.npz")
tmp = path + ".tmp.npz"
np.savez(tmp, **cases)
os.replace(tmp, path)
print(f"wrote {len(cases)} arrays to {path} with keras {keras.__version__}")
