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
            else:
                extended_rule(kind, w, g, s, rate, t, hp)
    return weights


def extended_rule(kind, w, g, s, rate, t, hp):
    """One step of Adadelta, Adamax, Nadam, AdamW, Lion or Ftrl, as keras/src/optimizers/*.py."""
    zeros = lambda key: s.setdefault(key, np.zeros_like(w))  # noqa: E731
    b1, b2 = hp.get("beta_1", 0.9), hp.get("beta_2", 0.99 if kind == "lion" else 0.999)
    eps = hp.get("epsilon", 1e-7)
    if kind == "adadelta":
        rho = hp.get("rho", 0.95)
        ag, ad = zeros("ag"), zeros("ad")
        ag[...] = rho * ag + (1 - rho) * g * g
        delta = -np.sqrt(ad + eps) * g / np.sqrt(ag + eps)
        ad[...] = rho * ad + (1 - rho) * delta * delta
        w += rate * delta
    elif kind == "adamax":
        m, u = zeros("m"), zeros("u")
        m += (g - m) * (1 - b1)
        u[...] = np.maximum(b2 * u, np.abs(g))
        w -= rate * m / ((1 - b1 ** t) * (u + eps))
    elif kind == "nadam":
        m, v = zeros("m"), zeros("v")
        u_t, u_next = b1 * (1 - 0.5 * 0.96 ** t), b1 * (1 - 0.5 * 0.96 ** (t + 1))
        s["u_product"] = s.get("u_product", 1.0) * u_t
        m += (g - m) * (1 - b1)
        v += (g * g - v) * (1 - b2)
        m_hat = u_next * m / (1 - s["u_product"] * u_next) + (1 - u_t) * g / (1 - s["u_product"])
        w -= rate * m_hat / (np.sqrt(v / (1 - b2 ** t)) + eps)
    elif kind == "lion":
        m = zeros("m")
        w -= rate * np.sign(b1 * m + (1 - b1) * g)
        m[...] = b2 * m + (1 - b2) * g
    elif kind == "ftrl":
        power = hp.get("learning_rate_power", -0.5)
        l1, l2 = hp.get("l1_regularization_strength", 0.0), hp.get("l2_regularization_strength", 0.0)
        l2 = l2 + hp.get("beta", 0.0) / (2 * rate)
        shrink = hp.get("l2_shrinkage_regularization_strength", 0.0)
        acc = s.setdefault("acc", np.full_like(w, hp.get("initial_accumulator_value", 0.1)))
        linear = zeros("linear")
        new_acc = acc + g * g
        linear += g + 2 * shrink * w - (new_acc ** -power - acc ** -power) / rate * w
        quadratic = new_acc ** -power / rate + 2 * l2
        w[...] = (np.clip(linear, -l1, l1) - linear) / quadratic
        acc[...] = new_acc
    else:
        raise AssertionError(kind)


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
    ("adadelta", optimizers.Adadelta, {}),
    ("adadelta", optimizers.Adadelta, {"rho": 0.8, "epsilon": 1e-4}),
    ("adamax", optimizers.Adamax, {}),
    ("adamax", optimizers.Adamax, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3}),
    ("nadam", optimizers.Nadam, {}),
    ("nadam", optimizers.Nadam, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3}),
    ("lion", optimizers.Lion, {}),
    ("lion", optimizers.Lion, {"beta_1": 0.5, "beta_2": 0.9}),
    ("ftrl", optimizers.Ftrl, {}),
    ("ftrl", optimizers.Ftrl, {"learning_rate_power": -0.3, "initial_accumulator_value": 0.5,
                               "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.1,
                               "l2_shrinkage_regularization_strength": 0.05, "beta": 0.2}),
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


# ------------------------------------------------ Keras 3's other optimizers and options
def test_adamw_is_adam_with_keras_default_decay():
    weights, grads = make_problem(5)
    opt = optimizers.AdamW(learning_rate=0.05)
    assert opt.get_config()["weight_decay"] == 0.004
    got = run(opt, weights, grads)
    want = reference("adam", weights, grads, lr=0.05, weight_decay=0.004)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert optimizers.get("adamw").get_config() == opt.get_config() | {"learning_rate": 0.001}


