"""return_attention_scores=True as a second output of MultiHeadAttention and Attention, in a
layer run and in a model, with the scores' gradient, on every backend, against Keras 3.15.1
(tests/data/make_keras_attention_scores.py)."""

import os

import numpy as np
import pytest

import minidl
from minidl import layers, ops
from layer_runs import LayerRun

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_attention_scores.npz"))
TOL = dict(rtol=2e-4, atol=2e-5)


def _case(name):
    return {k.split("/", 1)[1]: KERAS[k] for k in KERAS.files if k.startswith(name + "/")}


def _weights(c):
    return [c[f"weight{i}"] for i in range(len([k for k in c if k.startswith("weight")]))]


def _make(name):
    if name == "mha":
        return layers.MultiHeadAttention(num_heads=2, key_dim=3), {"use_causal_mask": False}
    return layers.Attention(use_scale=True), {"use_causal_mask": True}


@pytest.mark.parametrize("name", ["mha", "attention"])
def test_scores_output_and_gradient_match_keras(backend, name):
    c = _case(name)
    layer, options = _make(name)
    inputs = [c["input0"], c["input1"]]
    if name == "mha":   # [query, value, key = value, mask], as the layer's __call__ lays it out
        inputs = inputs + [c["input1"], c["mask"]]
    layer.build_once([x.shape[1:] for x in inputs])
    layer.attach(backend)
    layer.set_weights(_weights(c))
    run = LayerRun(layer, options=dict(options, return_attention_scores=True))
    out, scores = run.forward([backend.from_numpy(x) for x in inputs], False)
    np.testing.assert_allclose(backend.to_numpy(out), c["out"], **TOL)
    np.testing.assert_allclose(backend.to_numpy(scores), c["scores"], **TOL)
    grads = run.backward([backend.from_numpy(c["c1"]), backend.from_numpy(c["c2"])])
    grads = [backend.to_numpy(g) for g in grads]
    if name == "mha":
        grads = [grads[0], grads[1] + grads[2]]   # the value served as the key too
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, c[f"dinput{i}"], **TOL)
    for i, w in enumerate(layer.trainable_weights):
        np.testing.assert_allclose(backend.to_numpy(w.grad), c[f"dweight{i}"], rtol=1e-3, atol=1e-4)


def _dot_loss(y_true, y_pred):
    return ops.sum(ops.multiply(y_pred, y_true), axis=-1)


def test_scores_train_in_a_model(backend):
    """A model with the scores as an output whose loss reaches the weights through them."""
    c = _case("mha")
    q_in, v_in, m_in = layers.Input((4, 6)), layers.Input((5, 6)), layers.Input((4, 5))
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    out, scores = mha(q_in, v_in, attention_mask=m_in, return_attention_scores=True)
    model = minidl.Model([q_in, v_in, m_in], [out, scores])
    weights = _weights(c)
    model.set_weights(weights)
    got = model.predict([c["input0"], c["input1"], c["mask"]], verbose=0)
    np.testing.assert_allclose(got[0], c["out"], **TOL)
    np.testing.assert_allclose(got[1], c["scores"], **TOL)
    loss = minidl.losses.LossFunctionWrapper(_dot_loss, reduction="sum")
    model.compile(minidl.optimizers.SGD(1.0), [loss, loss])
    model.train_on_batch([c["input0"], c["input1"], c["mask"]], [c["c1"], c["c2"]])
    for i, (before, after) in enumerate(zip(weights, model.get_weights())):
        np.testing.assert_allclose(before - after, c[f"dweight{i}"], rtol=1e-3, atol=1e-4)


def test_unused_scores_change_nothing(backend):
    """Scores that no loss uses: the same training as the call without them."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    y = rng.standard_normal((3, 4, 6)).astype(np.float32)
    results = []
    for scores in (False, True):
        inp = layers.Input((4, 6))
        mha = layers.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")
        result = mha(inp, inp, return_attention_scores=scores)
        model = minidl.Model(inp, result[0] if scores else result)
        if results:
            model.set_weights(results[0][0])
        model.compile(minidl.optimizers.SGD(0.1), "mse")
        start = model.get_weights()
        model.train_on_batch(x, y)
        results.append((start, model.get_weights()))
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_scores_model_file_round_trip(backend, tmp_path):
    inp = layers.Input((4, 6))
    out, scores = layers.MultiHeadAttention(num_heads=2, key_dim=3)(inp, inp, use_causal_mask=True,
                                                                    return_attention_scores=True)
    model = minidl.Model(inp, [out, scores])
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    for suffix in (".keras", ".minidl"):
        path = str(tmp_path / ("m" + suffix))
        model.save(path)
        loaded = minidl.models.load_model(path)
        for a, b in zip(loaded.predict(x, verbose=0), model.predict(x, verbose=0)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
