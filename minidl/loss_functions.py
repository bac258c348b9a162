"""The Keras loss functions as functions of (y_true, y_pred) written with minidl.ops, as Keras 2
scripts call them (losses.categorical_crossentropy(y_true, y_pred)) and as parts of losses of
your own. Each returns one value per sample (the mean over the last axis where Keras takes
one). compile(loss=losses.categorical_crossentropy) runs the fused built-in kernel instead.
"""

from . import ops

EPSILON = 1e-7   # Keras's clip of probabilities


def categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    y_true = ops.convert_to_tensor(y_true) if not ops.is_tensor(y_true) else y_true
    if from_logits:
        return -ops.sum(y_true * ops.log_softmax(y_pred, axis=axis), axis=axis)
    p = y_pred / ops.sum(y_pred, axis=axis, keepdims=True)
    return -ops.sum(y_true * ops.log(ops.clip(p, EPSILON, 1.0 - EPSILON)), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    classes = ops.shape(y_pred)[-1]
    labels = ops.cast(y_true, "int32")
    if len(ops.shape(labels)) == len(ops.shape(y_pred)):
        labels = ops.squeeze(labels, -1)
    return categorical_crossentropy(ops.one_hot(labels, classes), y_pred, from_logits, axis)


def binary_crossentropy(y_true, y_pred, from_logits=False):
    if from_logits:
        # the stable form max(z, 0) - z t + log(1 + exp(-|z|))
        z = y_pred
        values = ops.maximum(z, 0.0) - z * y_true + ops.log1p(ops.exp(-ops.abs(z)))
    else:
        p = ops.clip(y_pred, EPSILON, 1.0 - EPSILON)
        values = -(y_true * ops.log(p) + (1.0 - y_true) * ops.log(1.0 - p))
    return ops.mean(values, axis=-1)


def mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    return ops.mean(ops.abs(y_pred - y_true), axis=-1)


def hinge(y_true, y_pred):
    return ops.mean(ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    error = ops.abs(y_pred - y_true)
    quadratic = ops.minimum(error, delta)
    return ops.mean(0.5 * quadratic * quadratic + delta * (error - quadratic), axis=-1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

FUNCTIONS = {f.__name__: f for f in (categorical_crossentropy, sparse_categorical_crossentropy,
                                     binary_crossentropy, mean_squared_error, mean_absolute_error,
                                     hinge, huber)}