@pytest.mark.parametrize("make,match", [
    (lambda: optimizers.AdamW(weight_decay=None), "weight_decay"),
    (lambda: optimizers.Lion(beta_1=0.0), "beta_1"),
    (lambda: optimizers.Ftrl(learning_rate_power=0.5), "learning_rate_power"),
    (lambda: optimizers.Ftrl(initial_accumulator_value=-1.0), "initial_accumulator_value"),
    (lambda: optimizers.Ftrl(l1_regularization_strength=-0.1), "l1_regularization_strength"),
    (lambda: optimizers.Adadelta(rho=1.5), "rho"),
    (lambda: optimizers.Nadam(beta_2=-0.1), "beta_2"),
    (lambda: optimizers.Adam(global_clipnorm=1.0, clipnorm=1.0), "global_clipnorm"),
    (lambda: optimizers.SGD(use_ema=True, ema_momentum=1.5), "ema_momentum"),
    (lambda: optimizers.SGD(use_ema=True, ema_overwrite_frequency=0), "ema_overwrite_frequency"),
])
def test_keras_argument_errors(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize("name", ["adadelta", "adamax", "nadam", "adamw", "lion", "ftrl"])
def test_names_and_config_round_trip(name):
    opt = optimizers.get(name)
    assert opt.name == name
    again = optimizers.deserialize(optimizers.serialize(opt))
    assert type(again) is type(opt) and again.get_config() == opt.get_config()
    assert getattr(optimizers, type(opt).__name__) is type(opt)


def global_norm_reference(grads, clipnorm):
    norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads))
    return [g * clipnorm / max(norm, clipnorm) for g in grads]


@pytest.mark.parametrize("name", ["numpy", "cpu", "opencl"])
def test_global_clipnorm_scales_all_gradients_together(name):
    backend = RecordingBackend() if name == "numpy" else _backend_or_skip(name)
    weights, grads = make_problem(4, scale=3.0)
    dtype = np.float64 if name == "numpy" else np.float32
    weights = [w.astype(dtype) for w in weights]
    grads = [[g.astype(dtype) for g in step] for step in grads]
    got = run(optimizers.SGD(learning_rate=0.1, global_clipnorm=1.5), weights, grads, backend=backend)
    clipped = [global_norm_reference([g.astype(np.float64) for g in step], 1.5) for step in grads]
    # per-tensor clipping at the same norm gives another answer: the test tells them apart
    per_tensor = reference("sgd", weights, grads, lr=0.1, clipnorm=1.5)
    want = reference("sgd", [w.astype(np.float64) for w in weights], clipped, lr=0.1)
    for g, w, p in zip(got, want, per_tensor):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        assert not np.allclose(g, p, rtol=1e-3)


def ema_reference(kind, weights, grads, momentum, overwrite=None, **hp):
    """The weights and their moving averages after each step, as Keras's use_ema computes them."""
    weights = [w.copy() for w in weights]
    averages = [np.zeros_like(w) for w in weights]
    for step in range(len(grads)):
        # one step of the rule from the current weights (stateless SGD: no state to carry)
        weights = reference(kind, weights, [grads[step]], **hp)
        m = momentum if step > 0 else 0.0
        averages = [m * a + (1 - m) * w for a, w in zip(averages, weights)]
        if overwrite and (step + 1) % overwrite == 0:
            weights = [a.copy() for a in averages]
    return weights, averages


