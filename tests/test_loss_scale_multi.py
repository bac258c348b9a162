"""LossScaleOptimizer, MultiOptimizer and OptimizerMap against Keras 3.15.1's numbers
(keras3_reference/make_loss_scale_multi.py wrote loss_scale_multi.json), on every backend,
and their state in model files."""

import builtins
import json
import os

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers, regularizers
from minidl.models import Model, Sequential, load_model

# the overflowing steps are the point: the numpy backend warns about them
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")

with open(os.path.join(os.path.dirname(__file__), "keras3_reference", "loss_scale_multi.json")) as f:
    REF = json.load(f)
X = np.array(REF["x"], np.float32)
Y_BIG, Y = np.array(REF["y_big"], np.float32), np.array(REF["y"], np.float32)
K1, B1, K2, B2 = [np.array(w, np.float32) for w in REF["weights"]]


def one_dense(optimizer, regularized):
    inp = layers.Input((4,))
    dense = layers.Dense(3, name="dense", kernel_regularizer=regularizers.L2(0.01) if regularized else None)
    model = Model(inp, dense(inp))
    model.set_weights([K1, B1])
    model.compile(optimizer=optimizer, loss="mse")
    return model


def two_dense(optimizer):
    inp = layers.Input((4,))
    model = Model(inp, layers.Dense(2, name="head")(layers.Dense(3, name="encoder")(inp)))
    model.set_weights([K1, B1, K2, B2])
    model.compile(optimizer=optimizer, loss="mse")
    return model


@pytest.mark.parametrize("case", REF["loss_scale"], ids=lambda c: f"scale{c['initial_scale']:.0e}")
def test_loss_scale_optimizer_matches_keras(active_backend, case):
    """Steps skipped while the scaled gradients overflow, the scale halving and doubling, the
    counter, the inner optimizer's iterations and the weights, step by step."""
    opt = optimizers.LossScaleOptimizer(optimizers.SGD(1e-4, momentum=0.9), initial_scale=case["initial_scale"],
                                        dynamic_growth_steps=case["growth"])
    model = one_dense(opt, case["regularized"])
    for step, expected in enumerate(case["steps"]):
        model.train_on_batch(X, Y_BIG)
        assert (opt.dynamic_scale, opt.step_counter, opt.iterations) == \
            (expected["dynamic_scale"], expected["step_counter"], expected["iterations"]), step
        for got, want in zip(model.get_weights(), expected["weights"]):
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=f"step {step}")


def test_loss_scale_optimizer_config_matches_keras():
    case = REF["loss_scale"][0]
    opt = optimizers.LossScaleOptimizer(optimizers.SGD(1e-4, momentum=0.9), initial_scale=case["initial_scale"],
                                        dynamic_growth_steps=case["growth"])
    config = opt.get_config()
    assert config["name"] == "loss_scale_optimizer"
    assert (config["initial_scale"], config["dynamic_growth_steps"]) == \
        (case["config"]["initial_scale"], case["config"]["dynamic_growth_steps"])
    assert config["inner_optimizer"]["class_name"] == case["config"]["inner_class"]
    again = optimizers.deserialize(optimizers.serialize(opt))
    assert isinstance(again, optimizers.LossScaleOptimizer) and again.get_config() == config
    assert again.inner_optimizer.momentum == 0.9
    assert minidl.mixed_precision.LossScaleOptimizer is optimizers.LossScaleOptimizer


def test_loss_scale_errors_match_keras():
    errors = REF["map"]["errors"]
    sgd = optimizers.SGD()
    for label, make in [("lso_dynamic", lambda: optimizers.LossScaleOptimizer(sgd, dynamic=False)),
                        ("lso_clipnorm", lambda: optimizers.LossScaleOptimizer(sgd, clipnorm=1.0)),
                        ("lso_unknown", lambda: optimizers.LossScaleOptimizer(sgd, foo=1))]:
        kind, message = errors[label]
        with pytest.raises(getattr(builtins, kind)) as info:
            make()
        assert str(info.value) == message
    optimizers.LossScaleOptimizer(sgd, clipnorm=None, use_ema=False)   # Keras's defaults pass
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        optimizers.LossScaleOptimizer(sgd, dynamic_growth_steps=0)


