"""Optimizers and schedules against hand-written numpy versions of the Keras update rules."""

import math

import numpy as np
import pytest

from minidl import optimizers, schedules
from minidl.backends.numpy_backend import NumpyBackend


class RecordingBackend(NumpyBackend):
    """The numpy backend, counting every host<->backend transfer the optimizer makes."""

    def __init__(self, dtype="float64"):
        super().__init__(dtype)
        self.transfers = 0

    def from_numpy(self, array, dtype=None):
        self.transfers += 1
        return super().from_numpy(array, dtype)

    def copy_from_host(self, out, array):
        self.transfers += 1
        super().copy_from_host(out, array)

    def to_numpy(self, x):
        self.transfers += 1
        return super().to_numpy(x)


SHAPES = [(3, 4), (5,)]


def make_problem(steps, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(s) for s in SHAPES]
    grads = [[scale * rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]
    return weights, grads


def run(optimizer, weights, grads, backend=None):
    """Apply every step of `grads` with `optimizer` on backend copies of `weights`."""
    backend = backend or RecordingBackend()
    tensors = [backend.from_numpy(w) for w in weights]
    optimizer.build(backend, tensors)
    for step_grads in grads:
        g_tensors = [backend.from_numpy(g) for g in step_grads]
        optimizer.apply_gradients(list(zip(g_tensors, tensors)))
    return [backend.to_numpy(t) for t in tensors]


# ------------------------------------------------------ reference rules (float64)
def clip(g, clipvalue, clipnorm):
    if clipvalue is not None:
        g = np.clip(g, -clipvalue, clipvalue)
    if clipnorm is not None:
        norm = np.sqrt(np.sum(g * g))
        if norm > clipnorm:
            g = g * clipnorm / norm
    return g


def reference(kind, weights, grads, lr=0.01, clipvalue=None, clipnorm=None, weight_decay=0.0,
              **hp):
    """Keras 3's update rules written out per step; lr may be a function of the 0-based step."""
    weights = [w.copy() for w in weights]
    state = [{} for _ in weights]
    for step, step_grads in enumerate(grads):
        rate = lr(step) if callable(lr) else lr
        t = step + 1
        for w, g, s in zip(weights, step_grads, state):
            g = clip(g, clipvalue, clipnorm)
            w -= rate * weight_decay * w
            if kind == "sgd":
                momentum = hp.get("momentum", 0.0)
                if momentum == 0.0:
                    w -= rate * g
                    continue
                v = s.setdefault("v", np.zeros_like(w))
                v[...] = momentum * v - rate * g
                if hp.get("nesterov", False):
                    w += momentum * v - rate * g
                else:
                    w += v
            elif kind == "adam":
                b1, b2, eps = hp.get("beta_1", 0.9), hp.get("beta_2", 0.999), hp.get("epsilon", 1e-7)
                m = s.setdefault("m", np.zeros_like(w))
                v = s.setdefault("v", np.zeros_like(w))
                m[...] = b1 * m + (1 - b1) * g
                v[...] = b2 * v + (1 - b2) * g * g
                w -= rate * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
            elif kind == "rmsprop":
                rho, momentum, eps = hp.get("rho", 0.9), hp.get("momentum", 0.0), hp.get("epsilon", 1e-7)
                ms = s.setdefault("ms", np.zeros_like(w))
                ms[...] = rho * ms + (1 - rho) * g * g
                inc = rate * g / np.sqrt(ms + eps)
                if momentum > 0:
                    mom = s.setdefault("mom", np.zeros_like(w))
                    mom[...] = momentum * mom + inc
                    w -= mom
                else:
                    w -= inc
            elif kind == "adagrad":
                eps = hp.get("epsilon", 1e-7)
                acc = s.setdefault("acc", np.full_like(w, hp.get("initial_accumulator_value", 0.1)))
                acc += g * g
                w -= rate * g / np.sqrt(acc + eps)
    return weights


CASES = [
    ("sgd", optimizers.SGD, {}),
    ("sgd", optimizers.SGD, {"momentum": 0.9}),
    ("sgd", optimizers.SGD, {"momentum": 0.8, "nesterov": True}),
    ("adam", optimizers.Adam, {}),
    ("adam", optimizers.Adam, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3}),
    ("rmsprop", optimizers.RMSprop, {}),
    ("rmsprop", optimizers.RMSprop, {"rho": 0.8, "momentum": 0.5}),
    ("adagrad", optimizers.Adagrad, {}),
    ("adagrad", optimizers.Adagrad, {"initial_accumulator_value": 1.0, "epsilon": 1e-4}),
]


