"""Keras losses. A loss validates and converts targets on the host, then runs backend ops.

Cross-entropies fuse with a final softmax (or sigmoid) activation: the model then feeds
the layer's pre-activation (logits) to the loss, which is both faster and numerically
stable, and back-propagates dL/dlogits = (p - t) / N directly.
"""

import numbers

import numpy as np

from . import autodiff, loss_functions, ops
from .autodiff import Tensor
from .custom_objects import get_registered_name, get_registered_object
from .naming import snake_case

REDUCTIONS = ("sum_over_batch_size", "sum", "auto")


class Loss:
    """Base class. Built-in losses set `kernel` in configure() to one of the op families below;
    a subclass of your own defines call(y_true, y_pred) with minidl.ops (Keras's Loss), whose
    gradient comes from automatic differentiation."""

    name = "loss"
    sparse = False  # targets are int32 class indices rather than arrays like the output

    def __init__(self, from_logits=False, name=None, reduction="sum_over_batch_size"):
        if not isinstance(from_logits, bool):
            raise TypeError(f"{type(self).__name__}: from_logits must be a bool, got {from_logits!r}")
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {REDUCTIONS}, got "
                             f"{reduction!r}")
        self.from_logits = from_logits
        self.reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        if name is not None:
            self.name = name
        elif self.uses_call() and type(self).name == "loss":
            self.name = snake_case(type(self).__name__)
        self.kernel = None
        self._step = None   # (tape, y_pred leaf, the batch's loss) between forward and backward

    def get_config(self):
        if self.uses_call():
            return {"name": self.name, "reduction": self.reduction}
        return {"from_logits": self.from_logits}

    def call(self, y_true, y_pred):
        """Per-sample losses of a batch, written with minidl.ops (Keras's Loss.call)."""
        raise NotImplementedError

    def uses_call(self):
        return type(self).call is not Loss.call

    def __call__(self, y_true, y_pred):
        """The batch's loss as a scalar Tensor (reduced as `reduction` says)."""
        values = self._values(ops.convert_to_tensor(y_true) if not ops.is_tensor(y_true)
                              else y_true, y_pred)
        return ops.sum(values) if self.reduction == "sum" else ops.mean(values)

    def _values(self, y_true, y_pred):
        if self.uses_call():
            return ops.cast(ops.convert_to_tensor(self.call(y_true, y_pred)), "float32")
        function = loss_functions.FUNCTIONS[self.name]
        if self.name == "mean_squared_error":
            return function(y_true, y_pred)
        return function(y_true, y_pred, from_logits=self.from_logits)

    def configure(self, output_activation):
        """Choose the kernel for a model whose last layer has `output_activation`.

        Returns True when the model must feed the last layer's pre-activation (fused)."""
        if self.uses_call():
            self.kernel = "function"
            return False
        raise NotImplementedError

    # ------------------------------------------------------------ targets
    def target_shape(self, batch, output_shape):
        """Sparse targets hold one class index per position: (batch,) + output_shape[:-1]."""
        return (batch,) + tuple(output_shape[:-1] if self.sparse else output_shape)

    @property
    def target_dtype(self):
        return "int32" if self.sparse else "float32"

    def prepare_targets(self, y, output_shape, argument="y"):
        """Validate targets and return them as a host array of target_dtype/target_shape."""
        y = np.asarray(y)
        if y.dtype == object or not (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
            raise TypeError(f"{argument}: targets for loss {self.name!r} must be numeric, "
                            f"got dtype {y.dtype}")
        if np.iscomplexobj(y):
            raise TypeError(f"{argument}: complex targets (dtype {y.dtype}) are not supported")
        if self.sparse:
            return self._prepare_sparse(y, output_shape, argument)
        want = tuple(output_shape)
        if tuple(y.shape[1:]) != want:
            if want == (1,) and y.ndim == 1:
                y = y.reshape(-1, 1)
            else:
                raise ValueError(f"{argument}: loss {self.name!r} expects targets of shape "
                                 f"(None, {', '.join(map(str, want))}) like the model output, "
                                 f"got {tuple(y.shape)}")
        y = y.astype(np.float32)
        if not np.all(np.isfinite(y)):
            raise ValueError(f"{argument}: targets contain NaN or infinite values")
        return y

    def _prepare_sparse(self, y, output_shape, argument):
        positions = tuple(output_shape[:-1])   # one label per position, e.g. (H, W)
        if tuple(y.shape[1:]) == positions + (1,):
            y = y[..., 0]
        if y.ndim == 0 or tuple(y.shape[1:]) != positions:
            want = ", ".join(["N"] + [str(d) for d in positions])
            raise ValueError(f"{argument}: loss {self.name!r} expects integer class labels of "
                             f"shape ({want}) or ({want}, 1), got shape {tuple(y.shape)}")
        classes = output_shape[-1]
        if y.size:
            if np.issubdtype(y.dtype, np.floating) and not np.all(np.floor(y) == y):
                raise ValueError(f"{argument}: class labels must be whole numbers")
            low, high = y.min(), y.max()
            if low < 0 or high >= classes:
                raise ValueError(f"{argument}: class labels must be in [0, {classes - 1}] for a "
                                 f"model with {classes} outputs, got labels from {low} to {high}")
        return y.astype(np.int32)

    # ------------------------------------------------------------ compute
    def forward(self, b, loss, pred, targets, probs):
        """loss (N,) per-sample losses of pred (output or logits); probs receives the
        probabilities for the fused kernels."""
        if self.kernel == "function":
            self._function_forward(b, loss, pred, targets)
        elif self.kernel == "softmax_ce":
            b.softmax_cross_entropy_forward(probs, loss, pred, targets)
        elif self.kernel == "sigmoid_ce":
            b.sigmoid_cross_entropy_forward(probs, loss, pred, targets)
        elif self.kernel in ("ce", "bce"):
            b.cross_entropy_forward(loss, pred, targets, self.kernel == "bce")
        else:
            b.mean_squared_error_forward(loss, pred, targets)

    def backward(self, b, dpred, pred, targets, probs, scale):
        if self.kernel == "function":
            self._function_backward(b, dpred, scale)
        elif self.kernel == "softmax_ce":
            b.softmax_cross_entropy_backward(dpred, probs, targets, scale)
        elif self.kernel == "sigmoid_ce":
            b.sigmoid_cross_entropy_backward(dpred, probs, targets, scale)
        elif self.kernel in ("ce", "bce"):
            b.cross_entropy_backward(dpred, pred, targets, self.kernel == "bce", scale)
        else:
            b.mean_squared_error_backward(dpred, pred, targets, scale)

    def _function_forward(self, b, loss, pred, targets):
        """Run call on the batch with a tape; every row of `loss` gets the batch's loss, so
        that the model's running sum over rows divided by the rows is the batch's value."""
        tape = autodiff.Tape(b)
        y_pred = Tensor(pred, b, requires_grad=True)
        with autodiff.on_backend(b), autodiff.recording(tape):
            total = ops.reshape(self(Tensor(targets, b), y_pred), (1,))
        b.strided_copy(loss, total.value, 0, (0,))
        self._step = (tape, y_pred, total)

    def _function_backward(self, b, dpred, scale):
        """dpred = the tape's gradient of the batch's loss, times the loss weight: the model's
        scale is loss_weight / rows, and the batch's loss is already reduced over the rows."""
        tape, y_pred, total = self._step
        self._step = None
        with autodiff.on_backend(b):
            (grad,) = tape.gradients([total], [ops.full((1,), scale * dpred.shape[0], backend=b)], [y_pred])
        if grad is None:
            b.fill(dpred, 0.0)
        else:
            b.copy(dpred, grad.value)

    @property
    def produces_probs(self):
        return self.kernel in ("softmax_ce", "sigmoid_ce")


def _label_smoothing(value, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{owner}: label_smoothing must be a number in [0, 1], got {value!r}")
    return float(value)


class _LabelSmoothing(Loss):
    """label_smoothing > 0 trains against t * (1 - label_smoothing) + offset, the targets
    smoothed once as they are prepared (so the fused paths and every backend see them)."""

    def __init__(self, from_logits=False, label_smoothing=0.0):
        super().__init__(from_logits)
        self.label_smoothing = _label_smoothing(label_smoothing, type(self).__name__)

    def get_config(self):
        return {"from_logits": self.from_logits, "label_smoothing": self.label_smoothing}

    def _smoothing_offset(self, classes):
        raise NotImplementedError

    def _values(self, y_true, y_pred):
        # a direct call, loss(y_true, y_pred), smooths as fit does (Keras's __call__ does)
        if not self.label_smoothing or self.uses_call():
            return super()._values(y_true, y_pred)
        classes = int(y_pred.shape[-1])
        if getattr(self, "sparse_labels", False):
            y_true = ops.one_hot(ops.cast(ops.reshape(y_true, y_pred.shape[:-1]), "int32"), classes)
        smoothed = ops.cast(y_true, "float32") * (1.0 - self.label_smoothing) + self._smoothing_offset(classes)
        function = loss_functions.FUNCTIONS[self.dense_name]
        return function(smoothed, y_pred, from_logits=self.from_logits)

    def prepare_targets(self, y, output_shape, argument="y"):
        y = super().prepare_targets(y, output_shape, argument)
        if not self.label_smoothing:
            return y
        offset = self._smoothing_offset(output_shape[-1])
        return (y * (1.0 - self.label_smoothing) + offset).astype(np.float32)


class CategoricalCrossentropy(_LabelSmoothing):
    """Keras's CategoricalCrossentropy; label smoothing towards label_smoothing / K."""

    name = dense_name = "categorical_crossentropy"

    def _smoothing_offset(self, classes):
        return self.label_smoothing / classes

    def configure(self, output_activation):
        if self.from_logits:
            self.kernel = "softmax_ce"
            return False
        self.kernel = "softmax_ce" if output_activation == "softmax" else "ce"
        return output_activation == "softmax"


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

    name = dense_name = "binary_crossentropy"

    def _smoothing_offset(self, classes):
        return 0.5 * self.label_smoothing

    def configure(self, output_activation):
        if self.from_logits:
            self.kernel = "sigmoid_ce"
            return False
        self.kernel = "sigmoid_ce" if output_activation == "sigmoid" else "bce"
        return output_activation == "sigmoid"


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def __init__(self):
        super().__init__(from_logits=False)

    def get_config(self):
        return {}

    def configure(self, output_activation):
        self.kernel = "mse"
        return False


class LossFunctionWrapper(Loss):
    """A Python function of (y_true, y_pred) as a Loss (what compile(loss=function) makes)."""

    def __init__(self, fn, name=None, reduction="sum_over_batch_size", **kwargs):
        if not callable(fn):
            raise TypeError(f"LossFunctionWrapper: fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.fn_kwargs = kwargs
        super().__init__(name=name or getattr(fn, "__name__", "loss"), reduction=reduction)

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self.fn_kwargs)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}
class _RowLoss(Loss):
    """A loss computed along the last axis by the backend's row_loss_forward/backward
    (`kind`, one of base.ROW_LOSSES); outputs of rank > 2 are scored per position, as Keras."""

    kind = None

    def __init__(self):
        super().__init__(from_logits=False)

    def get_config(self):
        return {}

    def configure(self, output_activation):
        self.kernel = "row"
        return False

    def _delta(self):
        return 1.0

    def forward(self, b, loss, pred, targets, probs):
        b.row_loss_forward(loss, pred, targets, self.kind, self._delta())

    def backward(self, b, dpred, pred, targets, probs, scale):
        b.row_loss_backward(dpred, pred, targets, self.kind, self._delta(), scale)

    def __call__(self, y_true, y_pred):
        """The mean over the batch of the per-sample losses (Keras's sum_over_batch_size)."""
        return np.float32(np.mean(_row_loss_values(self, y_true, y_pred)))


def _row_loss_class(class_name, kind, doc, base=None):
    """A row loss class that only names its kind (Keras's name is the kind)."""
    return type(class_name, (base or _RowLoss,), {"name": kind, "kind": kind, "__doc__": doc, "__module__": __name__})


MeanAbsoluteError = _row_loss_class("MeanAbsoluteError", "mean_absolute_error",
                                    "mean(|y_pred - y_true|) over the last axis.")
MeanAbsolutePercentageError = _row_loss_class(
    "MeanAbsolutePercentageError", "mean_absolute_percentage_error",
    "100 * mean(|y_pred - y_true| / max(|y_true|, 1e-7)) over the last axis.")
MeanSquaredLogarithmicError = _row_loss_class(
    "MeanSquaredLogarithmicError", "mean_squared_logarithmic_error",
    "mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1))^2) over the last axis.")
LogCosh = _row_loss_class("LogCosh", "log_cosh", "mean(log(cosh(y_pred - y_true))) over the last axis.")
Poisson = _row_loss_class("Poisson", "poisson", "mean(y_pred - y_true * log(y_pred + 1e-7)) over the last axis.")
KLDivergence = _row_loss_class("KLDivergence", "kl_divergence",
                               "sum(t log(t / p)) over the last axis, t and p clipped to [1e-7, 1].")
CategoricalHinge = _row_loss_class("CategoricalHinge", "categorical_hinge",
                                   "max(neg - pos + 1, 0), pos = sum(t p), neg = max((1 - t) p) over the last axis.")


class Huber(_RowLoss):
    """0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) elsewhere, e = y_pred - y_true."""

    name, kind = "huber_loss", "huber"

    def __init__(self, delta=1.0):
        super().__init__()
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not delta >= 0:
            raise ValueError(f"Huber: delta must be a number >= 0, got {delta!r}")
        self.delta = float(delta)

    def _delta(self):
        return self.delta

    def get_config(self):
        return {"delta": self.delta}


class _HingeTargets(_RowLoss):
    """Hinge losses take -1/1 targets; 0/1 targets are converted (2t - 1) as Keras does, when
    every target of the array (Keras: of the batch) is 0 or 1."""

    def prepare_targets(self, y, output_shape, argument="y"):
        return _hinge_targets(super().prepare_targets(y, output_shape, argument))


Hinge = _row_loss_class("Hinge", "hinge", "mean(max(1 - t p, 0)) over the last axis, t in -1/1.", _HingeTargets)
SquaredHinge = _row_loss_class("SquaredHinge", "squared_hinge", "mean(max(1 - t p, 0)^2) over the last axis, t in -1/1.",
                               _HingeTargets)


class CosineSimilarity(_RowLoss):
    """-sum(normalize(t) * normalize(p)) over the last axis (norms floored at 1e-7)."""

    name, kind = "cosine_similarity", "cosine_similarity"

    def __init__(self, axis=-1):
        super().__init__()
        if axis != -1:
            raise ValueError(f"CosineSimilarity: only axis=-1 (the last axis) is supported, got {axis!r}")
        self.axis = -1

    def get_config(self):
        return {"axis": self.axis}


def _hinge_targets(y):
    if np.all((y == 0) | (y == 1)):
        return (2.0 * y - 1.0).astype(y.dtype)
    return y


def _row_loss_values(loss, y_true, y_pred):
    """The per-sample (per-position) values of a row loss for host arrays: Keras's function
    form, computed by the numpy reference (in float64, returned in y_pred's float dtype)."""
    from .backends.numpy_ops.row_losses import row_loss_forward
    y_pred = np.asarray(y_pred)
    dtype = y_pred.dtype if y_pred.dtype.kind == "f" else np.dtype(np.float32)
    pred = np.asarray(y_pred, dtype=np.float64)
    true = np.asarray(y_true, dtype=np.float64)
    if pred.ndim == 0 or true.shape != pred.shape:
        if true.shape == pred.shape[:-1] and pred.ndim and pred.shape[-1] == 1:
            true = true[..., None]   # Keras squeezes or expands y_true to y_pred's rank
        else:
            raise ValueError(f"losses.{loss.kind}: y_true of shape {true.shape} does not match y_pred "
                             f"of shape {pred.shape}")
    if isinstance(loss, _HingeTargets):
        true = _hinge_targets(true)
    rows = pred.reshape(-1, pred.shape[-1])
    out = np.empty(rows.shape[0])
    with np.errstate(all="ignore"):
        row_loss_forward(out, rows, true.reshape(rows.shape), loss.kind, loss._delta())
    return out.reshape(pred.shape[:-1]).astype(dtype)


# Keras's loss functions (per-sample values as Tensors, written with minidl.ops): the same
# functions as metrics.mean_absolute_error, ...
mean_absolute_percentage_error = loss_functions.mean_absolute_percentage_error
mean_squared_logarithmic_error = loss_functions.mean_squared_logarithmic_error
log_cosh = loss_functions.log_cosh
poisson = loss_functions.poisson
kl_divergence = loss_functions.kl_divergence
squared_hinge = loss_functions.squared_hinge
categorical_hinge = loss_functions.categorical_hinge


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred)) along axis (the metric's negative)."""
    from .metric_classes import cosine_similarity as similarity
    return -similarity(y_true, y_pred, axis=axis)


_BY_NAME = {
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError, "msle": MeanSquaredLogarithmicError,
    "huber": Huber, "huber_loss": Huber,
    "log_cosh": LogCosh, "logcosh": LogCosh,
    "poisson": Poisson,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "kullback_leibler_divergence": KLDivergence,
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "cosine_similarity": CosineSimilarity,
}

# ------------------------------------------------------------------ the losses new in Keras 3
# BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice, Tversky, Circle and
# CategoricalGeneralizedCrossEntropy with Keras's arguments, defaults and configs: each a Loss
# whose call() is written with minidl.ops (loss_functions.py), so that it trains on every
# backend with the gradient of automatic differentiation.
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
        return loss_functions.binary_focal_crossentropy(y_true, y_pred, self.apply_class_balancing, self.alpha,
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
        self.alpha = _non_negative(alpha, "alpha", owner)
        self.gamma = _non_negative(gamma, "gamma", owner)
        self.label_smoothing = _probability(label_smoothing, "label_smoothing", owner)
        self.axis = axis

    def call(self, y_true, y_pred):
        return loss_functions.categorical_focal_crossentropy(y_true, y_pred, self.alpha, self.gamma,
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
        return loss_functions.dice(y_true, y_pred, self.axis)

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
        return loss_functions.tversky(y_true, y_pred, self.alpha, self.beta, self.axis)

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
        return loss_functions.categorical_generalized_cross_entropy(y_true, y_pred, self.q)

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


KERAS3_CLASSES = {cls.__name__: cls for cls in (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice,
                                                Tversky, CategoricalGeneralizedCrossEntropy, Circle)}
_BY_NAME.update({snake_case(name): cls for name, cls in KERAS3_CLASSES.items()})
_CLASSES = {cls.__name__: cls for cls in set(_BY_NAME.values())}


def get(identifier):
    """A Loss from a name, an instance, a Loss class, a function of (y_true, y_pred), or a
    {"class_name", "config"} dict. Names and classes of your own are found through
    custom_objects (a custom_object_scope or @register_keras_serializable)."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _CLASSES:
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    if isinstance(identifier, dict) and identifier.get("class_name") == "function":
        return get(_registered(identifier.get("config", {}).get("name")))
    if isinstance(identifier, dict) and isinstance(identifier.get("class_name"), str):
        cls = _registered(identifier["class_name"])
        if isinstance(cls, type) and issubclass(cls, Loss):
            return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        return get(_registered(identifier))
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        # the Keras loss functions themselves run as the fused built-in kernels
        builtin = getattr(identifier, "__name__", None)
        if loss_functions.FUNCTIONS.get(builtin) is identifier and builtin in _BY_NAME:
            return _BY_NAME[builtin]()
        return LossFunctionWrapper(identifier)
    raise ValueError(f"unknown loss {identifier!r}; known: {sorted(_BY_NAME)}, a function of "
                     "(y_true, y_pred) or a losses.Loss subclass")


def _registered(name):
    found = get_registered_object(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"unknown loss {name!r}: a loss of your own must be passed in "
                         "custom_objects (or registered with @register_keras_serializable); "
                         f"built-in: {sorted(_BY_NAME)}")
    return found


def deserialize(config, custom_objects=None):
    """Keras's losses.deserialize: a name of a loss function gives the function (as in Keras),
    a class name or a {"class_name", "config"} dict a Loss instance."""
    if isinstance(config, str) and config in FUNCTIONS:
        return FUNCTIONS[config]
    if isinstance(config, dict) and config.get("class_name") == "function" and config.get("config") in FUNCTIONS:
        return FUNCTIONS[config["config"]]
    if custom_objects:
        from .custom_objects import custom_object_scope
        with custom_object_scope(custom_objects):
            return get(config)
    return get(config)


def serialize(loss):
    """How a model file names its loss: a built-in class, a class of your own, or a function
    by its name (never its code: loading needs it in custom_objects)."""
    if isinstance(loss, LossFunctionWrapper):
        name = getattr(loss.fn, "__name__", "")
        if name in ("", "<lambda>") or getattr(loss.fn, "__qualname__", name) != name:
            raise ValueError(f"loss {loss.fn!r} cannot be saved: a loss function is saved by its "
                             "name only, so it must be a named module-level function")
        return {"class_name": "function", "config": {"name": name}}
    return {"class_name": get_registered_name(loss), "config": loss.get_config()}


# the function forms, as Keras 2 scripts call them: losses.categorical_crossentropy(y, p)
categorical_crossentropy = loss_functions.categorical_crossentropy
sparse_categorical_crossentropy = loss_functions.sparse_categorical_crossentropy
binary_crossentropy = loss_functions.binary_crossentropy
mean_squared_error = mse = MSE = loss_functions.mean_squared_error
mean_absolute_error = mae = MAE = loss_functions.mean_absolute_error
hinge = loss_functions.hinge
huber = loss_functions.huber

binary_focal_crossentropy = loss_functions.binary_focal_crossentropy
categorical_focal_crossentropy = loss_functions.categorical_focal_crossentropy
categorical_generalized_cross_entropy = loss_functions.categorical_generalized_cross_entropy
dice = loss_functions.dice
tversky = loss_functions.tversky

# every loss function by name (what deserialize gives for a name, as Keras)
FUNCTIONS = {fn.__name__: fn for fn in (
    categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy, mean_squared_error,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error, log_cosh, poisson,
    kl_divergence, hinge, squared_hinge, categorical_hinge, huber, cosine_similarity, binary_focal_crossentropy,
    categorical_focal_crossentropy, categorical_generalized_cross_entropy, dice, tversky, circle)}
