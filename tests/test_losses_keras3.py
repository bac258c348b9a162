"""The losses new in Keras 3 (focal cross-entropies, Dice, Tversky, Circle, categorical
generalized cross-entropy) on every backend against Keras 3.15.1's values and gradients
(keras3_reference/losses.json, written by make_losses.py in a venv with real Keras); their
function forms, configs, get / serialize / deserialize; and training through compile / fit."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import autodiff, losses, ops

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "keras3_reference", "losses.json")))


def _case_id(case):
    return case.get("class", case.get("name")) + "".join(f"-{k}={v}" for k, v in case["kwargs"].items())


@pytest.mark.parametrize("case", REFERENCE["classes"], ids=_case_id)
def test_loss_value_and_gradient_match_keras(backend, case):
    loss = getattr(losses, case["class"])(**case["kwargs"])
    y_true = np.asarray(case["y_true"], np.float32)
    y_pred = np.asarray(case["y_pred"], np.float32)
    with autodiff.on_backend(backend):
        tape = autodiff.Tape(backend)
        pred = autodiff.Tensor(backend.from_numpy(y_pred), backend, requires_grad=True)
        with autodiff.recording(tape):
            value = loss(ops.convert_to_tensor(y_true, backend=backend), pred)
        (grad,) = tape.gradients([value], [ops.ones((), backend=backend)], [pred])
    np.testing.assert_allclose(float(value.numpy()), case["value"], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), np.asarray(case["grad"]), rtol=2e-4, atol=2e-6)


@pytest.mark.parametrize("case", REFERENCE["classes"], ids=_case_id)
def test_config_as_keras_and_round_trip(case):
    loss = getattr(losses, case["class"])(**case["kwargs"])
    assert loss.get_config() == case["config"]
    again = losses.get(losses.serialize(loss))
    assert type(again) is type(loss) and again.get_config() == loss.get_config()
    assert type(losses.get(case["config"]["name"])) is type(loss)


@pytest.mark.parametrize("case", REFERENCE["functions"], ids=_case_id)
def test_function_forms_match_keras(backend, case):
    with autodiff.on_backend(backend):
        value = getattr(losses, case["name"])(np.asarray(case["y_true"], np.float32),
                                              np.asarray(case["y_pred"], np.float32), **case["kwargs"])
    np.testing.assert_allclose(value.numpy(), np.asarray(case["value"]), rtol=2e-5, atol=1e-6)


def test_deserialize_as_keras():
    # a function name gives the function, a class (name or dict) an instance
    assert losses.deserialize("dice") is losses.dice
    assert losses.deserialize("categorical_focal_crossentropy") is losses.categorical_focal_crossentropy
    assert type(losses.deserialize("Dice")) is losses.Dice
    assert type(losses.deserialize({"class_name": "Tversky", "config": {"alpha": 0.3}})) is losses.Tversky
    with pytest.raises(ValueError, match="unknown loss"):
        losses.deserialize("no_such_loss")


@pytest.mark.parametrize("call, message", [
    (lambda: losses.CategoricalGeneralizedCrossEntropy(q=0.0), r"q must be in the interval \(0, 1\]"),
    (lambda: losses.BinaryFocalCrossentropy(alpha=1.5), "alpha must be a number in"),
    (lambda: losses.CategoricalFocalCrossentropy(label_smoothing=2.0), "label_smoothing"),
    (lambda: losses.Circle(remove_diagonal=1), "remove_diagonal must be a bool"),
    (lambda: losses.dice(np.zeros((2, 3)), np.zeros((2, 4))), "does not match"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def _train(loss, x, y, units, activation, epochs=30):
    minidl.set_seed(1)
    model = minidl.Sequential([minidl.layers.Input((x.shape[1],)), minidl.layers.Dense(units, activation=activation)])
    model.compile(minidl.optimizers.SGD(0.2), loss)
    history = model.fit(x, y, epochs=epochs, batch_size=16, verbose=0)
    return history.history["loss"]


@pytest.mark.parametrize("loss, kind", [
    (losses.BinaryFocalCrossentropy(), "binary"), (losses.CategoricalFocalCrossentropy(), "onehot"),
    (losses.Dice(), "binary"), (losses.Tversky(alpha=0.7, beta=0.3), "binary"),
    (losses.CategoricalGeneralizedCrossEntropy(q=0.7), "sparse"), ("binary_focal_crossentropy", "binary"),
    (losses.Circle(gamma=8.0), "embedding")])
def test_trains_through_compile_and_fit(active_backend, loss, kind):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6)).astype("float32")
    labels = (x[:, 0] + x[:, 1] > 0).astype("int32") + (x[:, 2] > 0.5)
    if kind == "binary":
        history = _train(loss, x, (x[:, :1] + x[:, 1:2] > 0).astype("float32"), 1, "sigmoid")
    elif kind == "onehot":
        history = _train(loss, x, np.eye(3, dtype="float32")[labels], 3, "softmax")
    elif kind == "sparse":
        history = _train(loss, x, labels, 3, "softmax")
    else:   # embeddings of unit length
        history = _train(loss, np.abs(x), labels, 4, None, epochs=10)
    assert np.all(np.isfinite(history)) and history[-1] < 0.9 * history[0]
