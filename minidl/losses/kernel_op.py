"""A built-in loss called directly, loss(y_true, y_pred), as one differentiable op on the
backend's fused loss kernels: the kernels model.fit runs, not a second formula.

The op reads y_pred (N, ..., K) as rows (R, K), runs the loss's forward kernel into per-row
values (R,) and records, while a GradientTape records, the backward kernel as its gradient
rule: dpred = backward(scale=1) * g, g the gradient arriving for each row. Targets are
constants (no gradient flows to y_true, as none does in fit).
"""

import math

from .. import ops
from ..ops.core import as_tensor, empty_like_shape, record


def as_prediction(y_pred):
    """y_pred as a float32 Tensor of rank >= 1 (uploaded to the current backend if a host array)."""
    pred = ops.cast(as_tensor(y_pred), "float32")
    if not pred.shape:
        raise ValueError("losses: y_pred must have at least one axis (the classes or outputs), "
                         "got a scalar")
    return pred


def _target_tensor(y_true, pred, dtype):
    t = y_true if ops.is_tensor(y_true) else ops.convert_to_tensor(y_true, backend=pred.backend)
    return ops.stop_gradient(ops.cast(t, dtype))


def dense_targets(y_true, pred, name):
    """y_true as float32 targets of pred's shape: Keras squeezes or expands a trailing axis
    of size 1, and targets that broadcast to pred's shape are broadcast."""
    t = _target_tensor(y_true, pred, "float32")
    if len(t.shape) == len(pred.shape) - 1 and pred.shape[-1] == 1:
        t = ops.expand_dims(t, -1)
    elif len(pred.shape) == len(t.shape) - 1 and t.shape and t.shape[-1] == 1:
        t = ops.squeeze(t, -1)
    if t.shape != pred.shape:
        try:
            t = ops.broadcast_to(t, pred.shape)
        except ValueError:
            raise ValueError(f"losses.{name}: y_true of shape {t.shape} does not match y_pred of "
                             f"shape {pred.shape}") from None
    return t


def sparse_labels(y_true, pred, name):
    """y_true as int32 class labels, one per position of pred: shaped pred.shape[:-1]
    (labels of shape pred.shape[:-1] + (1,) lose their last axis)."""
    t = _target_tensor(y_true, pred, "int32")
    positions = pred.shape[:-1]
    if t.shape == positions + (1,):
        t = ops.squeeze(t, -1)
    if t.shape != positions:
        raise ValueError(f"losses.{name}: expects integer class labels of shape {positions} or "
                         f"{positions + (1,)} for y_pred of shape {pred.shape}, got {t.shape}")
    return t


def per_sample_losses(loss, y_true, y_pred):
    """The per-sample (per-position) values (N, ...) of built-in `loss` for y_pred (N, ..., K),
    computed by the kernels a linear output gets in fit (from_logits chooses the fused
    softmax / sigmoid ones)."""
    pred = as_prediction(y_pred)
    kernel, _ = loss.kernel_for("linear")
    targets = loss.direct_targets(y_true, pred)
    pred = loss.direct_pred(pred, kernel)
    b, classes = pred.backend, pred.shape[-1]
    rows = math.prod(pred.shape[:-1])
    flat = ops.reshape(pred, (rows, classes))
    flat_targets = ops.reshape(targets, (rows,) + targets.shape[len(pred.shape) - 1:])
    values = empty_like_shape(b, (rows,))
    probs = empty_like_shape(b, (rows, classes)).value if kernel in ("softmax_ce", "sigmoid_ce") else None
    loss.run_kernel(b, kernel, values.value, flat.value, flat_targets.value, probs)

    def rule(g):
        dflat = empty_like_shape(b, (rows, classes))
        loss.run_kernel_backward(b, kernel, dflat.value, flat.value, flat_targets.value, probs, 1.0)
        return (dflat * ops.reshape(g, (rows, 1)),)
    return ops.reshape(record(values, (flat,), rule), pred.shape[:-1])
