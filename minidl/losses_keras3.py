"""The losses new in Keras 3: BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice,
Tversky, Circle and CategoricalGeneralizedCrossEntropy, with Keras's arguments, defaults and
configs. Each is a Loss whose call() is written with minidl.ops (loss_functions.py), so it
trains on every backend with the gradient of automatic differentiation."""

import numbers

import numpy as np

from . import loss_functions as F
from . import ops
from .losses import Loss


def _probability(value, argument, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{owner}: {argument} must be a number in [0, 1], got {value!r}")
    return float(value)


def _non_negative(value, argument, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"{owner}: {argument} must be a number >= 0, got {value!r}")
    return float(value)


class BinaryFocalCrossentropy(Loss):
    """Binary cross-entropy down-weighting easy examples by (1 - p_t)^gamma (Lin et al.,
    2017); with apply_class_balancing, positives weigh alpha and negatives 1 - alpha."""

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None):
        super().__init__(from_logits=from_logits, name=name, reduction=reduction)
        owner = type(self).__name__
        if not isinstance(apply_class_balancing, bool):
            raise TypeError(f"{owner}: apply_class_balancing must be a bool, got {apply_class_balancing!r}")
        self.apply_class_balancing = apply_class_balancing
        self.alpha = _probability(alpha, "alpha", owner)
        self.gamma = _non_negative(gamma, "gamma", owner)
        self.label_smoothing = _probability(label_smoothing, "label_smoothing", owner)
        self.axis = axis

    def call(self, y_true, y_pred):
        return F.binary_focal_crossentropy(y_true, y_pred, self.apply_class_balancing, self.alpha, self.gamma,
                                           self.from_logits, self.label_smoothing, self.axis)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis,
                "apply_class_balancing": self.apply_class_balancing, "alpha": self.alpha, "gamma": self.gamma}


class CategoricalFocalCrossentropy(Loss):
    """Categorical cross-entropy weighted by alpha (1 - p)^gamma per class."""

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None):
        super().__init__(from_logits=from_logits, name=name, reduction=reduction)
        owner = type(self).__name__
        self.alpha = _non_negative(alpha, "alpha", owner)
        self.gamma = _non_negative(gamma, "gamma", owner)
        self.label_smoothing = _probability(label_smoothing, "label_smoothing", owner)
        self.axis = axis

    def call(self, y_true, y_pred):
        return F.categorical_focal_crossentropy(y_true, y_pred, self.alpha, self.gamma, self.from_logits,
                                                self.label_smoothing, self.axis)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis, "alpha": self.alpha,
                "gamma": self.gamma}


class Dice(Loss):
    """1 - the Dice coefficient of targets and predictions, summed over axis (over the whole
    batch when None, Keras's default: one value per batch)."""

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(name=name, reduction=reduction)
        self.axis = axis

    def call(self, y_true, y_pred):
        return F.dice(y_true, y_pred, self.axis)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "axis": self.axis}


class Tversky(Loss):
    """1 - the Tversky index, alpha weighting false positives and beta false negatives (alpha =
    beta = 0.5 is the Dice loss)."""

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(name=name, reduction=reduction)
        self.alpha = _non_negative(alpha, "alpha", "Tversky")
        self.beta = _non_negative(beta, "beta", "Tversky")
        self.axis = axis

    def call(self, y_true, y_pred):
        return F.tversky(y_true, y_pred, self.alpha, self.beta, self.axis)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "alpha": self.alpha, "beta": self.beta,
                "axis": self.axis}


