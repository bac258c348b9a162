"""Keras's CTC loss (Connectionist Temporal Classification) and its function form ctc.

y_true (B, L) holds integer labels padded with 0, the blank, at the end; y_pred (B, T, C)
holds logits. As Keras's, every sample's logit length is T and its label length is the
number of its non-zero labels. The loss is ops.ctc_loss, composed of differentiable ops, so
it trains on every backend with the gradient of automatic differentiation.

CTC scores a whole sample rather than each position of the output: its targets are (N, L)
for an output (N, T, C), and its per_sample flag tells the model's heads to feed it the
whole (N, T, C) batch and take one loss per sample (Loss.forward's per-sample path).
"""

import numpy as np

from .. import ops
from .base import Loss

MASK_INDEX = 0   # Keras's ctc: the blank class, also the padding of the labels


def ctc(y_true, y_pred):
    """The CTC loss of each sample (B,): y_true (B, L) integer labels (0, the blank, pads
    them at the end), y_pred (B, T, C) logits, not normalized by a softmax."""
    y_pred = ops.cast(ops.convert_to_tensor(y_pred) if not ops.is_tensor(y_pred) else y_pred, "float32")
    y_true = (ops.convert_to_tensor(y_true, backend=y_pred.backend) if not ops.is_tensor(y_true)
              else y_true)
    if len(y_true.shape) != 2:
        raise ValueError("losses.ctc: targets `y_true` are expected to be a tensor of shape "
                         f"`(batch_size, max_length)` in integer format, got y_true.shape={y_true.shape}")
    if len(y_pred.shape) != 3:
        raise ValueError("losses.ctc: logits `y_pred` are expected to be a tensor of shape "
                         f"`(batch_size, max_length, num_classes)`, got y_pred.shape={y_pred.shape}")
    batch, steps, classes = y_pred.shape
    if y_true.shape[0] != batch:
        raise ValueError(f"losses.ctc: y_true of shape {y_true.shape} and y_pred of shape {y_pred.shape} "
                         "have different batch sizes")
    labels = np.asarray(y_true.numpy())
    if labels.dtype.kind == "f" and not np.all(np.floor(labels) == labels):
        raise ValueError(f"losses.ctc: y_true must hold whole class labels, got dtype {labels.dtype} "
                         "with fractions")
    if labels.dtype.kind not in "biuf":
        raise TypeError(f"losses.ctc: y_true must hold integer labels, got dtype {labels.dtype}")
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(f"losses.ctc: y_true labels must be in [0, {classes - 1}] for y_pred of shape "
                         f"{y_pred.shape} ({classes} classes), got labels from {labels.min()} to {labels.max()}")
    labels = labels.astype(np.int32)
    label_length = np.count_nonzero(labels != MASK_INDEX, axis=-1).astype(np.int32)
    logit_length = np.full((batch,), steps, np.int32)
    return ops.ctc_loss(labels, y_pred, label_length, logit_length, mask_index=MASK_INDEX)


class CTC(Loss):
    """Keras's losses.CTC: the batch's CTC loss, reduced as `reduction` says. dtype: minidl's
    losses compute in float32 (None or "float32")."""

    per_sample = True

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        if dtype not in (None, "float32"):
            raise ValueError(f"CTC: dtype must be None or 'float32' (minidl's losses compute in "
                             f"float32), got {dtype!r}")
        super().__init__(name=name, reduction=reduction)

    def call(self, y_true, y_pred):
        return ctc(y_true, y_pred)

    # ------------------------------------------------------------ targets in fit
    def target_shape(self, batch, output_shape):
        """The labels padded with the blank to the output's T steps: (batch, T)."""
        return (batch, output_shape[0])

    @property
    def target_dtype(self):
        return "int32"

    def prepare_targets(self, y, output_shape, argument="y"):
        """Labels (N, L) of any L as (N, T) int32 for an output (T, C): each row's non-zero
        labels first, then 0 (the blank) only; at most T labels (more have no alignment)."""
        if len(output_shape) != 2:
            raise ValueError(f"{argument}: loss {self.name!r} needs a model output of shape (None, T, C) "
                             f"(logits per step), got (None, {', '.join(map(str, output_shape))})")
        steps, classes = output_shape
        y = np.asarray(y)
        if y.dtype.kind not in "biuf" or y.ndim != 2:
            raise ValueError(f"{argument}: loss {self.name!r} expects integer labels of shape (N, max_length) "
                             f"padded with 0 (the blank), got shape {y.shape} and dtype {y.dtype}")
        if y.dtype.kind == "f" and not np.all(np.floor(y) == y):
            raise ValueError(f"{argument}: loss {self.name!r} expects whole class labels, got fractions")
        if y.size and (y.min() < 0 or y.max() >= classes):
            raise ValueError(f"{argument}: loss {self.name!r} expects labels in [0, {classes - 1}] for an "
                             f"output of shape (None, {steps}, {classes}), got labels from {y.min()} to {y.max()}")
        if y.shape[1] > 1 and np.any((y[:, :-1] == MASK_INDEX) & (y[:, 1:] != MASK_INDEX)):
            raise ValueError(f"{argument}: loss {self.name!r} expects each row's labels first, padded with "
                             "0 (the blank) at the end only; a row of shape "
                             f"{y.shape} has a label after a 0")
        longest = int(np.count_nonzero(y, axis=1).max()) if y.size else 0
        if longest > steps:
            raise ValueError(f"{argument}: loss {self.name!r} aligns at most {steps} labels with an output "
                             f"of shape (None, {steps}, {classes}), got a row of {longest} labels")
        out = np.zeros((len(y), steps), np.int32)
        width = min(y.shape[1], steps)
        out[:, :width] = y[:, :width]
        return out


# the function forms and classes by name (lookup.py)
FUNCTIONS = {"ctc": ctc}
CLASSES = {"CTC": CTC}
