"""The cross-entropies (categorical, sparse categorical, binary) on the backend's fused
kernels: softmax / sigmoid cross-entropy of logits (the model's last activation fused into
the loss, or from_logits=True), and the clipped cross-entropy of probabilities otherwise."""

import numpy as np

from .. import ops
from . import kernel_op
from .base import Loss, check_probability


class _LabelSmoothing(Loss):
    """label_smoothing > 0 trains against t * (1 - label_smoothing) + offset, the targets
    smoothed once as they are prepared (so the fused paths and every backend see them)."""

    def __init__(self, from_logits=False, label_smoothing=0.0):
        super().__init__(from_logits)
        self.label_smoothing = check_probability(label_smoothing, "label_smoothing", type(self).__name__)

    def get_config(self):
        return {"from_logits": self.from_logits, "label_smoothing": self.label_smoothing}

    def _smoothing_offset(self, classes):
        raise NotImplementedError

    def direct_targets(self, y_true, pred):
        # a direct call, loss(y_true, y_pred), smooths as fit does (Keras's __call__ does)
        if getattr(self, "sparse_labels", False) and self.label_smoothing:
            y_true = ops.one_hot(kernel_op.sparse_labels(y_true, pred, self.name), pred.shape[-1])
        targets = super().direct_targets(y_true, pred)
        if not self.label_smoothing:
            return targets
        return targets * (1.0 - self.label_smoothing) + self._smoothing_offset(pred.shape[-1])

    def prepare_targets(self, y, output_shape, argument="y"):
        y = super().prepare_targets(y, output_shape, argument)
        if not self.label_smoothing:
            return y
        offset = self._smoothing_offset(output_shape[-1])
        return (y * (1.0 - self.label_smoothing) + offset).astype(np.float32)


class CategoricalCrossentropy(_LabelSmoothing):
    """Keras's CategoricalCrossentropy; label smoothing towards label_smoothing / K."""

    name = "categorical_crossentropy"

    def _smoothing_offset(self, classes):
        return self.label_smoothing / classes

    def kernel_for(self, output_activation):
        if self.from_logits:
            return "softmax_ce", False
        if output_activation == "softmax":
            return "softmax_ce", True
        return "ce", False

    def direct_pred(self, pred, kernel):
        # probabilities are renormalized to sum to 1 along the last axis first, as Keras does
        if kernel == "ce":
            return pred / ops.sum(pred, axis=-1, keepdims=True)
        return pred


class SparseCategoricalCrossentropy(CategoricalCrossentropy):
    """Integer class labels. label_smoothing (a minidl extension: Keras's sparse loss has none)
    turns the labels into smoothed one-hot rows as they are prepared; the loss then runs on
    dense targets, exactly CategoricalCrossentropy(label_smoothing=...) of the one-hot labels."""

    name = "sparse_categorical_crossentropy"
    sparse_labels = True

    @property
    def sparse(self):
        return not self.label_smoothing

    def get_config(self):
        # label_smoothing only when set: the config is then the one Keras writes
        config = {"from_logits": self.from_logits}
        if self.label_smoothing:
            config["label_smoothing"] = self.label_smoothing
        return config

    def prepare_targets(self, y, output_shape, argument="y"):
        if not self.label_smoothing:
            return Loss.prepare_targets(self, y, output_shape, argument)
        labels = self._prepare_sparse(np.asarray(y), output_shape, argument)
        k = output_shape[-1]
        smoothed = np.full(labels.shape + (k,), self.label_smoothing / k, dtype=np.float32)
        np.put_along_axis(smoothed, labels[..., None].astype(np.intp),
                          1.0 - self.label_smoothing + self.label_smoothing / k, axis=-1)
        return smoothed


class BinaryCrossentropy(_LabelSmoothing):
    """Keras's BinaryCrossentropy; label smoothing towards 0.5."""

    name = "binary_crossentropy"

    def _smoothing_offset(self, classes):
        return 0.5 * self.label_smoothing

    def kernel_for(self, output_activation):
        if self.from_logits:
            return "sigmoid_ce", False
        if output_activation == "sigmoid":
            return "sigmoid_ce", True
        return "bce", False
