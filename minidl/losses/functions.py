"""Keras's loss functions of (y_true, y_pred) for the losses that have a backend kernel, as
Keras 2 scripts call them (losses.categorical_crossentropy(y_true, y_pred)) and as parts of
losses and metrics of your own. Each returns one value per sample (per position) as a Tensor,
computed by the same fused kernels as the loss classes and model.fit (kernel_op.py), and
differentiable with respect to y_pred. The Keras 3 losses without a kernel are defined with
minidl.ops in composed.py."""

from .. import ops
from ..ops.core import as_tensor
from .crossentropy import BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy
from .row_losses import (CategoricalHinge, CosineSimilarity, Hinge, Huber, KLDivergence, LogCosh,
                         MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
                         MeanSquaredLogarithmicError, Poisson, SquaredHinge)


def _along_last(function, axis, y_true, y_pred):
    """y_true and y_pred with `axis` moved last (the kernels work along the last axis)."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise ValueError(f"losses.{function}: axis must be an int, got {axis!r}")
    pred = as_tensor(y_pred) if ops.is_tensor(y_pred) else ops.convert_to_tensor(y_pred)
    rank = len(pred.shape)
    if not -rank <= axis < rank:
        raise ValueError(f"losses.{function}: axis {axis} is out of range for y_pred of shape {pred.shape}")
    if axis % rank == rank - 1:
        return y_true, pred
    true = y_true if ops.is_tensor(y_true) else ops.convert_to_tensor(y_true, backend=pred.backend)
    if len(ops.shape(true)) == rank:
        true = ops.moveaxis(true, axis, -1)
    return true, ops.moveaxis(pred, axis, -1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _along_last("categorical_crossentropy", axis, y_true, y_pred)
    loss = CategoricalCrossentropy(from_logits=bool(from_logits), label_smoothing=label_smoothing)
    return loss._values(y_true, y_pred)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Integer labels; with ignore_class, the positions labelled so get 0 (Keras's mask)."""
    y_true, y_pred = _along_last("sparse_categorical_crossentropy", axis, y_true, y_pred)
    loss = SparseCategoricalCrossentropy(from_logits=bool(from_logits))
    if ignore_class is None:
        return loss._values(y_true, y_pred)
    pred = as_tensor(y_pred)
    labels = ops.cast(y_true if ops.is_tensor(y_true) else ops.convert_to_tensor(y_true, backend=pred.backend),
                      "float32")
    keep = ops.cast(ops.not_equal(labels, float(ignore_class)), "float32")
    values = loss._values(ops.cast(labels * keep, "int32"), pred)
    if len(keep.shape) == len(values.shape) + 1:
        keep = ops.squeeze(keep, -1)
    return values * keep


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _along_last("binary_crossentropy", axis, y_true, y_pred)
    return BinaryCrossentropy(from_logits=bool(from_logits), label_smoothing=label_smoothing)._values(y_true, y_pred)


def mean_squared_error(y_true, y_pred):
    return MeanSquaredError()._values(y_true, y_pred)


def mean_absolute_error(y_true, y_pred):
    return MeanAbsoluteError()._values(y_true, y_pred)


def mean_absolute_percentage_error(y_true, y_pred):
    return MeanAbsolutePercentageError()._values(y_true, y_pred)


def mean_squared_logarithmic_error(y_true, y_pred):
    return MeanSquaredLogarithmicError()._values(y_true, y_pred)


def log_cosh(y_true, y_pred):
    return LogCosh()._values(y_true, y_pred)


def kl_divergence(y_true, y_pred):
    return KLDivergence()._values(y_true, y_pred)


def poisson(y_true, y_pred):
    return Poisson()._values(y_true, y_pred)


def hinge(y_true, y_pred):
    """0/1 labels become -1/1, as Keras's hinge losses convert them."""
    return Hinge()._values(y_true, y_pred)


def squared_hinge(y_true, y_pred):
    return SquaredHinge()._values(y_true, y_pred)


def categorical_hinge(y_true, y_pred):
    return CategoricalHinge()._values(y_true, y_pred)


def huber(y_true, y_pred, delta=1.0):
    return Huber(delta)._values(y_true, y_pred)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred)) along axis (the metric's negative)."""
    y_true, y_pred = _along_last("cosine_similarity", axis, y_true, y_pred)
    return CosineSimilarity()._values(y_true, y_pred)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

# the function of each kernel loss by Keras's name
FUNCTIONS = {f.__name__: f for f in (
    categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy, mean_squared_error,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error, log_cosh, poisson,
    kl_divergence, hinge, squared_hinge, categorical_hinge, huber, cosine_similarity)}
