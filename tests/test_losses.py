"""Keras 3's losses beyond the crossentropies and MSE, and label smoothing: values against the
formulas of keras/src/losses/losses.py, float64 gradient checks of the loss as the model runs
it (forward/backward through the backend), names, configs, functions and training."""

import numpy as np
import pytest

import minidl
from minidl import layers, losses, optimizers
from minidl.backends.numpy_backend import NumpyBackend

from _numeric import central_differences
from minidl.models import Sequential

EPS = 1e-7


def keras_formula(kind, t, p, delta=1.0):
    """The per-sample values, written out as Keras's functions (numpy, float64)."""
    if kind == "mean_absolute_error":
        return np.mean(np.abs(t - p), axis=-1)
    if kind == "mean_absolute_percentage_error":
        return 100 * np.mean(np.abs((t - p) / np.maximum(np.abs(t), EPS)), axis=-1)
    if kind == "mean_squared_logarithmic_error":
        return np.mean((np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(t, EPS) + 1)) ** 2, axis=-1)
    if kind == "huber":
        e = p - t
        return np.mean(np.where(np.abs(e) <= delta, 0.5 * e * e, delta * np.abs(e) - 0.5 * delta ** 2), axis=-1)
    if kind == "log_cosh":
        return np.mean(np.log(np.cosh(p - t)), axis=-1)
    if kind == "poisson":
        return np.mean(p - t * np.log(p + EPS), axis=-1)
    if kind == "kl_divergence":
        tc, pc = np.clip(t, EPS, 1), np.clip(p, EPS, 1)
        return np.sum(tc * np.log(tc / pc), axis=-1)
    if kind in ("hinge", "squared_hinge"):
        t = 2 * t - 1 if np.all((t == 0) | (t == 1)) else t
        h = np.maximum(1 - t * p, 0)
        return np.mean(h if kind == "hinge" else h * h, axis=-1)
    if kind == "categorical_hinge":
        return np.maximum(np.max((1 - t) * p, axis=-1) - np.sum(t * p, axis=-1) + 1, 0)
    nt = t / np.maximum(np.linalg.norm(t, axis=-1, keepdims=True), EPS)
    npred = p / np.maximum(np.linalg.norm(p, axis=-1, keepdims=True), EPS)
    return -np.sum(nt * npred, axis=-1)


LOSSES = [  # (class, function, kind, string names)
    (losses.MeanAbsoluteError, losses.mean_absolute_error, "mean_absolute_error", ("mae",)),
    (losses.MeanAbsolutePercentageError, losses.mean_absolute_percentage_error,
     "mean_absolute_percentage_error", ("mape",)),
    (losses.MeanSquaredLogarithmicError, losses.mean_squared_logarithmic_error,
     "mean_squared_logarithmic_error", ("msle",)),
    (losses.Huber, losses.huber, "huber", ("huber", "huber_loss")),
    (losses.LogCosh, losses.log_cosh, "log_cosh", ("log_cosh", "logcosh")),
    (losses.Poisson, losses.poisson, "poisson", ("poisson",)),
    (losses.KLDivergence, losses.kl_divergence, "kl_divergence", ("kld", "kullback_leibler_divergence")),
    (losses.Hinge, losses.hinge, "hinge", ("hinge",)),
    (losses.SquaredHinge, losses.squared_hinge, "squared_hinge", ("squared_hinge",)),
    (losses.CategoricalHinge, losses.categorical_hinge, "categorical_hinge", ("categorical_hinge",)),
    (losses.CosineSimilarity, losses.cosine_similarity, "cosine_similarity", ("cosine_similarity",)),
]
IDS = [kind for _, _, kind, _ in LOSSES]


def sample(kind, rng, shape):
    """(y_true, y_pred) in the loss's domain, away from its kinks (finite differences need that)."""
    p = rng.normal(size=shape)
    t = rng.normal(size=shape)
    if kind in ("mean_squared_logarithmic_error", "poisson"):
        p, t = np.abs(p) + 0.2, np.abs(t)
    elif kind == "kl_divergence":
        p, t = rng.uniform(0.05, 0.95, shape), rng.uniform(0.05, 0.95, shape)
    elif kind in ("hinge", "squared_hinge"):
        t = (t > 0).astype(float)            # 0/1 labels: converted to -1/1 as Keras does
    elif kind == "categorical_hinge":
        t = np.eye(shape[-1])[rng.integers(0, shape[-1], shape[:-1])]
    return t, p


