"""optimizers.Lookahead: the rule on every weight (BatchNormalization's statistics included),
its state in model files, and a resumed run that ends bitwise equal to an uninterrupted one."""

import numpy as np
import pytest

import minidl
from minidl import callbacks, layers, optimizers, schedules
from minidl.models import Sequential, load_model


def model_with(optimizer, seed=3):
    minidl.set_seed(seed)
    model = Sequential([layers.Input((4,)), layers.Dense(6, name="dense1"),
                        layers.BatchNormalization(momentum=0.5, name="norm"), layers.Activation("relu"),
                        layers.Dense(3, name="dense2")])
    model.compile(optimizer=optimizer, loss="mse")
    return model


def data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)).astype(np.float32), rng.normal(size=(n, 3)).astype(np.float32)


def lookahead(total=12):
    sgd = optimizers.TorchSGD(schedules.PolynomialDecay(0.05, total, 0.01), momentum=0.85, nesterov=True,
                              weight_decay=0.01, learning_rate_multipliers={"norm/beta$": 4.0})
    return optimizers.Lookahead(sgd, sync_period=2, decay=optimizers.PowerRamp(0.9, total, power=3))


def test_matches_the_callback_on_every_weight(active_backend):
    """The optimizer form does what callbacks.Lookahead does, the moving statistics included."""
    x, y = data()
    with_callback = model_with(lookahead().inner_optimizer)
    cb = callbacks.Lookahead(sync_period=2, decay=optimizers.PowerRamp(0.9, 12, power=3))
    with_callback.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, callbacks=[cb])
    with_optimizer = model_with(lookahead())
    with_optimizer.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    names = [w.name for w in with_optimizer.weights]
    assert "moving_mean" in names
    for a, b in zip(with_callback.get_weights(), with_optimizer.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_sync_rule_by_hand(active_backend):
    x, y = data(8)
    opt = optimizers.Lookahead(optimizers.TorchSGD(0.1), sync_period=2, decay=0.25, pull_back_at_end=False)
    model = model_with(opt)
    start = model.get_weights()
    model.train_on_batch(x, y)
    fast = model.get_weights()
    model.train_on_batch(x, y)   # step 2: slow = 0.25 * start + 0.75 * weights; weights = slow
    probe = model_with(optimizers.TorchSGD(0.1))
    probe.set_weights(fast)
    probe.optimizer.iterations = 1
    probe.train_on_batch(x, y)
    for got, s, w in zip(model.get_weights(), start, probe.get_weights()):
        np.testing.assert_allclose(got, 0.25 * s + 0.75 * w, rtol=1e-5, atol=1e-6)


def test_resumed_run_ends_bitwise_equal(active_backend, tmp_path):
    x, y = data()
    whole = model_with(lookahead())
    whole.fit(x, y, batch_size=8, epochs=4, verbose=0)
    first = model_with(lookahead())
    path = str(tmp_path / "run.mdl")
    first.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[callbacks.ModelCheckpoint(path)])
    resumed = load_model(path)
    assert isinstance(resumed.optimizer, optimizers.Lookahead) and resumed.optimizer.iterations == 6
    state = resumed.optimizer.get_state(resumed.backend)
    assert {"lookahead/slow/0", "lookahead/other/0", "momentum_buffer/0"} <= set(state)
    resumed.fit(x, y, batch_size=8, epochs=4, initial_epoch=2, verbose=0)
    for a, b in zip(whole.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_without_its_state_a_resumed_run_differs(tmp_path):
    """The test above can fail: dropping the slow weights changes the result."""
    minidl.set_backend("numpy")
    x, y = data()
    whole = model_with(lookahead())
    whole.fit(x, y, batch_size=8, epochs=4, verbose=0)
    first = model_with(lookahead())
    first.fit(x, y, batch_size=8, epochs=2, verbose=0)
    restarted = model_with(lookahead())
    restarted.set_weights(first.get_weights())
    state = first.optimizer.get_state(first.backend)
    restarted.optimizer.set_state(restarted.backend, {k: v for k, v in state.items() if "lookahead" not in k}
                                  | {k: np.zeros_like(v) for k, v in state.items() if "lookahead" in k})
    restarted.fit(x, y, batch_size=8, epochs=4, initial_epoch=2, verbose=0)
    assert not all(np.array_equal(a, b) for a, b in zip(whole.get_weights(), restarted.get_weights()))


def test_config_state_and_errors():
    minidl.set_backend("numpy")
    opt = lookahead()
    config = optimizers.serialize(opt)
    again = optimizers.deserialize(config)
    assert isinstance(again.inner_optimizer, optimizers.TorchSGD)
    assert again.get_config() == opt.get_config() and again.decay(6) == opt.decay(6)
    assert again.learning_rate_multipliers == {"norm/beta$": 4.0}
    model = model_with(again)
    shapes = model.optimizer.state_shapes()
    assert shapes["lookahead/slow/0"] == (4, 6) and "lookahead/other/1" in shapes
    state = model.optimizer.get_state(model.backend)
    bad = dict(state)
    del bad["lookahead/slow/0"]
    with pytest.raises(ValueError, match="missing"):
        model.optimizer.set_state(model.backend, bad)
    bad = dict(state, **{"lookahead/slow/0": np.full((4, 6), np.nan, np.float32)})
    with pytest.raises(ValueError, match="finite"):
        model.optimizer.set_state(model.backend, bad)
    with pytest.raises(ValueError, match="sync_period"):
        optimizers.Lookahead(optimizers.SGD(), sync_period=0)
    with pytest.raises(ValueError, match="decay"):
        optimizers.Lookahead(optimizers.SGD(), decay=1.5)
    with pytest.raises(TypeError, match="inner_optimizer"):
        optimizers.Lookahead("sgd")
    with pytest.raises(ValueError, match="ramp_steps"):
        optimizers.PowerRamp(1.0, 0)
