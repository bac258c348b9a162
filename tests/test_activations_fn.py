"""keras.activations as functions (minidl.activations.relu(x, ...), ...) on every backend, against
Keras 3.15.1's values and gradients (keras3_reference/activations.json, written by
make_activations.py in a venv with real Keras), and get / serialize / deserialize."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import activations, autodiff, ops

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "keras3_reference", "activations.json")))
X = np.asarray(REFERENCE["x"], np.float32)
G = np.asarray(REFERENCE["g"], np.float32)


def _case_id(case):
    return case["name"] + "".join(f"-{k}={v}" for k, v in case["kwargs"].items())


def _value_and_grad(backend, fn, x, g, **kwargs):
    with autodiff.on_backend(backend):
        tape = autodiff.Tape(backend)
        xt = autodiff.Tensor(backend.from_numpy(x), backend, requires_grad=True)
        with autodiff.recording(tape):
            y = fn(xt, **kwargs)
        gt = ops.convert_to_tensor(g[tuple(slice(0, n) for n in y.shape)], backend=backend)
        (dx,) = tape.gradients([y], [gt], [xt])
        return y.numpy(), (np.zeros_like(x) if dx is None else dx.numpy())


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=_case_id)
def test_activation_matches_keras(backend, case):
    fn = getattr(activations, case["name"])
    y, dx = _value_and_grad(backend, fn, X, G, **case["kwargs"])
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, np.asarray(case["y"]), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(dx, np.asarray(case["dx"]), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("values, axis, expected", [
    ([[1.0, 0.5, 0.0], [2.0, 2.0, 0.0]], -1, [[0.75, 0.25, 0.0], [0.5, 0.5, 0.0]]),
    ([[1.0, 2.0], [0.5, 2.0], [0.0, 0.0]], 0, [[0.75, 0.5], [0.25, 0.5], [0.0, 0.0]]),
    ([[0.1, 0.2, 3.0]], -1, [[0.0, 0.0, 1.0]]),
])
def test_sparsemax_projects_onto_the_simplex(backend, values, axis, expected):
    # Keras 3.15.1's sparsemax gives [[0.25, 0, 0], ...] here (its tau sums the running sums,
    # so its rows do not sum to 1); minidl follows Martins and Astudillo's definition
    x = np.asarray(values, np.float32)
    y, dx = _value_and_grad(backend, activations.sparsemax, x, np.ones_like(x), axis=axis)
    np.testing.assert_allclose(y, expected, atol=1e-6)
    np.testing.assert_allclose(y.sum(axis=axis), 1.0, atol=1e-6)
    # the Jacobian's rows sum to 0 over each output row: an all-ones upstream gradient gives 0
    np.testing.assert_allclose(dx, 0.0, atol=1e-6)


def test_sparsemax_gradient_matches_finite_differences(backend):
    x = np.array([[0.3, 1.1, -0.4, 0.9]], np.float32)
    g = np.array([[0.5, -1.0, 2.0, 0.25]], np.float32)
    _, dx = _value_and_grad(backend, activations.sparsemax, x, g)
    numeric = np.zeros_like(x)
    for i in range(x.shape[1]):
        step = np.zeros_like(x)
        step[0, i] = 1e-3
        with autodiff.on_backend(backend):
            up = activations.sparsemax(x + step).numpy()
            down = activations.sparsemax(x - step).numpy()
        numeric[0, i] = ((up - down) * g).sum() / 2e-3
    np.testing.assert_allclose(dx, numeric, atol=1e-3)


def test_numpy_arrays_and_numbers_in_tensors_out():
    y = activations.relu(np.array([-1.0, 2.0]))
    assert ops.is_tensor(y) and y.dtype == "float32"
    np.testing.assert_array_equal(y.numpy(), [0.0, 2.0])
    np.testing.assert_allclose(activations.sigmoid(0.0).numpy(), 0.5)
    # integers are promoted to float32, as Keras's activations promote them
    np.testing.assert_allclose(activations.softplus(np.array([0, 1])).numpy(), np.log1p(np.exp([0.0, 1.0])),
                               rtol=1e-6)


def test_get_serialize_deserialize_as_keras():
    assert activations.get("relu") is activations.relu
    assert activations.get(None) is activations.linear
    assert activations.get("swish") is activations.silu
    assert activations.get("hard_swish") is activations.hard_silu
    assert activations.get(activations.gelu) is activations.gelu
    for name, expected in REFERENCE["serialize"].items():
        assert activations.serialize(getattr(activations, name)) == expected
    for name in activations.FUNCTIONS:
        assert activations.deserialize(activations.serialize(activations.get(name))) is activations.get(name)
    with pytest.raises(ValueError, match="Could not interpret activation function identifier"):
        activations.get("no_such_activation")
    with pytest.raises(ValueError, match="cannot be serialized"):
        activations.serialize(lambda x: x)


def test_registered_activation_round_trips():
    from minidl.custom_objects import get_custom_objects

    def scaled_tanh(x):
        return 2.0 * activations.tanh(x)
    get_custom_objects()["Custom>scaled_tanh"] = scaled_tanh
    try:
        config = activations.serialize(scaled_tanh)
        assert config["registered_name"] == "Custom>scaled_tanh"
        assert activations.deserialize(config) is scaled_tanh
    finally:
        del get_custom_objects()["Custom>scaled_tanh"]


@pytest.mark.parametrize("call, message", [
    (lambda: activations.glu(np.ones((2, 3))), "divisible by 2"),
    (lambda: activations.softmax(np.ones((2, 3)), axis=2), "axis must be an int"),
    (lambda: activations.relu(np.ones(2), negative_slope="a"), "negative_slope must be a number"),
    (lambda: activations.hard_shrink(np.ones(2), threshold=-1.0), "threshold must be >= 0"),
    (lambda: activations.gelu(np.ones(2), approximate=1), "approximate must be a bool"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_layers_take_the_functions_as_activation():
    minidl.set_backend("numpy")
    layer = minidl.layers.Dense(2, activation=activations.gelu)
    assert layer.activation is activations.gelu        # the function, as Keras holds it
    assert minidl.layers.Activation(activations.swish).activation is activations.silu
    with pytest.raises(ValueError, match="unknown activation"):
        minidl.layers.Dense(2, activation=activations.celu)
