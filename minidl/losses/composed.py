"""The losses new in Keras 3 that have no backend kernel: BinaryFocalCrossentropy,
CategoricalFocalCrossentropy, Dice, Tversky, CategoricalGeneralizedCrossEntropy and Circle,
with Keras's arguments, defaults and configs. Each is defined once, as a function written
with minidl.ops (its function form, losses.dice(y_true, y_pred)); its class's call() is
that function, so that it trains on every backend with the gradient of automatic
differentiation."""

import numbers

import numpy as np

from .. import ops
from .base import Loss, check_non_negative, check_probability

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

def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy times (1 - p_t)^gamma (Lin et al., 2017), p_t the probability of
    the true label; with apply_class_balancing, times alpha for positives and 1 - alpha for
    negatives. The mean over axis, as Keras."""
    y_true, y_pred = _pair(y_true, y_pred)
    label_smoothing = check_probability(label_smoothing, "label_smoothing", "losses.binary_focal_crossentropy")
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
    label_smoothing = check_probability(label_smoothing, "label_smoothing", "losses.categorical_focal_crossentropy")
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
        self.alpha = check_probability(alpha, "alpha", owner)
        self.gamma = check_non_negative(gamma, "gamma", owner)
        self.label_smoothing = check_probability(label_smoothing, "label_smoothing", owner)
        self.axis = axis

    def call(self, y_true, y_pred):
        return binary_focal_crossentropy(y_true, y_pred, self.apply_class_balancing, self.alpha,
                                                        self.gamma, self.from_logits, self.label_smoothing, self.axis)

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
        self.alpha = check_non_negative(alpha, "alpha", owner)
        self.gamma = check_non_negative(gamma, "gamma", owner)
        self.label_smoothing = check_probability(label_smoothing, "label_smoothing", owner)
        self.axis = axis

    def call(self, y_true, y_pred):
        return categorical_focal_crossentropy(y_true, y_pred, self.alpha, self.gamma,
                                                             self.from_logits, self.label_smoothing, self.axis)

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
        return dice(y_true, y_pred, self.axis)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "axis": self.axis}

class Tversky(Loss):
    """1 - the Tversky index, alpha weighting false positives and beta false negatives (alpha =
    beta = 0.5 is the Dice loss)."""

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(name=name, reduction=reduction)
        self.alpha = check_non_negative(alpha, "alpha", "Tversky")
        self.beta = check_non_negative(beta, "beta", "Tversky")
        self.axis = axis

    def call(self, y_true, y_pred):
        return tversky(y_true, y_pred, self.alpha, self.beta, self.axis)

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
        return categorical_generalized_cross_entropy(y_true, y_pred, self.q)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "q": self.q}

class Circle(Loss):
    """The Circle loss of L2-normalized embeddings against their integer labels."""

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size",
                 name="circle", dtype=None):
        super().__init__(name=name, reduction=reduction)
        self.gamma = check_non_negative(gamma, "gamma", "Circle")
        self.margin = check_non_negative(margin, "margin", "Circle")
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

# the function forms, as Keras names them
FUNCTIONS = {fn.__name__: fn for fn in (binary_focal_crossentropy, categorical_focal_crossentropy,
                                        categorical_generalized_cross_entropy, dice, tversky, circle)}
CLASSES = {cls.__name__: cls for cls in (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice,
                                                Tversky, CategoricalGeneralizedCrossEntropy, Circle)}
