"""The Keras loss functions as functions of (y_true, y_pred) written with minidl.ops, as Keras 2
scripts call them (losses.categorical_crossentropy(y_true, y_pred)) and as parts of losses of
your own. Each returns one value per sample (the mean over the last axis where Keras takes
one). compile(loss=losses.categorical_crossentropy) runs the fused built-in kernel instead.
"""

import math

import numpy as np

from . import ops


EPSILON = 1e-7   # Keras's backend.epsilon()


def _pair(y_true, y_pred):
    """y_pred as a float tensor and y_true cast to it, of the same rank (Keras squeezes or
    expands a trailing axis of size 1)."""
    y_pred = ops.cast(ops.convert_to_tensor(y_pred) if not ops.is_tensor(y_pred) else y_pred, "float32")
    y_true = ops.cast(ops.convert_to_tensor(y_true, backend=y_pred.backend) if not ops.is_tensor(y_true)
                      else y_true, "float32")
    if len(y_true.shape) == len(y_pred.shape) - 1 and y_pred.shape and y_pred.shape[-1] == 1:
        y_true = ops.expand_dims(y_true, -1)
    elif len(y_pred.shape) == len(y_true.shape) - 1 and y_true.shape and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
    try:
        np.broadcast_shapes(y_true.shape, y_pred.shape)
    except ValueError:
        raise ValueError(f"losses: y_true of shape {y_true.shape} does not match y_pred of shape "
                         f"{y_pred.shape}") from None
    return y_true, y_pred


def _smoothing(value, function):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"losses.{function}: label_smoothing must be a number in [0, 1], got {value!r}")
    return float(value)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    label_smoothing = _smoothing(label_smoothing, "categorical_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    return ops.categorical_crossentropy(y_true, y_pred, from_logits, axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Integer labels; with ignore_class, the positions labelled so get 0 (Keras's mask)."""
    if ignore_class is None:
        return ops.sparse_categorical_crossentropy(y_true, y_pred, from_logits, axis)
    labels = ops.cast(y_true, "float32")
    keep = ops.cast(ops.not_equal(labels, float(ignore_class)), "float32")
    values = ops.sparse_categorical_crossentropy(ops.cast(labels * keep, "int32"), y_pred, from_logits, axis)
    if len(keep.shape) == len(values.shape) + 1:
        keep = ops.squeeze(keep, -1)
    return values * keep


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    label_smoothing = _smoothing(label_smoothing, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return ops.mean(ops.binary_crossentropy(y_true, y_pred, from_logits), axis=axis)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy times (1 - p_t)^gamma (Lin et al., 2017), p_t the probability of
    the true label; with apply_class_balancing, times alpha for positives and 1 - alpha for
    negatives. The mean over axis, as Keras."""
    y_true, y_pred = _pair(y_true, y_pred)
    label_smoothing = _smoothing(label_smoothing, "binary_focal_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = ops.sigmoid(y_pred)
    bce = ops.binary_crossentropy(y_true, y_pred)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = ops.power(1.0 - p_t, float(gamma)) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return ops.mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """sum over axis of alpha (1 - p)^gamma (-t log p), p renormalized and clipped to
    [1e-7, 1 - 1e-7] as Keras."""
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_true, y_pred = _pair(y_true, y_pred)
    label_smoothing = _smoothing(label_smoothing, "categorical_focal_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    if from_logits:
        y_pred = ops.softmax(y_pred, axis=axis)
    output = ops.clip(y_pred / ops.sum(y_pred, axis=axis, keepdims=True), EPSILON, 1.0 - EPSILON)
    return ops.sum(alpha * ops.power(1.0 - output, float(gamma)) * (-y_true * ops.log(output)), axis=axis)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """(1 - p^q) / q, p the probability of the integer label (Zhang and Sabuncu, 2018)."""
    y_pred = ops.cast(ops.convert_to_tensor(y_pred) if not ops.is_tensor(y_pred) else y_pred, "float32")
    labels = ops.cast(y_true, "float32")
    if len(labels.shape) == len(y_pred.shape):
        labels = ops.squeeze(labels, -1)
    p = ops.sum(y_pred * ops.one_hot(labels, y_pred.shape[-1]), axis=-1)
    return (1.0 - ops.power(p, float(q))) / float(q)


def dice(y_true, y_pred, axis=None):
    """1 - 2 sum(t p) / (sum(t) + sum(p) + 1e-7) over axis (everything when None)."""
    y_true, y_pred = _pair(y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    return 1.0 - 2.0 * intersection / (ops.sum(y_true, axis=axis) + ops.sum(y_pred, axis=axis) + EPSILON)


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - tp / (tp + alpha fp + beta fn + 1e-7), tp = sum(t p), fp = sum((1 - p) t),
    fn = sum(p (1 - t)) over axis: Keras's formula, whose fp and fn are named from the
    targets' side."""
    y_true, y_pred = _pair(y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    fp = ops.sum((1.0 - y_pred) * y_true, axis=axis)
    fn = ops.sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + fp * alpha + fn * beta + EPSILON)


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return 100.0 * ops.mean(ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), EPSILON)), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    first = ops.log(ops.maximum(y_pred, EPSILON) + 1.0)
    second = ops.log(ops.maximum(y_true, EPSILON) + 1.0)
    return ops.mean(ops.square(first - second), axis=-1)


def log_cosh(y_true, y_pred):
    """mean(log(cosh(e))), as e + softplus(-2e) - log 2 (no overflow for large errors)."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    return ops.mean(error + ops.softplus(-2.0 * error) - math.log(2.0), axis=-1)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = ops.clip(y_true, EPSILON, 1.0)
    y_pred = ops.clip(y_pred, EPSILON, 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(y_pred - y_true * ops.log(y_pred + EPSILON), axis=-1)


def _hinge_labels(y_true):
    """0/1 labels become -1/1, as Keras's hinge losses convert them; other labels stay. Written
    without a branch (is_binary is 1.0 or 0.0) so that nothing leaves the device."""
    binary = ops.logical_or(ops.equal(y_true, 0.0), ops.equal(y_true, 1.0))
    is_binary = ops.min(ops.cast(binary, "float32"))
    return y_true + is_binary * (y_true - 1.0)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(ops.square(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    positive = ops.sum(y_true * y_pred, axis=-1)
    negative = ops.max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(negative - positive + 1.0, 0.0)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    error = ops.abs(y_pred - y_true)
    quadratic = ops.minimum(error, delta)
    return ops.mean(0.5 * quadratic * quadratic + delta * (error - quadratic), axis=-1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

FUNCTIONS = {f.__name__: f for f in (categorical_crossentropy, sparse_categorical_crossentropy,
                                     binary_crossentropy, mean_squared_error, mean_absolute_error,
                                     hinge, huber)}

# the functions of the row losses and the losses new in Keras 3 (losses.py names them)
KERAS3_FUNCTIONS = {f.__name__: f for f in (
    mean_absolute_percentage_error, mean_squared_logarithmic_error, log_cosh, kl_divergence, poisson,
    squared_hinge, categorical_hinge, binary_focal_crossentropy, categorical_focal_crossentropy,
    categorical_generalized_cross_entropy, dice, tversky)}