@pytest.mark.parametrize("kind,cls,hp", CASES)
def test_matches_keras_rule(kind, cls, hp):
    weights, grads = make_problem(6)
    got = run(cls(learning_rate=0.05, **hp), weights, grads)
    want = reference(kind, weights, grads, lr=0.05, **hp)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got[0], weights[0])


@pytest.mark.parametrize("kind,cls,hp", CASES[::2])
def test_float32_backend_close_to_reference(kind, cls, hp):
    weights, grads = make_problem(4)
    got = run(cls(learning_rate=0.05, **hp), weights, grads, backend=NumpyBackend("float32"))
    want = reference(kind, weights, grads, lr=0.05, **hp)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind,cls,hp", CASES)
def test_weight_decay_is_decoupled(kind, cls, hp):
    weights, grads = make_problem(3)
    got = run(cls(learning_rate=0.05, weight_decay=0.1, **hp), weights, grads)
    want = reference(kind, weights, grads, lr=0.05, weight_decay=0.1, **hp)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_step_makes_no_host_transfers_and_counts_iterations():
    backend = RecordingBackend()
    weights, grads = make_problem(3)
    tensors = [backend.from_numpy(w) for w in weights]
    g_tensors = [backend.from_numpy(g) for g in grads[0]]
    opt = optimizers.Adam(clipnorm=1.0, clipvalue=0.5)
    opt.build(backend, tensors)
    before = backend.transfers
    for _ in range(3):
        opt.apply_gradients(zip(g_tensors, tensors))
    assert backend.transfers == before
    assert opt.iterations == 3


@pytest.mark.parametrize("clipvalue,clipnorm", [(0.3, None), (None, 0.5), (0.3, 0.4)])
def test_clipping(clipvalue, clipnorm):
    weights, grads = make_problem(3, scale=5.0)
    opt = optimizers.SGD(learning_rate=0.1, momentum=0.5, clipvalue=clipvalue, clipnorm=clipnorm)
    got = run(opt, weights, grads)
    want = reference("sgd", weights, grads, lr=0.1, momentum=0.5, clipvalue=clipvalue,
                     clipnorm=clipnorm)
    unclipped = reference("sgd", weights, grads, lr=0.1, momentum=0.5)
    for g, w, u in zip(got, want, unclipped):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        assert not np.allclose(g, u)


def test_clipnorm_is_per_tensor():
    backend = RecordingBackend()
    small, big = backend.from_numpy(np.full(4, 0.1)), backend.from_numpy(np.full(4, 10.0))
    w1, w2 = backend.zeros((4,)), backend.zeros((4,))
    opt = optimizers.SGD(learning_rate=1.0, clipnorm=1.0)
    opt.build(backend, [w1, w2])
    opt.apply_gradients([(small, w1), (big, w2)])
    np.testing.assert_allclose(w1, -0.1)             # under the norm: untouched
    np.testing.assert_allclose(w2, -0.5)             # norm 20 -> 1


def test_schedule_is_evaluated_at_iterations():
    sched = schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    weights, grads = make_problem(5)
    opt = optimizers.SGD(learning_rate=sched, momentum=0.9)
    got = run(opt, weights, grads)
    want = reference("sgd", weights, grads, lr=sched, momentum=0.9)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert opt.current_learning_rate() == pytest.approx(0.1 * 0.5 ** 2.5)
    assert opt.learning_rate is sched


def test_setting_float_replaces_schedule():
    opt = optimizers.Adam(learning_rate=schedules.PiecewiseConstantDecay([1], [0.1, 0.01]))
    opt.learning_rate = np.float32(0.5)
    assert opt.learning_rate == 0.5 and isinstance(opt.learning_rate, float)
    assert opt.current_learning_rate() == 0.5
    assert opt.get_config()["learning_rate"] == 0.5