def test_finite_scaling_changes_nothing(active_backend):
    """Scaling by a power of two is exact: unscaled, the gradients are those of the loss, so
    the weights match an unwrapped optimizer bit for bit (regularizer included)."""
    plain = one_dense(optimizers.SGD(1e-4, momentum=0.9), True)
    scaled = one_dense(optimizers.LossScaleOptimizer(optimizers.SGD(1e-4, momentum=0.9)), True)
    for _ in range(3):
        plain.train_on_batch(X, Y_BIG)
        scaled.train_on_batch(X, Y_BIG)
    for a, b in zip(plain.get_weights(), scaled.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_activity_regularizer_gradient_is_scaled(active_backend):
    def model(optimizer):
        minidl.set_seed(1)
        m = Sequential([layers.Input((4,)), layers.Dense(3, activity_regularizer=regularizers.L2(0.5)),
                        layers.Dense(2)])
        m.compile(optimizer=optimizer, loss="mse")
        return m
    plain, scaled = model(optimizers.SGD(0.01)), model(optimizers.LossScaleOptimizer(optimizers.SGD(0.01)))
    plain.train_on_batch(X, Y)
    scaled.train_on_batch(X, Y)
    for a, b in zip(plain.get_weights(), scaled.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_loss_scale_state_in_model_files(active_backend, tmp_path):
    case = REF["loss_scale"][0]

    def fresh():
        return one_dense(optimizers.LossScaleOptimizer(optimizers.SGD(1e-4, momentum=0.9),
                                                       initial_scale=case["initial_scale"], dynamic_growth_steps=2),
                         False)
    whole, part = fresh(), fresh()
    for _ in range(10):
        whole.train_on_batch(X, Y_BIG)
    for _ in range(9):
        part.train_on_batch(X, Y_BIG)
    part.save(tmp_path / "m.minidl")
    loaded = load_model(tmp_path / "m.minidl")
    assert (loaded.optimizer.dynamic_scale, loaded.optimizer.step_counter, loaded.optimizer.iterations) == \
        (part.optimizer.dynamic_scale, part.optimizer.step_counter, part.optimizer.iterations)
    loaded.train_on_batch(X, Y_BIG)
    assert loaded.optimizer.dynamic_scale == whole.optimizer.dynamic_scale
    for a, b in zip(whole.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
    state = loaded.optimizer.get_state(loaded.backend)
    with pytest.raises(ValueError, match="dynamic_scale"):
        loaded.optimizer.set_state(loaded.backend, dict(state, **{"loss_scale/dynamic_scale": np.float32(-1)}))


def test_scale_loss_and_apply_in_a_custom_step():
    minidl.set_backend("numpy")
    opt = optimizers.LossScaleOptimizer(optimizers.SGD(0.5), initial_scale=8.0)
    assert opt.scale_loss(3.0) == 24.0
    model = one_dense(opt, False)
    backend = model.backend
    weights = model.trainable_weights
    grads = [backend.from_numpy(np.full(w.shape, 8.0, np.float32)) for w in weights]
    before = model.get_weights()
    opt.apply(grads, weights)
    for b, a in zip(before, model.get_weights()):
        np.testing.assert_allclose(a, b - 0.5, rtol=1e-6)
    grads = [backend.from_numpy(np.full(w.shape, np.inf, np.float32)) for w in weights]
    opt.apply(grads, weights)
    assert opt.dynamic_scale == 4.0 and opt.iterations == 1


# ------------------------------------------------------------------ MultiOptimizer
@pytest.mark.parametrize("kind", ["map", "callable"])
def test_multi_optimizer_matches_keras(active_backend, kind):
    case = next(c for c in REF["multi"] if c["kind"] == kind)
    adam, sgd = optimizers.Adam(0.01), optimizers.SGD(0.1, momentum=0.5)
    if kind == "map":
        opt = optimizers.MultiOptimizer(optimizers.OptimizerMap(sgd, {"encoder/.*": adam}))
    else:
        opt = optimizers.MultiOptimizer(lambda v: adam if "encoder" in v.path else sgd)
    model = two_dense(opt)
    for step, expected in enumerate(case["steps"]):
        model.train_on_batch(X, Y)
        for got, want in zip(model.get_weights(), expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"step {step}")
    assert opt.iterations == case["iterations"]
    assert [o.iterations for o in opt.optimizers] == case["sub_iterations"]
    assert [type(o).__name__ for o in opt.optimizers] == case["sub_classes"]
    if kind == "map":
        config = opt.get_config()
        assert sorted(config) == case["config_keys"]
        assert sorted(config["optimizer_map"]["config"]) == case["map_config_keys"]


def test_multi_optimizer_state_in_model_files(active_backend, tmp_path):
    def fresh():
        return two_dense(optimizers.MultiOptimizer(optimizers.OptimizerMap(
            optimizers.SGD(0.1, momentum=0.5), {"encoder/.*": optimizers.Adam(0.01)})))
    whole, part = fresh(), fresh()
    for _ in range(4):
        whole.train_on_batch(X, Y)
    for _ in range(2):
        part.train_on_batch(X, Y)
    part.save(tmp_path / "m.minidl")
    loaded = load_model(tmp_path / "m.minidl")
    assert isinstance(loaded.optimizer, optimizers.MultiOptimizer) and loaded.optimizer.iterations == 2
    assert [type(o).__name__ for o in loaded.optimizer.optimizers] == ["Adam", "SGD"]
    for _ in range(2):
        loaded.train_on_batch(X, Y)
    for a, b in zip(whole.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_optimizer_map_lookups_and_errors_match_keras():
    adam, sgd, rms = optimizers.Adam(), optimizers.SGD(), optimizers.RMSprop()
    m = optimizers.OptimizerMap(default_optimizer=rms)
    m["encoder/layer_0/dense"] = adam
    m["encoder/.*"] = sgd
    m["decoder"] = adam
    assert {k: type(m[k]).__name__ for k in REF["map"]["lookups"]} == REF["map"]["lookups"]
    errors = REF["map"]["errors"]
    for label, action in [("duplicate", lambda: m.__setitem__("decoder", sgd)),
                          ("not_string", lambda: m.__setitem__(3, sgd)),
                          ("not_optimizer", lambda: m.__setitem__("x", "sgd")),
                          ("loss_scale", lambda: m.__setitem__("y", optimizers.LossScaleOptimizer(sgd))),
                          ("two_matches", lambda: optimizers.OptimizerMap(rms, {"a.*": sgd, ".*b": adam})["ab"]),
                          ("bad_default", lambda: optimizers.OptimizerMap("sgd"))]:
        kind, message = errors[label]
        with pytest.raises((ValueError, TypeError)) as info:
            action()
        assert type(info.value).__name__ == kind, label
        if label != "duplicate":   # Keras's message prints the optimizer object's repr
            assert str(info.value) == message, label
        else:
            assert str(info.value).startswith("'decoder' already exists in the OptimizerMap")
    multi = optimizers.MultiOptimizer(m)
    with pytest.raises(AttributeError, match="Learning rate cannot be accessed on a MultiOptimizer"):
        multi.learning_rate
    with pytest.raises(AttributeError, match="Learning rate cannot be set"):
        multi.learning_rate = 0.1
    with pytest.raises(ValueError, match="MultiOptimizer cannot be used inside"):
        minidl.set_backend("numpy")
        two_dense(optimizers.MultiOptimizer(lambda v: multi))


def test_wrappers_round_trip_through_keras_serialization():
    from minidl import saving
    made = [optimizers.LossScaleOptimizer(optimizers.Adam(0.01), initial_scale=64.0, dynamic_growth_steps=7),
            optimizers.MultiOptimizer(optimizers.OptimizerMap(optimizers.SGD(0.1), {"encoder/.*": optimizers.Adam()}),
                                      loss_scale_factor=4.0),
            optimizers.Lookahead(optimizers.TorchSGD(0.1, momentum=0.9), sync_period=3,
                                 decay=optimizers.PowerRamp(0.8, 100, power=2))]
    for obj in made:
        config = saving.serialize_keras_object(obj)
        again = saving.deserialize_keras_object(json.loads(json.dumps(config)))
        assert type(again) is type(obj)
        assert saving.serialize_keras_object(again)["config"] == config["config"]
    with pytest.raises(ValueError, match="unknown optimizer"):
        optimizers.get("lossscaleoptimizer")   # it needs an inner optimizer: not by name
