"""keras.optimizers.schedules at Keras's path and the optimizers Lamb, Adafactor, Muon and
ScheduleFreeAdamW, on every
backend, against Keras 3.15.1's numbers (keras3_reference/optimizers.json, written by
make_optimizers.py in a venv with real Keras): schedule values and configs, optimizer weights
after each of three steps, configs and look-ups."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import optimizers
from minidl.optimizers import schedules

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "keras3_reference", "optimizers.json")))


def _case_id(case):
    return case["class"] + "".join(f"-{k}={v}" for k, v in case["kwargs"].items())


@pytest.mark.parametrize("case", REFERENCE["schedules"], ids=_case_id)
def test_schedule_values_and_config_match_keras(case):
    schedule = getattr(schedules, case["class"])(**case["kwargs"])
    values = [schedule(step) for step in case["steps"]]
    np.testing.assert_allclose(values, case["values"], rtol=1e-5, atol=1e-7)
    serialized = schedules.serialize(schedule)
    keras_form = case["serialized"]
    assert serialized["class_name"] == keras_form["class_name"]
    for key, value in keras_form["config"].items():
        if key in serialized["config"] or value is not None:
            assert serialized["config"][key] == pytest.approx(value), key
    again = schedules.deserialize(serialized)
    assert type(again) is type(schedule) and again.get_config() == schedule.get_config()


def test_schedules_at_keras_path():
    from minidl.optimizers.schedules import CosineDecay, LearningRateSchedule
    assert CosineDecay is minidl.schedules.CosineDecay
    assert issubclass(CosineDecay, LearningRateSchedule)
    assert minidl.optimizers.schedules.serialize is minidl.schedules.serialize


def _schedule_free_steps(kwargs):
    """Keras's ScheduleFreeAdamW.update_step in float64 numpy, with momentum_old read before
    the momentum's update as its source says (and as its JAX and TensorFlow backends run it).
    Keras 3.15.1 on torch reads it after (momentum.value aliases the tensor updated in place):
    its first step agrees, later ones differ by ~1e-4; the first step is also checked against
    its numbers below."""
    lr, b1, b2 = kwargs.get("learning_rate", 0.0025), kwargs.get("beta_1", 0.9), kwargs.get("beta_2", 0.999)
    eps, warmup, decay = kwargs.get("epsilon", 1e-8), kwargs.get("warmup_steps", 0), kwargs.get("weight_decay")
    ys = [np.asarray(w, np.float64) for w in REFERENCE["weights"]]
    zs, vs, steps = [y.copy() for y in ys], [np.zeros_like(y) for y in ys], []
    for t, grads in enumerate(REFERENCE["gradients"], 1):
        rate = lr * min(t / warmup, 1.0) if warmup else lr
        for i, g in enumerate(np.asarray(g, np.float64) for g in grads):
            if decay:
                ys[i] = ys[i] - ys[i] * decay * lr
            vs[i] = vs[i] + (g * g - vs[i]) * (1 - b2)
            z = zs[i] - rate * g / (np.sqrt(vs[i] / (1 - b2 ** t)) + eps)
            x = (1 - 1 / t) * (ys[i] - (1 - b1) * zs[i]) / b1 + z / t
            ys[i], zs[i] = (1 - b1) * z + b1 * x, z
        steps.append([y.copy() for y in ys])
    return steps


@pytest.mark.parametrize("case", REFERENCE["optimizers"], ids=_case_id)
def test_optimizer_steps_match_keras(backend, case):
    optimizer = getattr(optimizers, case["class"])(**case["kwargs"])
    weights = [backend.from_numpy(np.asarray(w, np.float32)) for w in REFERENCE["weights"]]
    optimizer.build(backend, weights, REFERENCE["names"])
    expected_steps = case["steps"]
    if case["class"] == "ScheduleFreeAdamW":
        for want, keras_first in zip(_schedule_free_steps(case["kwargs"])[0], case["steps"][0]):
            np.testing.assert_allclose(want, np.asarray(keras_first), rtol=1e-5, atol=1e-6)
        expected_steps = _schedule_free_steps(case["kwargs"])
    for grads, expected in zip(REFERENCE["gradients"], expected_steps):
        optimizer.apply_gradients([(backend.from_numpy(np.asarray(g, np.float32)), w)
                                   for g, w in zip(grads, weights)])
        for w, want in zip(weights, expected):
            np.testing.assert_allclose(backend.to_numpy(w), np.asarray(want), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("case", REFERENCE["optimizers"], ids=_case_id)
def test_optimizer_config_as_keras(case):
    optimizer = getattr(optimizers, case["class"])(**case["kwargs"])
    config = optimizer.get_config()
    for key, value in case["config"].items():
        if key != "name":
            assert config[key] == pytest.approx(value) if isinstance(value, float) else config[key] == value, key
    again = optimizers.deserialize(optimizers.serialize(optimizer))
    assert type(again) is type(optimizer) and again.get_config() == config
    assert type(optimizers.get(case["class"].lower())) is type(optimizer)


def test_optimizer_state_round_trips(backend):
    optimizer = optimizers.Adafactor(learning_rate=0.01)
    weights = [backend.from_numpy(np.asarray(w, np.float32)) for w in REFERENCE["weights"]]
    optimizer.build(backend, weights)
    optimizer.apply_gradients([(backend.from_numpy(np.asarray(g, np.float32)), w)
                               for g, w in zip(REFERENCE["gradients"][0], weights)])
    state = optimizer.get_state(backend)
    assert state["r/0"].shape == (3,) and state["c/0"].shape == (4,) and state["v/1"].shape == (4,)
    again = optimizers.Adafactor(learning_rate=0.01)
    again.build(backend, [backend.from_numpy(np.asarray(w, np.float32)) for w in REFERENCE["weights"]])
    again.set_state(backend, state)
    assert again.iterations == 1
    np.testing.assert_array_equal(again.get_state(backend)["c/2"], state["c/2"])


@pytest.mark.parametrize("name", ["lamb", "adafactor", "muon", "schedulefreeadamw"])
def test_trains_a_model(active_backend, name):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 5)).astype("float32")
    y = (x @ rng.normal(size=(5, 1))).astype("float32")
    minidl.set_seed(0)
    model = minidl.Sequential([minidl.layers.Input((5,)), minidl.layers.Dense(8, activation="relu"),
                               minidl.layers.Dense(1)])
    model.compile(optimizers.get(name).__class__(learning_rate=0.05), "mse")
    history = model.fit(x, y, epochs=15, batch_size=16, verbose=0).history["loss"]
    assert np.all(np.isfinite(history)) and history[-1] < 0.5 * history[0]
