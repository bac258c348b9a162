"""Regularizers and constraints: Keras 3's formulas and defaults, float64 gradient checks of
the penalty ops, the penalty in the logged loss and its gradient in the step, constraints after
every step, on every backend; configs by name and by object, saved and loaded."""

import numpy as np
import pytest

import minidl
from minidl import constraints, layers, optimizers, regularizers
from minidl.backends.numpy_backend import NumpyBackend

from _numeric import central_differences
from minidl.models import Sequential, load_model


# ------------------------------------------------------------------ regularizers
def test_keras_defaults_and_values():
    x = np.array([[1.0, -2.0], [0.5, 0.0]])
    assert regularizers.L1().get_config() == {"l1": 0.01}
    assert regularizers.L2().get_config() == {"l2": 0.01}
    assert regularizers.L1L2().get_config() == {"l1": 0.0, "l2": 0.0}
    assert regularizers.l1(0.1)(x) == pytest.approx(0.1 * 3.5)
    assert regularizers.l2(0.1)(x) == pytest.approx(0.1 * 5.25)
    assert regularizers.l1_l2(l1=0.1, l2=0.2)(x) == pytest.approx(0.35 + 1.05)
    with pytest.raises(ValueError, match="l2"):
        regularizers.L2(-1.0)
    with pytest.raises(ValueError, match="unknown"):
        regularizers.get("l3")
    ortho = regularizers.orthogonal_regularizer(factor=0.1)
    assert ortho.get_config() == {"factor": 0.1, "mode": "rows"}
    q = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))[0]
    assert ortho(q[:3]) == pytest.approx(0.0, abs=1e-12)       # orthonormal rows: no penalty
    rows = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    cos = [1 / np.sqrt(2), 0.0, 1 / np.sqrt(2)]                 # the three pairs
    assert ortho(rows) == pytest.approx(0.1 * 0.5 * 2 * sum(cos) / 3)
    with pytest.raises(ValueError, match="rank 2"):
        ortho(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="mode"):
        regularizers.OrthogonalRegularizer(mode="diagonal")


@pytest.mark.parametrize("reg", [regularizers.L1(0.3), regularizers.L2(0.2), regularizers.L1L2(0.1, 0.4),
                                 regularizers.OrthogonalRegularizer(0.5),
                                 regularizers.OrthogonalRegularizer(0.2, mode="columns")])
def test_penalty_gradient_float64(reg):
    backend = NumpyBackend(dtype="float64")
    rng = np.random.default_rng(0)
    w = rng.normal(size=(5, 4))
    out = np.zeros(1)

    def f():
        out[0] = 0.0
        reg.penalty(backend, out, w, scale=1.5)
        return float(out[0])

    assert f() == pytest.approx(1.5 * reg(w))
    grad = np.zeros_like(w)
    reg.add_gradient(backend, grad, w, scale=1.5)
    numeric = central_differences(f, w)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def dense_model(**options):
    model = Sequential([layers.Input((4,)), layers.Dense(3, **options)])
    model.compile(optimizer=optimizers.SGD(0.1), loss="mse")
    return model


