"""ReversibleEmbedding on every backend against Keras 3.15.1
(tests/data/make_keras_reversible_embedding.py): one layer embeds the tokens and, called with
reverse=True, projects the hidden states back to logits; outputs and the weights' gradients."""

import os

import numpy as np
import pytest

import minidl
from minidl import layers, ops

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_reversible_embedding.npz"))


def _case(name):
    return {k.split("/", 1)[1]: KERAS[k] for k in KERAS.files if k.startswith(name + "/")}


def _model(tie, cap):
    inp = layers.Input((4,))
    emb = layers.ReversibleEmbedding(5, 3, tie_weights=tie, logit_soft_cap=cap)
    h = layers.Dense(3, activation="tanh")(emb(inp))
    return minidl.Model(inp, emb(h, reverse=True)), emb


def _dot_loss(y_true, y_pred):
    """sum(y_pred * cotangent) per position: its gradient is the cotangent."""
    return ops.sum(ops.multiply(y_pred, y_true), axis=-1)


@pytest.mark.parametrize("name, tie, cap", [("tied", True, None), ("untied_cap", False, 2.0)])
def test_reversible_embedding_matches_keras(backend, name, tie, cap):
    c = _case(name)
    model, emb = _model(tie, cap)
    count = len([k for k in c if k.startswith("weight_name")])
    weights = [c[f"weight{i}"] for i in range(count)]
    names = [str(c[f"weight_name{i}"]).split("/")[-1] for i in range(count)]
    assert [w.name.split("/")[-1] for w in model.weights] == names
    model.set_weights(weights)
    tokens = KERAS["tokens"].astype(np.float32)
    np.testing.assert_allclose(model.predict(tokens, verbose=0), c["out"], rtol=1e-5, atol=1e-5)
    model.compile(minidl.optimizers.SGD(1.0), minidl.losses.LossFunctionWrapper(_dot_loss, reduction="sum"))
    model.train_on_batch(tokens, c["cotangent"])
    for i, (before, after) in enumerate(zip(weights, model.get_weights())):
        np.testing.assert_allclose(before - after, c[f"grad{i}"], rtol=1e-4, atol=1e-5,
                                   err_msg=names[i])
    assert emb.compute_output_shape((None, 4)) == (None, 4, 3)


def test_reversible_embedding_config_and_errors(backend, tmp_path):
    model, emb = _model(False, 3.0)
    config = emb.get_config()
    assert config["tie_weights"] is False and config["logit_soft_cap"] == 3.0
    clone = layers.ReversibleEmbedding.from_config(config)
    assert clone.tie_weights is False
    x = np.array([[1, 2, 3, 4]], np.float32)
    path = str(tmp_path / "m.keras")
    model.save(path)
    np.testing.assert_allclose(minidl.models.load_model(path).predict(x, verbose=0),
                               model.predict(x, verbose=0), rtol=1e-6)
    with pytest.raises(TypeError, match="unexpected call argument 'reversed'"):
        emb(layers.Input((4, 3)), reversed=True)
    with pytest.raises(ValueError, match="reverse_dtype"):
        layers.ReversibleEmbedding(4, 2, reverse_dtype="bfloat16")
    # eager: arrays in both directions
    hidden = emb(x)
    assert hidden.shape == (1, 4, 3) and emb(hidden, reverse=True).shape == (1, 4, 5)
