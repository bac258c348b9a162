"""The losses of Keras 3 computed along the last axis of (N, K) rows, and their gradients:
the numpy reference of row_loss_forward / row_loss_backward (kinds in base.ROW_LOSSES).

Most are the mean over the last axis of a function of one prediction and its target; the
Kullback-Leibler divergence sums instead, the categorical hinge and the cosine similarity
look at the whole row. Formulas as keras/src/losses/losses.py (epsilon 1e-7 as Keras's)."""

import numpy as np

from ..base import ROW_LOSSES
from ..checks import check_shape

EPSILON = 1e-7
_LOG2 = np.log(2.0)


def _check(op, out, pred, targets, kind, out_shape):
    if kind not in ROW_LOSSES:
        raise ValueError(f"{op}: unknown loss kind {kind!r}; known: {', '.join(ROW_LOSSES)}")
    if pred.ndim != 2:
        raise ValueError(f"{op}: expects 2-D (N, K) predictions, got shape {tuple(pred.shape)}")
    check_shape(op, "targets", targets, pred.shape)
    check_shape(op, "out", out, out_shape)


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _norm(x):
    """The row norms (N, 1), floored at EPSILON (Keras's normalize)."""
    return np.maximum(np.sqrt(np.square(x).sum(axis=-1, keepdims=True)), EPSILON)


def _values(kind, p, t, delta):
    """Per-element values (N, K), or per-row values (N,) for the whole-row kinds."""
    e = p - t
    if kind == "mean_absolute_error":
        return np.abs(e)
    if kind == "mean_absolute_percentage_error":
        return 100.0 * np.abs(e) / np.maximum(np.abs(t), EPSILON)
    if kind == "mean_squared_logarithmic_error":
        return np.square(np.log(np.maximum(p, EPSILON) + 1) - np.log(np.maximum(t, EPSILON) + 1))
    if kind == "huber":
        a = np.abs(e)
        return np.where(a <= delta, 0.5 * np.square(e), delta * a - 0.5 * delta * delta)
    if kind == "log_cosh":
        return e + _softplus(-2.0 * e) - _LOG2
    if kind == "poisson":
        return p - t * np.log(p + EPSILON)
    if kind == "kl_divergence":
        tc, pc = np.clip(t, EPSILON, 1), np.clip(p, EPSILON, 1)
        return tc * np.log(tc / pc)
    if kind == "hinge":
        return np.maximum(1 - t * p, 0)
    if kind == "squared_hinge":
        return np.square(np.maximum(1 - t * p, 0))
    if kind == "categorical_hinge":
        return np.maximum(((1 - t) * p).max(axis=-1) - (t * p).sum(axis=-1) + 1, 0)
    return -((t / _norm(t)) * (p / _norm(p))).sum(axis=-1)   # cosine_similarity


def row_loss_forward(loss, pred, targets, kind, delta):
    _check("row_loss_forward", loss, pred, targets, kind, pred.shape[:1])
    values = _values(kind, pred, targets, delta)
    if values.ndim == 1:
        loss[...] = values
    elif kind == "kl_divergence":
        loss[...] = values.sum(axis=-1)
    else:
        loss[...] = values.mean(axis=-1)


def _gradient(kind, p, t, delta):
    """d(per-element value)/dp (N, K), or d(row value)/dp for the whole-row kinds."""
    e = p - t
    if kind == "mean_absolute_error":
        return np.sign(e)
    if kind == "mean_absolute_percentage_error":
        return 100.0 * np.sign(e) / np.maximum(np.abs(t), EPSILON)
    if kind == "mean_squared_logarithmic_error":
        d = np.log(np.maximum(p, EPSILON) + 1) - np.log(np.maximum(t, EPSILON) + 1)
        return np.where(p > EPSILON, 2 * d / (p + 1), 0)
    if kind == "huber":
        return np.where(np.abs(e) <= delta, e, delta * np.sign(e))
    if kind == "log_cosh":
        return np.tanh(e)
    if kind == "poisson":
        return 1 - t / (p + EPSILON)
    if kind == "kl_divergence":
        tc, pc = np.clip(t, EPSILON, 1), np.clip(p, EPSILON, 1)
        return np.where((p >= EPSILON) & (p <= 1), -tc / pc, 0)
    if kind == "hinge":
        return np.where(1 - t * p > 0, -t, 0)
    if kind == "squared_hinge":
        return -2 * t * np.maximum(1 - t * p, 0)
    if kind == "categorical_hinge":
        scores = (1 - t) * p
        j = scores.argmax(axis=-1)
        active = (scores.max(axis=-1) - (t * p).sum(axis=-1) + 1 > 0)[:, None]
        grad = -t.copy()
        grad[np.arange(p.shape[0]), j] += (1 - t)[np.arange(p.shape[0]), j]
        return np.where(active, grad, 0)
    norm_p = np.sqrt(np.square(p).sum(axis=-1, keepdims=True))
    a, b = t / _norm(t), p / _norm(p)
    cosine = (a * b).sum(axis=-1, keepdims=True)
    # above the floor the norm depends on p: d(-a.b)/dp = -(a - (a.b) b) / |p|
    return np.where(norm_p > EPSILON, -(a - cosine * b) / np.maximum(norm_p, EPSILON), -a / EPSILON)


def row_loss_backward(dpred, pred, targets, kind, delta, scale):
    _check("row_loss_backward", dpred, pred, targets, kind, pred.shape)
    grad = _gradient(kind, pred, targets, delta)
    if kind in ROW_LOSSES_MEAN:
        grad = grad / pred.shape[-1]
    dpred[...] = grad * scale


# the kinds whose per-row value is the mean of per-element values
ROW_LOSSES_MEAN = tuple(k for k in ROW_LOSSES if k not in ("kl_divergence", "categorical_hinge",
                                                            "cosine_similarity"))