def test_penalty_is_in_the_logged_loss_and_its_gradient_in_the_step(active_backend):
    rng = np.random.default_rng(1)
    x, t = rng.normal(size=(16, 4)).astype(np.float32), rng.normal(size=(16, 3)).astype(np.float32)
    kernel_reg, bias_reg = regularizers.L1L2(0.01, 0.05), regularizers.L1(0.02)
    model = dense_model(kernel_regularizer=kernel_reg, bias_regularizer=bias_reg)
    w, b = [a.astype(np.float64) for a in model.get_weights()]
    b = b + 0.3                                 # a non-zero bias, so that its L1 term matters
    model.set_weights([w.astype(np.float32), b.astype(np.float32)])
    y = x @ w + b
    data = np.mean((y - t) ** 2)
    penalty = kernel_reg(w) + bias_reg(b)
    assert model.evaluate(x, t, verbose=0) == pytest.approx(data + penalty, rel=1e-5)
    history = model.fit(x, t, batch_size=16, epochs=1, shuffle=False, verbose=0)
    assert history.history["loss"][0] == pytest.approx(data + penalty, rel=1e-5)
    dy = 2 * (y - t) / (16 * 3)
    dw = x.T @ dy + 0.01 * np.sign(w) + 2 * 0.05 * w
    db = dy.sum(axis=0) + 0.02 * np.sign(b)
    new_w, new_b = model.get_weights()
    np.testing.assert_allclose(new_w, w - 0.1 * dw, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(new_b, b - 0.1 * db, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------ constraints
def test_constraint_formulas_as_keras():
    rng = np.random.default_rng(2)
    w = rng.normal(size=(6, 4)) * 3
    norms = np.sqrt((w ** 2).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(constraints.MaxNorm(2.0)(w), w * np.clip(norms, 0, 2) / (1e-7 + norms))
    np.testing.assert_allclose(constraints.UnitNorm()(w), w / (1e-7 + norms))
    np.testing.assert_allclose(constraints.NonNeg()(w), w * (w >= 0))
    mm = constraints.MinMaxNorm(0.5, 1.5, rate=0.4)(w)
    np.testing.assert_allclose(mm, w * (0.4 * np.clip(norms, 0.5, 1.5) + 0.6 * norms) / (1e-7 + norms))
    assert constraints.MaxNorm().get_config() == {"max_value": 2.0, "axis": 0}
    assert constraints.MinMaxNorm().get_config() == {"min_value": 0.0, "max_value": 1.0, "rate": 1.0, "axis": 0}
    with pytest.raises(ValueError, match="max_value"):
        constraints.MinMaxNorm(2.0, 1.0)


@pytest.mark.parametrize("name,check", [
    ("max_norm", lambda w: np.sqrt((w ** 2).sum(axis=0)).max() <= 2.0 + 1e-5),
    ("unit_norm", lambda w: np.allclose(np.sqrt((w ** 2).sum(axis=0)), 1.0, atol=1e-5)),
    ("non_neg", lambda w: w.min() >= 0.0),
])
def test_constraints_hold_after_every_step(active_backend, name, check):
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=(32, 4)).astype(np.float32), 10 * rng.normal(size=(32, 3)).astype(np.float32)
    free = dense_model(kernel_initializer="ones")
    free.fit(x, t, batch_size=8, epochs=2, verbose=0)
    assert not check(free.get_weights()[0])          # without the constraint the kernel breaks it
    model = dense_model(kernel_constraint=name, kernel_initializer="ones")
    model.fit(x, t, batch_size=8, epochs=2, verbose=0)
    kernel = model.get_weights()[0]
    assert check(kernel), kernel
    want = constraints.get(name)(kernel)              # a constrained kernel is a fixed point
    np.testing.assert_allclose(kernel, want, rtol=1e-4, atol=1e-6)


def test_conv2d_constraint_over_its_filter_axes(active_backend):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(8, 6, 6, 2)).astype(np.float32)
    model = Sequential([layers.Input((6, 6, 2)),
                        layers.Conv2D(3, 3, kernel_constraint=constraints.MaxNorm(0.5, axis=[0, 1, 2]),
                                      kernel_regularizer=regularizers.L2(1e-3)),
                        layers.Flatten(), layers.Dense(2)])
    model.compile(optimizer=optimizers.SGD(0.05), loss="mse")
    before = model.get_weights()[0]
    model.fit(x, 5 * rng.normal(size=(8, 2)).astype(np.float32), epochs=2, batch_size=4, verbose=0)
    kernel = model.get_weights()[0]
    assert not np.allclose(kernel, before)
    assert np.sqrt((kernel.astype(np.float64) ** 2).sum(axis=(0, 1, 2))).max() <= 0.5 + 1e-5


# ------------------------------------------------------------------ configs
def test_config_round_trip_by_name_and_object(tmp_path):
    minidl.set_backend("numpy")
    by_name = layers.Dense(3, kernel_regularizer="l2", bias_constraint="non_neg")
    assert isinstance(by_name.kernel_regularizer, regularizers.L2)
    obj = layers.Conv2D(2, 3, kernel_regularizer=regularizers.L1L2(0.1, 0.2),
                        kernel_constraint=constraints.MinMaxNorm(0.1, 0.9, 0.5, axis=[0, 1, 2]))
    for layer in (by_name, obj):
        config = layer.get_config()
        again = type(layer).from_config(config)
        assert again.get_config() == config
    model = Sequential([layers.Input((5, 5, 1)), obj, layers.Flatten(),
                        layers.Dense(2, kernel_regularizer="l1", bias_constraint="non_neg")])
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(4, 5, 5, 1)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
    path = tmp_path / "reg.keras"
    model.save(path)
    again = load_model(path)
    assert again.layers[-1].get_config() == model.layers[-1].get_config()
    assert again.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0), rel=1e-6)


