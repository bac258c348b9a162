"""The Keras loss functions as functions of (y_true, y_pred) written with minidl.ops, as Keras 2
scripts call them (losses.categorical_crossentropy(y_true, y_pred)) and as parts of losses of
your own. Each returns one value per sample (the mean over the last axis where Keras takes
one). compile(loss=losses.categorical_crossentropy) runs the fused built-in kernel instead.
"""

from . import ops


def categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return ops.categorical_crossentropy(y_true, y_pred, from_logits, axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return ops.sparse_categorical_crossentropy(y_true, y_pred, from_logits, axis)


def binary_crossentropy(y_true, y_pred, from_logits=False):
    return ops.mean(ops.binary_crossentropy(y_true, y_pred, from_logits), axis=-1)


def mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    return ops.mean(ops.abs(y_pred - y_true), axis=-1)


def _hinge_labels(y_true):
    """0/1 labels become -1/1, as Keras's hinge losses convert them; other labels stay. Written
    without a branch (is_binary is 1.0 or 0.0) so that nothing leaves the device."""
    binary = ops.logical_or(ops.equal(y_true, 0.0), ops.equal(y_true, 1.0))
    is_binary = ops.min(ops.cast(binary, "float32"))
    return y_true + is_binary * (y_true - 1.0)


def hinge(y_true, y_pred):
    return ops.mean(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    error = ops.abs(y_pred - y_true)
    quadratic = ops.minimum(error, delta)
    return ops.mean(0.5 * quadratic * quadratic + delta * (error - quadratic), axis=-1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

FUNCTIONS = {f.__name__: f for f in (categorical_crossentropy, sparse_categorical_crossentropy,
                                     binary_crossentropy, mean_squared_error, mean_absolute_error,
                                     hinge, huber)}