@pytest.mark.parametrize("kind,cls,hp", CASES)
def test_state_round_trip_continues_identically(kind, cls, hp):
    weights, grads = make_problem(6, seed=1)
    backend = RecordingBackend()
    first = cls(learning_rate=0.05, **hp)
    tensors = [backend.from_numpy(w) for w in weights]
    first.build(backend, tensors)
    for step_grads in grads[:3]:
        first.apply_gradients(zip([backend.from_numpy(g) for g in step_grads], tensors))
    state = first.get_state(backend)
    assert int(state["iterations"]) == 3
    saved = [backend.to_numpy(t) for t in tensors]

    # A fresh optimizer from the config, state restored before build (as load does).
    second = optimizers.deserialize(optimizers.serialize(first))
    second.set_state(backend, {k: np.array(v) for k, v in state.items()})
    copies = [backend.from_numpy(w) for w in saved]
    second.build(backend, copies)
    assert second.iterations == 3
    for step_grads in grads[3:]:
        first.apply_gradients(zip([backend.from_numpy(g) for g in step_grads], tensors))
        second.apply_gradients(zip([backend.from_numpy(g) for g in step_grads], copies))
    for a, b in zip(tensors, copies):
        np.testing.assert_array_equal(a, b)
    want = reference(kind, weights, grads, lr=0.05, **hp)
    for a, w in zip(tensors, want):
        np.testing.assert_allclose(a, w, rtol=1e-12, atol=1e-12)


def test_state_keys_and_set_after_build():
    backend = RecordingBackend()
    opt = optimizers.Adam()
    tensors = [backend.zeros(s) for s in SHAPES]
    opt.build(backend, tensors)
    state = opt.get_state(backend)
    assert sorted(state) == ["iterations", "momentum/0", "momentum/1", "velocity/0", "velocity/1"]
    state["velocity/1"] = np.full(5, 2.0)
    state["iterations"] = np.array(7)
    opt.set_state(backend, state)
    assert opt.iterations == 7
    np.testing.assert_array_equal(opt.get_state(backend)["velocity/1"], np.full(5, 2.0))
    assert sorted(optimizers.SGD().get_state(backend)) == ["iterations"]


def test_set_state_rejects_mismatches():
    backend = RecordingBackend()
    opt = optimizers.RMSprop(momentum=0.5)
    opt.build(backend, [backend.zeros(s) for s in SHAPES])
    state = opt.get_state(backend)
    bad = dict(state, **{"velocity/0": np.zeros((4, 3))})
    with pytest.raises(ValueError, match=r"velocity/0.*\(4, 3\).*\(3, 4\)"):
        opt.set_state(backend, bad)
    missing = {k: v for k, v in state.items() if k != "momentum/1"}
    with pytest.raises(ValueError, match="missing.*momentum/1"):
        opt.set_state(backend, missing)
    with pytest.raises(ValueError, match="iterations"):
        opt.set_state(backend, {"velocity/0": np.zeros((3, 4))})
    # A failed restore leaves the state alone.
    np.testing.assert_array_equal(opt.get_state(backend)["velocity/0"], state["velocity/0"])


def test_adagrad_accumulator_starts_at_initial_value():
    backend = RecordingBackend()
    opt = optimizers.Adagrad(initial_accumulator_value=0.25)
    opt.build(backend, [backend.zeros((2, 2))])
    np.testing.assert_array_equal(opt.get_state(backend)["accumulator/0"], np.full((2, 2), 0.25))


def test_apply_gradients_checks_pairs():
    backend = RecordingBackend()
    opt = optimizers.SGD()
    with pytest.raises(RuntimeError, match="build"):
        opt.apply_gradients([])
    w = backend.zeros((3,))
    opt.build(backend, [w])
    with pytest.raises(ValueError, match="1 weights.*2"):
        opt.apply_gradients([(w, w), (w, w)])
    with pytest.raises(ValueError, match=r"\(4,\)"):
        opt.apply_gradients([(backend.zeros((4,)), w)])
    with pytest.raises(RuntimeError, match="already built"):
        opt.build(backend, [w])


def test_defaults_match_keras():
    assert optimizers.SGD().get_config() == {
        "name": "sgd", "learning_rate": 0.01, "weight_decay": None, "clipnorm": None,
        "clipvalue": None, "global_clipnorm": None, "use_ema": False, "ema_momentum": 0.99,
        "ema_overwrite_frequency": None, "momentum": 0.0, "nesterov": False}
    adam = optimizers.Adam().get_config()
    assert (adam["learning_rate"], adam["beta_1"], adam["beta_2"], adam["epsilon"]) == \
        (0.001, 0.9, 0.999, 1e-7)
    rms = optimizers.RMSprop().get_config()
    assert (rms["learning_rate"], rms["rho"], rms["momentum"], rms["epsilon"]) == (0.001, 0.9, 0.0, 1e-7)
    ada = optimizers.Adagrad().get_config()
    assert (ada["learning_rate"], ada["initial_accumulator_value"], ada["epsilon"]) == (0.001, 0.1, 1e-7)