@pytest.mark.parametrize("cls,fn,kind,names", LOSSES, ids=IDS)
def test_function_form_matches_keras_formula(cls, fn, kind, names):
    rng = np.random.default_rng(0)
    t, p = sample(kind, rng, (6, 5))
    got = np.asarray(fn(t, p.astype(np.float32)))   # a numpy array or a minidl.ops tensor
    assert got.shape == (6,) and got.dtype == np.float32
    np.testing.assert_allclose(got, keras_formula(kind, t, p), rtol=1e-5, atol=1e-6)
    t3, p3 = sample(kind, rng, (2, 3, 4))                  # rank 3: per position, like Keras
    assert np.asarray(fn(t3, p3)).shape == (2, 3)
    np.testing.assert_allclose(cls()(t, p), np.mean(keras_formula(kind, t, p)), rtol=1e-5)


def test_huber_delta_and_keras_examples():
    t, p = np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.6, 0.4], [0.4, 0.6]])
    np.testing.assert_allclose(losses.huber(t, p), [0.18, 0.13], rtol=1e-6)   # Keras docs: 0.155 mean
    np.testing.assert_allclose(losses.huber(t, 3 * p, delta=0.5), keras_formula("huber", t, 3 * p, 0.5))
    np.testing.assert_allclose(np.mean(losses.log_cosh([[0.0, 1.0], [0.0, 0.0]], np.array([[1.0, 1.0], [0.0, 0.0]]))),
                               0.108, atol=1e-3)
    with pytest.raises(ValueError, match="delta"):
        losses.Huber(delta=-1.0)
    with pytest.raises(ValueError, match="does not match|could not be broadcast"):
        losses.huber(np.zeros((2, 3)), np.zeros((2, 4)))


@pytest.mark.parametrize("cls,fn,kind,names", LOSSES, ids=IDS)
def test_names_and_config_round_trip(cls, fn, kind, names):
    for name in names + (kind,):            # every Keras spelling, any case
        assert type(losses.get(name)) is cls and type(losses.get(name.upper())) is cls
    loss = cls(delta=0.7) if cls is losses.Huber else cls()
    again = losses.get(losses.serialize(loss))
    assert type(again) is cls and again.get_config() == loss.get_config()


@pytest.mark.parametrize("cls,fn,kind,names", LOSSES, ids=IDS)
def test_gradient_of_the_backend_ops_float64(cls, fn, kind, names):
    """The loss the model minimizes, sum(loss) * scale, against central differences."""
    backend = NumpyBackend(dtype="float64")
    rng = np.random.default_rng(1)
    t, p = sample(kind, rng, (4, 6))
    delta = 0.8
    loss = np.empty(4)

    def f():
        backend.row_loss_forward(loss, p, t if kind not in ("hinge", "squared_hinge") else 2 * t - 1, kind, delta)
        return float(loss.sum()) * 0.25

    grad = np.empty_like(p)
    backend.row_loss_backward(grad, p, t if kind not in ("hinge", "squared_hinge") else 2 * t - 1, kind, delta,
                              0.25)
    numeric = central_differences(f, p)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    assert np.abs(grad).max() > 0


# ------------------------------------------------------------------ label smoothing
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_label_smoothing_as_keras(smoothing):
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 4, size=6)
    onehot = np.eye(4, dtype=np.float32)[labels]
    cce = losses.CategoricalCrossentropy(label_smoothing=smoothing)
    want = onehot * (1 - smoothing) + smoothing / 4
    np.testing.assert_allclose(cce.prepare_targets(onehot, (4,)), want, rtol=1e-6)
    sparse = losses.SparseCategoricalCrossentropy(label_smoothing=smoothing)
    got = sparse.prepare_targets(labels, (4,))
    np.testing.assert_allclose(got, want if smoothing else labels, rtol=1e-6)
    assert sparse.sparse == (smoothing == 0.0)
    binary = rng.integers(0, 2, size=(6, 3)).astype(np.float32)
    bce = losses.BinaryCrossentropy(label_smoothing=smoothing)
    np.testing.assert_allclose(bce.prepare_targets(binary, (3,)), binary * (1 - smoothing) + 0.5 * smoothing)
    with pytest.raises(ValueError, match="label_smoothing"):
        losses.CategoricalCrossentropy(label_smoothing=1.5)