@pytest.mark.parametrize("overwrite", [None, 3])
def test_ema_averages_and_overwrite_frequency(overwrite):
    weights, grads = make_problem(7)
    backend = RecordingBackend()
    tensors = [backend.from_numpy(w) for w in weights]
    opt = optimizers.SGD(learning_rate=0.1, use_ema=True, ema_momentum=0.7,
                         ema_overwrite_frequency=overwrite)
    opt.build(backend, tensors)
    for step in grads:
        opt.apply_gradients(zip([backend.from_numpy(g) for g in step], tensors))
    want_w, want_avg = ema_reference("sgd", weights, grads, 0.7, overwrite, lr=0.1)
    state = opt.get_state(backend)
    for i, (t, w, a) in enumerate(zip(tensors, want_w, want_avg)):
        np.testing.assert_allclose(t, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(state[f"average/{i}"], a, rtol=1e-12, atol=1e-12)
    assert not np.allclose(want_w[0], want_avg[0])
    opt.finalize_variable_values(tensors)
    for t, a in zip(tensors, want_avg):
        np.testing.assert_allclose(t, a, rtol=1e-12, atol=1e-12)


def test_ema_state_is_saved_with_the_slots():
    backend = RecordingBackend()
    weights, grads = make_problem(3)
    opt = optimizers.Adam(use_ema=True)
    run(opt, weights, grads, backend=backend)
    assert set(opt.state_shapes()) == {f"{slot}/{i}" for slot in ("momentum", "velocity", "average")
                                       for i in range(len(SHAPES))}
    again = optimizers.deserialize(optimizers.serialize(opt))
    again.build(backend, [backend.from_numpy(w) for w in weights])
    again.set_state(backend, opt.get_state(backend))
    for key, value in opt.get_state(backend).items():
        np.testing.assert_array_equal(again.get_state(backend)[key], value)


def test_exclude_from_weight_decay_by_name_and_by_tensor():
    backend = RecordingBackend()
    weights, grads = make_problem(3)
    tensors = [backend.from_numpy(w) for w in weights]
    opt = optimizers.AdamW(learning_rate=0.05, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.build(backend, tensors, names=["dense/kernel", "dense/bias"])
    for step in grads:
        opt.apply_gradients(zip([backend.from_numpy(g) for g in step], tensors))
    decayed = reference("adam", weights, grads, lr=0.05, weight_decay=0.5)
    plain = reference("adam", weights, grads, lr=0.05)
    np.testing.assert_allclose(tensors[0], decayed[0], rtol=1e-12)
    np.testing.assert_allclose(tensors[1], plain[1], rtol=1e-12)

    tensors = [backend.from_numpy(w) for w in weights]
    opt = optimizers.SGD(learning_rate=0.05, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_list=[tensors[0]])
    opt.build(backend, tensors)
    opt.apply_gradients(zip([backend.from_numpy(g) for g in grads[0]], tensors))
    np.testing.assert_allclose(tensors[0], reference("sgd", weights, grads[:1], lr=0.05)[0], rtol=1e-12)
    np.testing.assert_allclose(tensors[1], reference("sgd", weights, grads[:1], lr=0.05,
                                                     weight_decay=0.5)[1], rtol=1e-12)
    with pytest.raises(ValueError, match="before the optimizer is built"):
        opt.exclude_from_weight_decay(var_names=["kernel"])


# ------------------------------------------------------- the other schedules
def test_polynomial_decay():
    s = schedules.PolynomialDecay(1.0, decay_steps=10, end_learning_rate=0.1, power=2.0)
    assert s(0) == pytest.approx(1.0)
    assert s(5) == pytest.approx(0.9 * 0.25 + 0.1)
    assert s(10) == pytest.approx(0.1) and s(50) == pytest.approx(0.1)
    cyc = schedules.PolynomialDecay(1.0, decay_steps=10, end_learning_rate=0.0, cycle=True)
    assert cyc(0) == pytest.approx(1.0)
    assert cyc(15) == pytest.approx(1.0 - 15 / 20)   # the horizon grows to 20 steps
    assert cyc(20) == pytest.approx(0.0, abs=1e-12)
    assert s.get_config()["name"] == "PolynomialDecay"


def test_inverse_time_decay():
    s = schedules.InverseTimeDecay(0.5, decay_steps=4, decay_rate=2.0)
    assert s(0) == pytest.approx(0.5) and s(2) == pytest.approx(0.5 / 2.0) and s(8) == pytest.approx(0.1)
    st = schedules.InverseTimeDecay(0.5, decay_steps=4, decay_rate=2.0, staircase=True)
    assert st(3) == pytest.approx(0.5) and st(4) == pytest.approx(0.5 / 3.0)


def test_cosine_decay_restarts():
    s = schedules.CosineDecayRestarts(1.0, first_decay_steps=10, t_mul=2.0, m_mul=0.5, alpha=0.1)
    cosine = lambda f: 0.5 * (1 + math.cos(math.pi * f))  # noqa: E731
    assert s(0) == pytest.approx(1.0)
    assert s(5) == pytest.approx(0.9 * cosine(0.5) + 0.1)
    assert s(10) == pytest.approx(0.9 * 0.5 + 0.1)             # the second period starts at m_mul
    assert s(20) == pytest.approx(0.9 * 0.5 * cosine(0.5) + 0.1)  # 10 of its 20 steps
    assert s(30) == pytest.approx(0.9 * 0.25 + 0.1)            # the third period (40 steps)
    flat = schedules.CosineDecayRestarts(1.0, first_decay_steps=4, t_mul=1.0)
    assert flat(2) == pytest.approx(0.5) and flat(6) == pytest.approx(0.5) and flat(4) == pytest.approx(1.0)
    assert s.get_config()["name"] == "SGDRDecay"


@pytest.mark.parametrize("make", [
    lambda **w: schedules.PolynomialDecay(0.5, 20, 0.01, power=1.5, **w),
    lambda **w: schedules.InverseTimeDecay(0.5, 5, 0.3, **w),
    lambda **w: schedules.CosineDecayRestarts(0.5, 8, **w),
])
def test_warmup_on_each_schedule(make):
    plain, warm = make(), make(warmup_target=1.0, warmup_steps=10)
    assert warm(0) == pytest.approx(0.5) and warm(5) == pytest.approx(0.75)
    assert warm(10) == pytest.approx(1.0)
    # after the warm-up the schedule runs from warmup_target, counted from the warm-up's end
    from_target = type(plain).from_config(plain.get_config() | {"initial_learning_rate": 1.0})
    assert warm(17) == pytest.approx(from_target(7)) and warm(17) != pytest.approx(plain(17))
    assert "warmup_target" not in plain.get_config()
    again = schedules.deserialize(schedules.serialize(warm))
    assert [again(k) for k in range(40)] == [warm(k) for k in range(40)]
    with pytest.raises(ValueError, match="warmup_steps > 0"):
        make(warmup_target=1.0)


class HalvingSchedule(schedules.LearningRateSchedule):
    """A schedule of the user's own: halves every `every` steps."""

    def __init__(self, rate, every):
        self.rate, self.every = rate, every

    def __call__(self, step):
        return self.rate * 0.5 ** (step // self.every)

    def get_config(self):
        return {"rate": self.rate, "every": self.every}


def test_custom_schedule_saves_and_loads_with_custom_objects(tmp_path):
    import minidl
    from minidl import layers
    from minidl.models import ModelFileError, load_model
    minidl.set_backend("numpy")
    model = minidl.models.Sequential([layers.Input((3,)), layers.Dense(2, activation="softmax")])
    model.compile(optimizer=optimizers.Adam(HalvingSchedule(0.01, 2)), loss="sparse_categorical_crossentropy")
    x, y = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32), np.arange(8) % 2
    model.fit(x, y, epochs=1, batch_size=2, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    with pytest.raises(ModelFileError, match="HalvingSchedule"):
        load_model(path)
    again = load_model(path, custom_objects={"HalvingSchedule": HalvingSchedule})
    assert isinstance(again.optimizer.learning_rate, HalvingSchedule)
    assert again.optimizer.current_learning_rate() == model.optimizer.current_learning_rate() == 0.0025


# ------------------------------------------------------- in a model, on every backend
import minidl  # noqa: E402
from minidl import layers as _layers  # noqa: E402


def blob_model(optimizer):
    rng = np.random.default_rng(1)
    centers = rng.normal(scale=3.0, size=(3, 4))
    y = np.arange(120) % 3
    x = (centers[y] + rng.normal(size=(120, 4))).astype(np.float32)
    model = minidl.models.Sequential([_layers.Input((4,)), _layers.Dense(16, activation="relu"),
                                      _layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, x, y


@pytest.mark.parametrize("make", [
    lambda: optimizers.Adadelta(learning_rate=1.0), lambda: optimizers.Adamax(0.02),
    lambda: optimizers.Nadam(0.02), lambda: optimizers.AdamW(0.02, weight_decay=0.01),
    lambda: optimizers.Lion(0.003), lambda: optimizers.Ftrl(0.5),
    lambda: optimizers.Adam(0.02, global_clipnorm=1.0, use_ema=True, ema_momentum=0.9),
], ids=["adadelta", "adamax", "nadam", "adamw", "lion", "ftrl", "adam-ema-global-clipnorm"])
def test_model_trains_with_each_optimizer(active_backend, make):
    model, x, y = blob_model(make())
    before = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    after = model.evaluate(x, y, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert after[0] < 0.7 * before[0], (before, after)


def test_ema_weights_replace_the_model_weights_at_the_end_of_fit(active_backend, tmp_path):
    model, x, y = blob_model(optimizers.SGD(0.1, use_ema=True, ema_momentum=0.8))
    seen = {}

    class Record(minidl.callbacks.Callback):
        def on_train_end(self, logs=None):
            seen["weights"] = self.model.get_weights()

        def on_epoch_end(self, epoch, logs=None):
            seen["raw"] = self.model.get_weights()

    model.fit(x, y, epochs=2, batch_size=16, verbose=0, callbacks=[Record()])
    averages = model.optimizer.get_state(model.backend)
    final = model.get_weights()
    for i, w in enumerate(final):  # Dense layers only: every weight is trainable
        np.testing.assert_array_equal(w, averages[f"average/{i}"])
    assert not np.allclose(seen["raw"][0], final[0])      # the raw weights at the last epoch's end
    np.testing.assert_array_equal(seen["weights"][0], final[0])  # on_train_end sees the averages
    # evaluate and save use what the model now holds: the averages
    path = tmp_path / "ema.keras"
    model.save(path)
    again = minidl.models.load_model(path)
    for a, b in zip(again.get_weights(), final):
        np.testing.assert_array_equal(a, b)
    assert again.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0), rel=1e-6)
    for key, value in averages.items():
        np.testing.assert_array_equal(again.optimizer.get_state(again.backend)[key], value)


def test_exclude_from_weight_decay_in_a_model():
    minidl.set_backend("numpy")
    opt = optimizers.AdamW(0.01, weight_decay=0.9)
    opt.exclude_from_weight_decay(var_names=["bias"])
    model, x, y = blob_model(opt)
    names = [f"{layer.name}/{w}" for layer in model.layers for w in ("kernel", "bias")]
    assert opt._weight_paths == names and names[1].endswith("/bias")
    assert opt._decays == [0.9, 0.0, 0.9, 0.0]


def test_ema_and_weight_decay_paths_of_a_nested_model_frozen_after_compile():
    """The optimizer gets the paths of the nested model's layers; a trainable change after
    compile waits for the next compile (as Keras), so the end of fit still averages the
    weights compiled for."""
    minidl.set_backend("numpy")
    inner_in = _layers.Input((4,))
    base = minidl.models.Model(inner_in, _layers.Dense(8, activation="relu", name="inner")(inner_in))
    x_in = _layers.Input((4,))
    model = minidl.models.Model(x_in, _layers.Dense(3, activation="softmax", name="top")(base(x_in)))
    opt = optimizers.AdamW(0.01, weight_decay=0.5, use_ema=True, ema_momentum=0.5)
    opt.exclude_from_weight_decay(var_names=["inner/"])
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    assert opt._weight_paths == ["inner/kernel", "inner/bias", "top/kernel", "top/bias"]
    assert opt._decays == [0.0, 0.0, 0.5, 0.5]
    base.trainable = False
    _, x, y = blob_model("sgd")
    model.fit(x, y, epochs=1, batch_size=40, verbose=0)
    averages = opt.get_state(model.backend)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(w, averages[f"average/{i}"])