def test_activity_regularizer_penalty_and_gradient(active_backend):
    """reg(output) / batch joins the loss; its gradient flows into the layer and below."""
    rng = np.random.default_rng(6)
    x, t = rng.normal(size=(16, 4)).astype(np.float32), rng.normal(size=(16, 3)).astype(np.float32)
    reg = regularizers.L1L2(0.02, 0.1)
    model = dense_model(activity_regularizer=reg)
    w, b = [a.astype(np.float64) for a in model.get_weights()]
    y = x @ w + b
    want = np.mean((y - t) ** 2) + reg(y) / 16
    assert model.evaluate(x, t, verbose=0) == pytest.approx(want, rel=1e-5)
    model.fit(x, t, batch_size=16, epochs=1, shuffle=False, verbose=0)
    dy = 2 * (y - t) / (16 * 3) + (0.02 * np.sign(y) + 2 * 0.1 * y) / 16
    new_w, new_b = model.get_weights()
    np.testing.assert_allclose(new_w, w - 0.1 * (x.T @ dy), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(new_b, b - 0.1 * dy.sum(axis=0), rtol=1e-4, atol=1e-6)


def test_activity_regularizer_on_a_softmax_output(active_backend):
    """The crossentropy is then not fused: the penalty sees the probabilities, as in Keras."""
    rng = np.random.default_rng(7)
    x, labels = rng.normal(size=(12, 4)).astype(np.float32), rng.integers(0, 3, 12)
    model = Sequential([layers.Input((4,)), layers.Dense(3, activation="softmax",
                                                         activity_regularizer=regularizers.L2(0.5))])
    model.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    p = model.predict(x, verbose=0).astype(np.float64)
    want = np.mean(-np.log(p[np.arange(12), labels])) + 0.5 * np.sum(p ** 2) / 12
    assert model.evaluate(x, labels, verbose=0) == pytest.approx(want, rel=1e-5)
    before = model.evaluate(x, labels, verbose=0)
    model.fit(x, labels, epochs=20, batch_size=12, verbose=0)
    assert model.evaluate(x, labels, verbose=0) < before


def test_orthogonal_regularizer_in_a_model(active_backend):
    rng = np.random.default_rng(8)
    x, t = rng.normal(size=(16, 4)).astype(np.float32), rng.normal(size=(16, 3)).astype(np.float32)
    reg = regularizers.OrthogonalRegularizer(factor=2.0, mode="columns")
    model = dense_model(kernel_regularizer=reg)
    w, b = [a.astype(np.float64) for a in model.get_weights()]
    y = x @ w + b
    assert model.evaluate(x, t, verbose=0) == pytest.approx(np.mean((y - t) ** 2) + reg(w), rel=1e-5)
    model.fit(x, t, batch_size=16, epochs=1, shuffle=False, verbose=0)
    grad = np.zeros_like(w)
    reg.add_gradient(NumpyBackend(dtype="float64"), grad, w)
    dw = x.T @ (2 * (y - t) / (16 * 3)) + grad
    np.testing.assert_allclose(model.get_weights()[0], w - 0.1 * dw, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------ functional graphs
def _shared_two_head_model(cls_activity=True):
    """A nested model called twice (its Dense shares weights, with an activity regularizer per
    call), its two outputs summed by Add (one dout for both calls), two heads."""
    from minidl.models import Model
    inner_in = layers.Input((4,))
    base = Model(inner_in, layers.Dense(3, activation="tanh", kernel_regularizer=regularizers.L2(0.1),
                                        activity_regularizer=regularizers.L1L2(0.05, 0.2))(inner_in))
    a, b = layers.Input((4,), name="a"), layers.Input((4,), name="b")
    merged = layers.add([base(a), base(b)])
    reg = layers.Dense(2, name="reg", kernel_regularizer=regularizers.L1(0.02))(merged)
    cls = layers.Dense(3, activation="softmax", name="cls",
                       activity_regularizer=regularizers.L2(0.5) if cls_activity else None)(merged)
    model = Model([a, b], [reg, cls])
    model.compile("sgd", loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                  loss_weights={"reg": 1.0, "cls": 0.5})
    return model, base


def test_penalties_with_several_outputs_and_a_shared_nested_model():
    """Each call of a shared layer adds its activity penalty, each weight's penalty counts once,
    the penalties join the total loss but no output's loss, an output with an activity
    regularizer is not fused with its crossentropy, and the gradients of all of it are right."""
    from test_gradients import numeric_grad
    minidl.set_backend(NumpyBackend(dtype="float64"))
    try:
        model, base = _shared_two_head_model()
        assert [h.fused for h in model._heads] == [False, False]
        assert _shared_two_head_model(cls_activity=False)[0]._heads[1].fused
        rng = np.random.default_rng(9)
        # float32 values, as the data checks make them; the reference below runs in float64
        xs = [rng.normal(size=(5, 4)).astype(np.float32).astype(np.float64) for _ in range(2)]
        ys = [rng.normal(size=(5, 2)).astype(np.float32).astype(np.float64), rng.integers(0, 3, 5)]
        k, kb, r, rb, c, cb = model.get_weights()
        ha, hb = np.tanh(xs[0] @ k + kb), np.tanh(xs[1] @ k + kb)
        m = ha + hb
        logits = m @ c + cb
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        reg_loss = np.mean((m @ r + rb - ys[0]) ** 2)
        cls_loss = np.mean(-np.log(p[np.arange(5), ys[1]]))
        act = regularizers.L1L2(0.05, 0.2)
        penalty = (0.1 * np.sum(k ** 2) + 0.02 * np.abs(r).sum()
                   + (act(ha) + act(hb) + 0.5 * np.sum(p ** 2)) / 5)
        logs = model.evaluate(xs, ys, verbose=0, return_dict=True)
        assert logs["reg_loss"] == pytest.approx(reg_loss, rel=1e-9)
        assert logs["cls_loss"] == pytest.approx(cls_loss, rel=1e-9)
        assert logs["loss"] == pytest.approx(reg_loss + 0.5 * cls_loss + penalty, rel=1e-9)

        def loss():
            model.reset_metrics()
            model._test_step(xs, ys)
            return model._metric_values()["loss"]

        model._gradients(xs, ys)
        for layer in (base.layers[-1], model.get_layer("reg"), model.get_layer("cls")):
            analytic = np.array(layer.kernel.grad)
            idx, num = numeric_grad(loss, layer.kernel.value, rng, count=10)
            np.testing.assert_allclose(analytic.reshape(-1)[idx], num, rtol=1e-6, atol=1e-9)
    finally:
        minidl.set_backend("numpy")


def test_constraints_and_penalties_of_a_nested_model_train(active_backend):
    """fit on a two-output model: the constraint of a nested layer holds after the steps and
    the logged loss (with its penalties) goes down."""
    from minidl.models import Model
    inner_in = layers.Input((4,))
    inner = layers.Dense(3, kernel_constraint="non_neg", activity_regularizer=regularizers.L2(0.01))
    base = Model(inner_in, inner(inner_in))
    x = layers.Input((4,))
    h = base(x)
    model = Model(x, [layers.Dense(2, name="u")(h), layers.Dense(1, name="v")(h)])
    model.compile(optimizers.SGD(0.05), loss=["mse", "mse"])
    rng = np.random.default_rng(10)
    data = rng.normal(size=(32, 4)).astype(np.float32)
    targets = [rng.normal(size=(32, 2)).astype(np.float32), rng.normal(size=(32, 1)).astype(np.float32)]
    history = model.fit(data, targets, epochs=3, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.get_weights()[0].min() >= 0.0