def test_label_smoothing_on_the_fused_softmax_path(active_backend):
    """The smoothed loss the model reports is Keras's formula on its own predictions."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 5)).astype(np.float32)
    labels = rng.integers(0, 3, size=32)
    model = Sequential([layers.Input((5,)), layers.Dense(3, activation="softmax")])
    for loss, y in ((losses.SparseCategoricalCrossentropy(label_smoothing=0.1), labels),
                    (losses.CategoricalCrossentropy(label_smoothing=0.1), np.eye(3)[labels])):
        model.compile(optimizer="sgd", loss=loss)
        probs = model.predict(x, verbose=0).astype(np.float64)
        smoothed = np.eye(3)[labels] * 0.9 + 0.1 / 3
        want = np.mean(-np.sum(smoothed * np.log(probs), axis=-1))
        assert model.evaluate(x, y, verbose=0) == pytest.approx(want, rel=1e-4)
    model.compile(optimizer="sgd", loss=losses.BinaryCrossentropy(label_smoothing=0.2))
    yb = (rng.random((32, 3)) > 0.5).astype(np.float32)
    p = np.clip(model.predict(x, verbose=0).astype(np.float64), 1e-7, 1 - 1e-7)
    tb = yb * 0.8 + 0.1
    want = np.mean(-(tb * np.log(p) + (1 - tb) * np.log(1 - p)))
    assert model.evaluate(x, yb, verbose=0) == pytest.approx(want, rel=1e-3)


# ------------------------------------------------------------------ in a model
@pytest.mark.parametrize("cls,fn,kind,names", LOSSES, ids=IDS)
def test_model_reports_and_minimizes_each_loss(active_backend, cls, fn, kind, names):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    t, _ = sample(kind, rng, (64, 3))
    activation = "softmax" if kind in ("kl_divergence", "poisson") else "linear"
    activation = "sigmoid" if kind == "mean_squared_logarithmic_error" else activation
    model = Sequential([layers.Input((4,)), layers.Dense(8, activation="tanh"), layers.Dense(3, activation=activation)])
    model.compile(optimizer=optimizers.Adam(0.02), loss=names[0])
    pred = model.predict(x, verbose=0).astype(np.float64)
    assert model.evaluate(x, t, verbose=0) == pytest.approx(np.mean(keras_formula(kind, t, pred)), rel=1e-4,
                                                             abs=1e-6)
    history = model.fit(x, t, epochs=5, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_rank_3_outputs_average_over_positions(active_backend):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(8, 3, 4)).astype(np.float32)
    t = rng.normal(size=(8, 3, 2)).astype(np.float32)
    model = Sequential([layers.Input((3, 4)), layers.Dense(2)])
    model.compile(optimizer="sgd", loss=losses.Huber(delta=0.5))
    pred = model.predict(x, verbose=0).astype(np.float64)
    assert model.evaluate(x, t, verbose=0) == pytest.approx(np.mean(keras_formula("huber", t, pred, 0.5)),
                                                             rel=1e-5)


def test_direct_call_applies_label_smoothing(active_backend):
    # loss(y_true, y_pred) smooths as fit does; torch's cross_entropy(label_smoothing=0.2) and
    # binary_cross_entropy_with_logits on 0.8 y + 0.1 give 2.93997 and 0.927224 on these draws
    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(8, 10)).astype(np.float32), rng.integers(0, 10, 8)
    one_hot = np.eye(10, dtype=np.float32)[labels]
    dense = losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)(one_hot, logits)
    sparse = losses.SparseCategoricalCrossentropy(from_logits=True, label_smoothing=0.2)(labels, logits)
    assert float(np.asarray(dense)) == pytest.approx(2.9399695, rel=1e-5)
    assert float(np.asarray(sparse)) == pytest.approx(2.9399695, rel=1e-5)
    y, x = rng.integers(0, 2, (8, 3)).astype(np.float32), rng.normal(size=(8, 3)).astype(np.float32)
    binary = losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2)(y, x)
    assert float(np.asarray(binary)) == pytest.approx(0.9272237, rel=1e-5)
