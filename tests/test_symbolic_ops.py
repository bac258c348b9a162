"""minidl.ops and Python operators on a functional model's symbolic tensors (KerasTensors), as
Keras 3: each call returns a KerasTensor of the op's shape and becomes a node of the graph
(layers/op_nodes.py) that trains, predicts, shows in the summary, saves and loads. Shapes, names
and types are Keras 3.15.1's (printed by keras with the torch backend). Model tests run on
every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops
from test_keras_compat import active_backend  # noqa: F401  (the every-backend fixture)

# expression on i = Input((4, 8)) -> (the expression, shape, dtype as Keras 3.15.1 prints them)
KERAS_SHAPES = {
    "ops.reshape(i, (-1, 4, 2, 4))": (lambda i: ops.reshape(i, (-1, 4, 2, 4)), (None, 4, 2, 4), "float32"),
    "ops.transpose(ops.reshape(i, (-1, 4, 2, 4)), axes=[0, 2, 1, 3])": (lambda i: ops.transpose(ops.reshape(i, (-1, 4, 2, 4)), axes=[0, 2, 1, 3]), (None, 2, 4, 4), "float32"),
    "ops.sum(i, axis=-1, keepdims=True)": (lambda i: ops.sum(i, axis=-1, keepdims=True), (None, 4, 1), "float32"),
    "1e-9 + i": (lambda i: 1e-9 + i, (None, 4, 8), "float32"),
    "ops.matmul(i, ops.transpose(i, (0, 2, 1)))": (lambda i: ops.matmul(i, ops.transpose(i, (0, 2, 1))), (None, 4, 4), "float32"),
    "i @ ops.ones((8, 3))": (lambda i: i @ ops.ones((8, 3)), (None, 4, 3), "float32"),
    "ops.softmax(i, axis=1)": (lambda i: ops.softmax(i, axis=1), (None, 4, 8), "float32"),
    "ops.nn.softmax(i)": (lambda i: ops.nn.softmax(i), (None, 4, 8), "float32"),
    "ops.concatenate([i, i], axis=-1)": (lambda i: ops.concatenate([i, i], axis=-1), (None, 4, 16), "float32"),
    "ops.stack([i, i], axis=1)": (lambda i: ops.stack([i, i], axis=1), (None, 2, 4, 8), "float32"),
    "ops.mean(i, axis=1)": (lambda i: ops.mean(i, axis=1), (None, 8), "float32"),
    "i[:, 0]": (lambda i: i[:, 0], (None, 8), "float32"),
    "i[..., 1:3]": (lambda i: i[..., 1:3], (None, 4, 2), "float32"),
    "i[:, None]": (lambda i: i[:, None], (None, 1, 4, 8), "float32"),
    "-i": (lambda i: -i, (None, 4, 8), "float32"),
    "i * 2": (lambda i: i * 2, (None, 4, 8), "float32"),
    "2 / i": (lambda i: 2 / i, (None, 4, 8), "float32"),
    "i ** 2": (lambda i: i ** 2, (None, 4, 8), "float32"),
    "abs(i)": (lambda i: abs(i), (None, 4, 8), "float32"),
    "ops.cast(i, 'int32')": (lambda i: ops.cast(i, 'int32'), (None, 4, 8), "int32"),
    # Keras says bool: minidl's tensors are float32 or int32, comparisons give 0.0 / 1.0
    "i > 0": (lambda i: i > 0, (None, 4, 8), "float32"),
}


@pytest.mark.parametrize("expression", sorted(KERAS_SHAPES))
def test_shapes_and_dtypes_as_keras(active_backend, expression):
    make, shape, dtype = KERAS_SHAPES[expression]
    t = make(layers.Input((4, 8)))
    assert isinstance(t, layers.KerasTensor)
    assert (tuple(t.shape), t.dtype) == (shape, dtype)


def test_unknown_dimensions_and_several_outputs():
    i = layers.Input((None, 6))
    a, b = ops.split(i, 2, axis=-1)
    assert a.shape == b.shape == (None, None, 3)
    assert ops.concatenate([b, a], axis=-1).shape == (None, None, 6)
    assert ops.shape(i) == (None, None, 6)


def _ops_model():
    """External attention's double normalization and friends, between two Dense layers."""
    inp = layers.Input((4, 8))
    x = layers.Dense(8, name="d1")(inp)
    x = ops.transpose(ops.reshape(x, (-1, 4, 2, 4)), axes=[0, 2, 1, 3])
    x = ops.softmax(x, axis=2)
    x = x / (1e-9 + ops.sum(x, axis=-1, keepdims=True))
    x = ops.reshape(x, [-1, 32])[:, ::2] * 2.0 - ops.mean(inp, axis=(1, 2))[:, None]
    x = ops.concatenate([x, ops.tanh(x)], axis=-1)
    return minidl.Model(inp, layers.Dense(3, name="d2")(x))


def _eager(model, x):
    """The same computation with the model's layers called on Tensors (GradientTape mode)."""
    d1, d2 = model.get_layer("d1"), model.get_layer("d2")
    inp = ops.convert_to_tensor(x)
    h = ops.transpose(ops.reshape(d1(inp), (-1, 4, 2, 4)), axes=[0, 2, 1, 3])
    h = ops.softmax(h, axis=2)
    h = h / (1e-9 + ops.sum(h, axis=-1, keepdims=True))
    h = ops.reshape(h, [-1, 32])[:, ::2] * 2.0 - ops.mean(inp, axis=(1, 2))[:, None]
    return d2(ops.concatenate([h, ops.tanh(h)], axis=-1))