class CategoricalGeneralizedCrossEntropy(Loss):
    """(1 - p^q) / q of the probability p of each integer label: between cross-entropy (q -> 0)
    and mean absolute error (q = 1), robust to noisy labels (Zhang and Sabuncu, 2018)."""

    sparse = True   # integer labels, one per position

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        super().__init__(name=name, reduction=reduction)
        if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0.0 < q <= 1.0:
            raise ValueError(f"q must be in the interval (0, 1]. Received: q={q!r}")
        self.q = float(q)

    def call(self, y_true, y_pred):
        return F.categorical_generalized_cross_entropy(y_true, y_pred, self.q)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "q": self.q}


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """The Circle loss (Sun et al., 2020) of L2-normalized embeddings y_pred (batch, d) with
    integer labels y_true (batch,): a softplus of the log-sum-exps of the weighted similarity
    gaps of same-label (positive) and other-label (negative) pairs against ref_embeddings
    (the batch itself by default). One value per sample."""
    y_pred = ops.cast(ops.convert_to_tensor(y_pred) if not ops.is_tensor(y_pred) else y_pred, "float32")
    labels = ops.reshape(ops.cast(y_true, "float32"), (-1,))
    if ref_embeddings is None:
        ref_embeddings = y_pred
    ref_embeddings = ops.cast(ref_embeddings, "float32")
    ref_labels = labels if ref_labels is None else ops.reshape(ops.cast(ref_labels, "float32"), (-1,))
    distances = ops.maximum(1.0 - ops.matmul(y_pred, ops.transpose(ref_embeddings)), 0.0)
    positive = ops.cast(ops.equal(ops.expand_dims(labels, 1), ops.expand_dims(ref_labels, 0)), "float32")
    negative = 1.0 - positive
    if remove_diagonal:
        positive = positive * (1.0 - ops.eye(positive.shape[0], positive.shape[1], backend=y_pred.backend))
    pos_weights = ops.maximum((margin + distances) * positive, 0.0)
    neg_weights = ops.maximum((1.0 + margin - distances) * negative, 0.0)
    pos_terms = -gamma * pos_weights * (margin - distances)
    neg_terms = gamma * neg_weights * ((1.0 - margin) - distances)
    # Keras masks the excluded pairs with -inf; a large finite value gives the same sums
    # (exp underflows to 0) and no NaN for a sample without positives
    excluded = -1.0e9
    p_loss = ops.logsumexp(ops.where(ops.greater(positive, 0.5), pos_terms, excluded), axis=1)
    n_loss = ops.logsumexp(ops.where(ops.greater(negative, 0.5), neg_terms, excluded), axis=1)
    return ops.softplus(p_loss + n_loss)


class Circle(Loss):
    """The Circle loss of L2-normalized embeddings against their integer labels."""

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size",
                 name="circle", dtype=None):
        super().__init__(name=name, reduction=reduction)
        self.gamma = _non_negative(gamma, "gamma", "Circle")
        self.margin = _non_negative(margin, "margin", "Circle")
        if not isinstance(remove_diagonal, bool):
            raise TypeError(f"Circle: remove_diagonal must be a bool, got {remove_diagonal!r}")
        self.remove_diagonal = remove_diagonal

    def call(self, y_true, y_pred):
        values = circle(y_true, y_pred, remove_diagonal=self.remove_diagonal, gamma=self.gamma, margin=self.margin)
        if self.reduction == "sum_over_batch_size":
            # Keras masks the samples whose loss is 0 (no positive pair) and averages over the
            # others: the batch mean of these values is that average
            counted = ops.sum(ops.cast(ops.greater(values, 0.0), "float32"))
            values = values * (float(values.shape[0]) / (counted + 1e-7))
        return values

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "gamma": self.gamma, "margin": self.margin,
                "remove_diagonal": self.remove_diagonal}

    def target_shape(self, batch, output_shape):
        return (batch,)

    @property
    def target_dtype(self):
        return "float32"

    def prepare_targets(self, y, output_shape, argument="y"):
        """Integer labels, one per sample: (N,) or (N, 1); any values (they are compared only)."""
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or y.dtype.kind not in "biuf":
            raise ValueError(f"{argument}: loss 'circle' expects integer labels of shape (N,) or (N, 1), got "
                             f"shape {y.shape} and dtype {y.dtype}")
        return y.astype(np.float32)


CLASSES = {cls.__name__: cls for cls in (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice, Tversky,
                                         CategoricalGeneralizedCrossEntropy, Circle)}
