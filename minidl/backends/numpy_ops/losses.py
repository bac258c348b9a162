"""The losses section on the numpy backend: losses and their gradients, written for numerical
stability rather than speed (the reference of the other backends). The contract
(minidl/backends/contract/losses.py) checked every shape.

Targets are int32 class indices (N,) ("sparse") or float (N, K) ("dense"); every loss
works on the last axis of its (N, K) inputs and writes one value per sample into loss (N,).
The row losses of Keras 3 (kinds in ROW_LOSSES) follow keras/src/losses/losses.py (epsilon 1e-7
as Keras's): most are the mean over the last axis of a function of one prediction and its
target; the Kullback-Leibler divergence sums instead, the categorical hinge and the cosine
similarity look at the whole row.
"""

import numpy as np

from ..checks import is_sparse
from ..contract.losses import ROW_LOSSES

# Keras' backend.epsilon(): probabilities are clipped to [EPSILON, 1 - EPSILON]
EPSILON = 1e-7


def check_class_range(op, targets, classes):
    """Sparse targets must be class indices in [0, classes): a check of the values, which the
    contract leaves to the kernels (the cpu ones return a status)."""
    if targets.size and (targets.min() < 0 or targets.max() >= classes):
        raise ValueError(f"{op}: sparse targets must lie in [0, {classes}), "
                         f"got values in [{targets.min()}, {targets.max()}]")


def one_hot(targets, classes, dtype):
    """(N, K) one-hot rows for sparse int targets (N,)."""
    dense = np.zeros((targets.shape[0], classes), dtype=dtype)
    dense[np.arange(targets.shape[0]), targets] = 1
    return dense


def dense_targets(targets, scores):
    """Targets as an (N, K) float array of the scores' dtype."""
    if is_sparse(targets):
        return one_hot(targets, scores.shape[-1], scores.dtype)
    return targets


def stable_sigmoid(x):
    """1 / (1 + exp(-x)) without overflow warnings for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def softmax(x):
    """Softmax along the last axis, shifted by the row maximum so exp never overflows."""
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _clipped(probs):
    """probs clipped to [EPSILON, 1 - EPSILON] and the mask where the clip left them unchanged."""
    clipped = np.clip(probs, EPSILON, 1 - EPSILON)
    return clipped, clipped == probs


_LOG2 = np.log(2.0)


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
    grad = _gradient(kind, pred, targets, delta)
    if kind in ROW_LOSSES_MEAN:
        grad = grad / pred.shape[-1]
    dpred[...] = grad * scale


# the kinds whose per-row value is the mean of per-element values
ROW_LOSSES_MEAN = tuple(k for k in ROW_LOSSES if k not in ("kl_divergence", "categorical_hinge",
                                                            "cosine_similarity"))


class NumpyLossOps:
    """The losses section of NumpyBackend: the contract (contract/losses.py) checked every shape
    and says whether the targets are sparse."""

    def _softmax_cross_entropy_forward(self, probs, loss, logits, targets, sparse):
        shifted = logits - logits.max(axis=-1, keepdims=True)
        log_sum_exp = np.log(np.exp(shifted).sum(axis=-1))         # of the shifted logits, (N,)
        if sparse:
            check_class_range("softmax_cross_entropy_forward", targets, logits.shape[1])
            # -log softmax[t] = logsumexp - logit[t]: never takes log(0)
            per_sample = log_sum_exp - shifted[np.arange(logits.shape[0]), targets]
        else:
            per_sample = (targets * (log_sum_exp[:, None] - shifted)).sum(axis=-1)
        probs[...] = np.exp(shifted - log_sum_exp[:, None])
        loss[...] = per_sample

    def _softmax_cross_entropy_backward(self, dlogits, probs, targets, scale, sparse):
        if sparse:
            check_class_range("softmax_cross_entropy_backward", targets, probs.shape[1])
        dlogits[...] = (probs - dense_targets(targets, probs)) * scale

    def _sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        # max(x, 0) - x t + log(1 + exp(-|x|)) == -(t log sigmoid(x) + (1-t) log(1 - sigmoid(x)))
        per_element = (np.maximum(logits, 0) - logits * targets
                       + np.log1p(np.exp(-np.abs(logits))))
        probs[...] = stable_sigmoid(logits)
        loss[...] = per_element.mean(axis=-1)

    def _sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        dlogits[...] = (probs - targets) * (scale / probs.shape[-1])

    def _cross_entropy_forward(self, loss, probs, targets, binary, sparse):
        p, _ = _clipped(probs)
        if binary:
            loss[...] = (-(targets * np.log(p) + (1 - targets) * np.log(1 - p))).mean(axis=-1)
        elif sparse:
            check_class_range("cross_entropy_forward", targets, probs.shape[1])
            loss[...] = -np.log(p[np.arange(probs.shape[0]), targets])
        else:
            loss[...] = -(targets * np.log(p)).sum(axis=-1)

    def _cross_entropy_backward(self, dprobs, probs, targets, binary, scale, sparse):
        p, unclipped = _clipped(probs)
        if binary:
            grad = (-(targets / p) + (1 - targets) / (1 - p)) * (scale / probs.shape[-1])
        else:
            if sparse:
                check_class_range("cross_entropy_backward", targets, probs.shape[1])
            grad = -dense_targets(targets, probs) / p * scale
        dprobs[...] = np.where(unclipped, grad, 0)

    def _mean_squared_error_forward(self, loss, pred, targets):
        loss[...] = ((pred - targets) ** 2).mean(axis=-1)

    def _mean_squared_error_backward(self, dpred, pred, targets, scale):
        dpred[...] = (pred - targets) * (2 * scale / pred.shape[-1])

    def _row_loss_forward(self, loss, pred, targets, kind, delta):
        row_loss_forward(loss, pred, targets, kind, delta)

    def _row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        row_loss_backward(dpred, pred, targets, kind, delta, scale)