@pytest.mark.parametrize("name,cls", [("sgd", optimizers.SGD), ("ADAM", optimizers.Adam),
                                      ("RMSprop", optimizers.RMSprop), ("adagrad", optimizers.Adagrad)])
def test_get_by_name(name, cls):
    opt = optimizers.get(name)
    assert type(opt) is cls
    assert optimizers.get(opt) is opt


def test_get_rejects_unknown():
    with pytest.raises(ValueError, match="unknown optimizer 'adamq'.*adagrad"):
        optimizers.get("adamq")
    with pytest.raises(TypeError):
        optimizers.get(3)
    with pytest.raises(ValueError, match="unknown optimizer"):
        optimizers.deserialize({"class_name": "Nope", "config": {}})


@pytest.mark.parametrize("opt", [
    optimizers.SGD(learning_rate=0.2, momentum=0.9, nesterov=True, clipnorm=1.0, name="s"),
    optimizers.Adam(learning_rate=schedules.CosineDecay(0.1, 100, alpha=0.1, warmup_target=0.5,
                                                        warmup_steps=5), weight_decay=0.01),
    optimizers.RMSprop(rho=0.5, momentum=0.1, clipvalue=2.0),
    optimizers.Adagrad(learning_rate=schedules.PiecewiseConstantDecay([10, 20], [0.3, 0.2, 0.1])),
])
def test_config_round_trip(opt):
    config = optimizers.serialize(opt)
    again = optimizers.get(config)
    assert type(again) is type(opt)
    assert optimizers.serialize(again) == config
    for step in (0, 7, 15, 50):
        again.iterations = opt.iterations = step
        assert again.current_learning_rate() == opt.current_learning_rate()


@pytest.mark.parametrize("make,message", [
    (lambda: optimizers.SGD(learning_rate=0), "SGD: learning_rate must be > 0"),
    (lambda: optimizers.SGD(learning_rate=-1.0), "SGD: learning_rate"),
    (lambda: optimizers.SGD(learning_rate=float("nan")), "SGD: learning_rate must be finite"),
    (lambda: optimizers.SGD(momentum=1.0), "SGD: momentum must be < 1"),
    (lambda: optimizers.SGD(momentum=-0.1), "SGD: momentum must be >= 0"),
    (lambda: optimizers.Adam(beta_1=1.0), "Adam: beta_1"),
    (lambda: optimizers.Adam(beta_2=-0.5), "Adam: beta_2"),
    (lambda: optimizers.Adam(epsilon=-1e-7), "Adam: epsilon"),
    (lambda: optimizers.RMSprop(rho=1.5), "RMSprop: rho"),
    (lambda: optimizers.Adagrad(initial_accumulator_value=-1), "Adagrad: initial_accumulator_value"),
    (lambda: optimizers.Adam(clipnorm=0), "Adam: clipnorm must be > 0"),
    (lambda: optimizers.Adam(clipvalue=-1), "Adam: clipvalue"),
    (lambda: optimizers.Adam(weight_decay=-0.1), "Adam: weight_decay"),
])
def test_bad_hyperparameters_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("make,message", [
    (lambda: optimizers.SGD(learning_rate="fast"), "SGD: learning_rate"),
    (lambda: optimizers.SGD(learning_rate=True), "SGD: learning_rate"),
    (lambda: optimizers.SGD(nesterov=1), "SGD: nesterov"),
    (lambda: optimizers.Adam(beta_1=None), "Adam: beta_1"),
])
def test_bad_hyperparameters_type_error(make, message):
    with pytest.raises(TypeError, match=message):
        make()


def test_learning_rate_setter_validates():
    opt = optimizers.RMSprop()
    with pytest.raises(ValueError, match="RMSprop: learning_rate"):
        opt.learning_rate = 0.0
    with pytest.raises(TypeError, match="RMSprop: learning_rate"):
        opt.learning_rate = "1e-3"
    assert opt.learning_rate == 0.001


