"""A layer's activation given as a function written with minidl.ops (Keras allows any
callable): the same outputs and training as the linear layer followed by a Lambda of the
function, on every backend; saved by its registered name."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops


@minidl.saving.register_keras_serializable(package="tests")
def elu_plus_one(x):
    return ops.elu(x) + 1.0 + 1e-6


def test_function_activation_matches_a_lambda_after_a_linear_layer(backend, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    inp = layers.Input((3,))
    fused = minidl.Model(inp, layers.Dense(2, name="head")(layers.Dense(4, activation=elu_plus_one)(inp)))
    inp2 = layers.Input((3,))
    plain = minidl.Model(inp2, layers.Dense(2, name="head")(layers.Lambda(elu_plus_one)(layers.Dense(4)(inp2))))
    plain.set_weights(fused.get_weights())
    np.testing.assert_allclose(fused.predict(x, verbose=0), plain.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    for m in (fused, plain):
        m.compile(minidl.optimizers.SGD(0.1), "mse")
        m.train_on_batch(x, y)
    for a, b in zip(fused.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert fused.layers[1].get_config()["activation"] == "tests>elu_plus_one"
    path = str(tmp_path / "m.keras")
    fused.save(path)
    loaded = minidl.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), fused.predict(x, verbose=0), rtol=1e-6)


def test_function_activation_errors():
    with pytest.raises(ValueError, match="unknown activation 'no_such_fn'"):
        layers.Dense(2, activation="no_such_fn")
    bad = layers.Dense(2, activation=lambda t: ops.sum(t, axis=-1))
    with pytest.raises(ValueError, match="activation function must keep the shape"):
        bad(np.ones((3, 4), np.float32))