def _data(n=16):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 4, 8)).astype(np.float32)
    return x, rng.standard_normal((n, 3)).astype(np.float32)


def test_a_model_of_ops_predicts_as_its_eager_computation(active_backend):
    model = _ops_model()
    x, _ = _data()
    np.testing.assert_allclose(model.predict(x, verbose=0), ops.convert_to_numpy(_eager(model, x)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(model(x)), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_gradients_through_op_nodes_equal_the_eager_ones(active_backend):
    model = _ops_model()
    x, y = _data()
    model.compile(minidl.optimizers.SGD(learning_rate=1.0), "mse")
    before = [w.numpy().copy() for w in model.trainable_weights]
    with minidl.GradientTape() as tape:
        loss = ops.mean(ops.square(_eager(model, x) - y))
    eager = [ops.convert_to_numpy(g) for g in tape.gradient(loss, model.trainable_weights)]
    model.train_on_batch(x, y)      # one SGD step of rate 1: the weights move by -gradient
    for w, b, g in zip(model.trainable_weights, before, eager):
        np.testing.assert_allclose(b - w.numpy(), g, rtol=1e-4, atol=1e-6)


def test_a_model_of_ops_trains(active_backend):
    model = _ops_model()
    x, y = _data(64)
    model.compile("adam", "mse")
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.9 * history.history["loss"][0], history.history


def test_names_types_and_layers_as_keras():
    minidl.backend.clear_session()
    inp = layers.Input((4, 8))
    x = ops.transpose(ops.reshape(inp, (-1, 4, 2, 4)), axes=[0, 2, 1, 3])
    x = x / (1e-9 + ops.sum(x, axis=-1, keepdims=True))
    y = -x[:, 0] ** 2
    model = minidl.Model(inp, layers.Dense(2)(ops.reshape(y, (-1, 16))))
    # Keras 3.15.1's model.operations names and classes, and its model.layers
    assert [op.name for op in model.operations] == [
        "input_layer", "reshape", "transpose", "sum", "add", "true_divide", "get_item", "power",
        "negative", "reshape_1", "dense"]
    assert [l.name for l in model.layers] == ["input_layer", "dense"]
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for row in ("reshape (Reshape)", "true_divide (TrueDivide)", "get_item (GetItem)",
                "negative (Negative)", "(None, 2, 4, 4)", "dense (Dense)"):
        assert row in text, text


@pytest.mark.parametrize("suffix", [".keras", ".minidl"])
def test_save_load_and_clone_a_model_of_ops(active_backend, tmp_path, suffix):
    inp = layers.Input((None, 6))
    a, b = ops.split(inp, 2, axis=-1)
    x = ops.concatenate([b, a * np.arange(3, dtype="float32")], axis=-1)[:, :, ::2]
    x = ops.nn.relu(x + ops.mean(inp, axis=-1, keepdims=True))
    model = minidl.Model(inp, layers.Dense(2)(ops.max(x, axis=1)))
    x = np.random.default_rng(1).standard_normal((3, 5, 6)).astype(np.float32)
    expected = model.predict(x, verbose=0)
    path = str(tmp_path / f"ops{suffix}")
    model.save(path)
    loaded = minidl.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), expected, rtol=1e-6, atol=1e-6)
    clone = minidl.models.clone_model(model)
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(x, verbose=0), expected, rtol=1e-6, atol=1e-6)


def test_a_model_of_ops_nests_in_another():
    inner_in = layers.Input((4, 8))
    inner = minidl.Model(inner_in, layers.Dense(2)(ops.reshape(inner_in, (-1, 32)) * 0.5))
    inp = layers.Input((4, 8))
    outer = minidl.Model(inp, layers.Dense(1)(inner(inp) + ops.sum(inp, axis=(1, 2))[:, None]))
    assert outer.predict(_data(5)[0], verbose=0).shape == (5, 1)


def test_clear_errors():
    i = layers.Input((4, 8))
    with pytest.raises(ValueError, match=r"ops\.matmul on tensors of shapes "
                                         r"\[\(None, 4, 8\), \(None, 4, 8\)\]"):
        ops.matmul(i, i)
    with pytest.raises(ValueError, match=r"ops\.reshape on tensors of shapes \[\(None, 4, 8\)\]"):
        ops.reshape(i, (-1, 5, 3))
    with pytest.raises(ValueError, match=r"ops\.add on tensors of shapes \[\(None, 4, 8\), \(3,\)\]"):
        i + np.ones(3, np.float32)
    with pytest.raises(ValueError, match="keep the batch axis"):   # Keras gives shape ()
        ops.sum(i)
    with pytest.raises(TypeError, match="Iterating over a symbolic KerasTensor"):
        list(i)
    model = minidl.Model(i, ops.vectorized_map(lambda t: t * 2, i))
    with pytest.raises(ValueError, match=r"'vectorized_map' \(ops\.vectorized_map\) cannot be "
                                         "saved: an argument of type function"):
        model.get_config()


def test_ops_on_arrays_and_tensors_are_unchanged():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert ops.is_tensor(ops.reshape(x, (3, 2)))
    np.testing.assert_allclose(ops.convert_to_numpy(ops.sum(x, axis=-1)), [3.0, 12.0])
    assert ops.shape(ops.convert_to_tensor(x)) == (2, 3)
    assert ops.reshape is ops.numpy.reshape and ops.softmax is ops.nn.softmax
