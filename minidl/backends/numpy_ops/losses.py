"""Losses and their gradients, written for numerical stability rather than speed.

Targets are int32 class indices (N,) ("sparse") or float (N, K) ("dense"); every loss
works on the last axis of its (N, K) inputs and writes one value per sample into loss (N,).
"""

import numpy as np

from ..checks import check_shape, is_sparse

# Keras' backend.epsilon(): probabilities are clipped to [EPSILON, 1 - EPSILON]
EPSILON = 1e-7


def check_targets(op, targets, scores):
    """Check targets against scores (N, K); returns True when they are sparse class indices."""
    if scores.ndim != 2:
        raise ValueError(f"{op}: expects 2-D (N, K) scores, got shape {tuple(scores.shape)}")
    rows, classes = scores.shape
    if is_sparse(targets):
        check_shape(op, "targets (sparse)", targets, (rows,))
        if rows and (targets.min() < 0 or targets.max() >= classes):
            raise ValueError(f"{op}: sparse targets must lie in [0, {classes}), "
                             f"got values in [{targets.min()}, {targets.max()}]")
        return True
    check_shape(op, "targets (dense)", targets, scores.shape)
    return False


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


def softmax_cross_entropy_forward(probs, loss, logits, targets):
    op = "softmax_cross_entropy_forward"
    sparse = check_targets(op, targets, logits)
    check_shape(op, "probs", probs, logits.shape)
    check_shape(op, "loss", loss, logits.shape[:1])
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_sum_exp = np.log(np.exp(shifted).sum(axis=-1))         # of the shifted logits, (N,)
    if sparse:
        # -log softmax[t] = logsumexp - logit[t]: never takes log(0)
        per_sample = log_sum_exp - shifted[np.arange(logits.shape[0]), targets]
    else:
        per_sample = (targets * (log_sum_exp[:, None] - shifted)).sum(axis=-1)
    probs[...] = np.exp(shifted - log_sum_exp[:, None])
    loss[...] = per_sample


def softmax_cross_entropy_backward(dlogits, probs, targets, scale):
    op = "softmax_cross_entropy_backward"
    check_targets(op, targets, probs)
    check_shape(op, "dlogits", dlogits, probs.shape)
    dlogits[...] = (probs - dense_targets(targets, probs)) * scale


def sigmoid_cross_entropy_forward(probs, loss, logits, targets):
    op = "sigmoid_cross_entropy_forward"
    check_shape(op, "targets", targets, logits.shape)
    check_shape(op, "probs", probs, logits.shape)
    check_shape(op, "loss", loss, logits.shape[:-1])
    # max(x, 0) - x t + log(1 + exp(-|x|)) == -(t log sigmoid(x) + (1-t) log(1 - sigmoid(x)))
    per_element = (np.maximum(logits, 0) - logits * targets
                   + np.log1p(np.exp(-np.abs(logits))))
    probs[...] = stable_sigmoid(logits)
    loss[...] = per_element.mean(axis=-1)


def sigmoid_cross_entropy_backward(dlogits, probs, targets, scale):
    op = "sigmoid_cross_entropy_backward"
    check_shape(op, "targets", targets, probs.shape)
    check_shape(op, "dlogits", dlogits, probs.shape)
    dlogits[...] = (probs - targets) * (scale / probs.shape[-1])


def _clipped(probs):
    """probs clipped to [EPSILON, 1 - EPSILON] and the mask where the clip left them unchanged."""
    clipped = np.clip(probs, EPSILON, 1 - EPSILON)
    return clipped, clipped == probs


def cross_entropy_forward(loss, probs, targets, binary):
    op = "cross_entropy_forward"
    p, _ = _clipped(probs)
    if binary:
        check_shape(op, "targets", targets, probs.shape)
        check_shape(op, "loss", loss, probs.shape[:-1])
        loss[...] = (-(targets * np.log(p) + (1 - targets) * np.log(1 - p))).mean(axis=-1)
        return
    sparse = check_targets(op, targets, probs)
    check_shape(op, "loss", loss, probs.shape[:1])
    if sparse:
        loss[...] = -np.log(p[np.arange(probs.shape[0]), targets])
    else:
        loss[...] = -(targets * np.log(p)).sum(axis=-1)


def cross_entropy_backward(dprobs, probs, targets, binary, scale):
    op = "cross_entropy_backward"
    check_shape(op, "dprobs", dprobs, probs.shape)
    p, unclipped = _clipped(probs)
    if binary:
        check_shape(op, "targets", targets, probs.shape)
        grad = (-(targets / p) + (1 - targets) / (1 - p)) * (scale / probs.shape[-1])
    else:
        check_targets(op, targets, probs)
        grad = -dense_targets(targets, probs) / p * scale
    dprobs[...] = np.where(unclipped, grad, 0)


def mean_squared_error_forward(loss, pred, targets):
    op = "mean_squared_error_forward"
    check_shape(op, "targets", targets, pred.shape)
    check_shape(op, "loss", loss, pred.shape[:-1])
    loss[...] = ((pred - targets) ** 2).mean(axis=-1)


def mean_squared_error_backward(dpred, pred, targets, scale):
    op = "mean_squared_error_backward"
    check_shape(op, "targets", targets, pred.shape)
    check_shape(op, "dpred", dpred, pred.shape)
    dpred[...] = (pred - targets) * (2 * scale / pred.shape[-1])