# ---------------------------------------------------------------- schedules
def test_exponential_decay():
    s = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    assert s(0) == pytest.approx(0.1)
    assert s(5) == pytest.approx(0.1 * 0.5 ** 0.5)
    assert s(20) == pytest.approx(0.025)
    stair = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    assert stair(9) == pytest.approx(0.1)
    assert stair(10) == pytest.approx(0.05)
    assert stair(15) == pytest.approx(0.05)


def test_piecewise_constant_decay():
    s = schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    assert [s(0), s(10), s(11), s(20), s(21), s(1000)] == [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
    with pytest.raises(ValueError, match="one more element"):
        schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5])
    with pytest.raises(ValueError, match="strictly increasing"):
        schedules.PiecewiseConstantDecay([20, 10], [1.0, 0.5, 0.1])


def test_cosine_decay():
    s = schedules.CosineDecay(1.0, decay_steps=100, alpha=0.1)
    assert s(0) == pytest.approx(1.0)
    assert s(50) == pytest.approx(0.9 * 0.5 + 0.1)
    assert s(25) == pytest.approx(0.9 * 0.5 * (1 + math.cos(math.pi / 4)) + 0.1)
    assert s(100) == pytest.approx(0.1)
    assert s(500) == pytest.approx(0.1)


def test_cosine_decay_with_warmup():
    s = schedules.CosineDecay(0.0, decay_steps=100, warmup_target=1.0, warmup_steps=10)
    assert s(0) == pytest.approx(0.0)
    assert s(5) == pytest.approx(0.5)
    assert s(10) == pytest.approx(1.0)
    assert s(60) == pytest.approx(0.5)
    assert s(110) == pytest.approx(0.0, abs=1e-12)
    assert s(1000) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("schedule", [
    schedules.ExponentialDecay(0.1, 7, 0.9, staircase=True),
    schedules.PiecewiseConstantDecay([3, 9], [0.3, 0.2, 0.1]),
    schedules.CosineDecay(0.1, 50, alpha=0.2, warmup_target=0.4, warmup_steps=4),
])
def test_schedule_config_round_trip(schedule):
    again = schedules.get(schedules.serialize(schedule))
    assert type(again) is type(schedule)
    assert again.get_config() == schedule.get_config()
    assert [again(k) for k in range(0, 60, 3)] == [schedule(k) for k in range(0, 60, 3)]


def test_schedule_errors():
    with pytest.raises(ValueError, match="ExponentialDecay: decay_steps must be > 0"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="unknown schedule class 'StepDecay'"):
        schedules.deserialize({"class_name": "StepDecay", "config": {}})
    with pytest.raises(ValueError, match="cannot interpret"):
        schedules.get("cosine")


# ------------------------------------------------------- every other backend
def _backend_or_skip(name):
    from minidl.backends import _create, unavailable_reason
    reason = unavailable_reason(name)
    if reason is not None:
        pytest.skip(f"backend {name!r} unavailable: {reason}")
    return _create(name)


@pytest.mark.parametrize("name", ["cpu", "opencl"])
@pytest.mark.parametrize("kind,cls,hp", CASES)
def test_backend_update_ops_match_reference_without_transfers(name, kind, cls, hp):
    backend = _backend_or_skip(name)
    weights, grads = make_problem(4, scale=2.0)
    weights = [w.astype(np.float32) for w in weights]
    grads = [[g.astype(np.float32) for g in step] for step in grads]
    tensors = [backend.from_numpy(w) for w in weights]
    g_tensors = [[backend.from_numpy(g) for g in step] for step in grads]
    opt = cls(learning_rate=0.05, clipnorm=3.0, clipvalue=1.5, weight_decay=0.01, **hp)
    opt.build(backend, tensors)
    backend.synchronize()
    backend.reset_stats()
    for step in g_tensors:
        opt.apply_gradients(zip(step, tensors))
    backend.synchronize()
    stats = backend.stats()
    assert stats["h2d_count"] == 0 and stats["d2h_count"] == 0, stats
    want = reference(kind, [w.astype(np.float64) for w in weights], grads, lr=0.05, clipnorm=3.0,
                     clipvalue=1.5, weight_decay=0.01, **hp)
    for tensor, w in zip(tensors, want):
        np.testing.assert_allclose(backend.to_numpy(tensor), w, rtol=1e-5, atol=1e-6)
