"""Keras 3's metrics that average a function of (y_true, y_pred) (the regression, probabilistic
and hinge metrics, Accuracy), Sum, RootMeanSquaredError, R2Score and the correlations, with
Keras's names, arguments and configs. Like classes.py they are written with
minidl.ops: their state stays on the backend and every update runs backend ops, inside a
training step too; only result() is read back (when the model logs it)."""

from .. import losses as F
from .. import ops
from .classes import Mean, MeanMetricWrapper, Metric, _divide_no_nan

EPSILON = 1e-7   # Keras's backend.epsilon()


def _tensor(x, backend=None):
    return ops.cast(x if ops.is_tensor(x) else ops.convert_to_tensor(x, backend=backend), "float32")


def _same_rank(y_true, y_pred):
    """Keras's squeeze_or_expand_to_same_rank for a trailing axis of size 1."""
    if len(y_true.shape) == len(y_pred.shape) - 1 and y_pred.shape[-1] == 1:
        return ops.expand_dims(y_true, -1), y_pred
    if len(y_pred.shape) == len(y_true.shape) - 1 and y_true.shape[-1] == 1:
        return ops.squeeze(y_true, -1), y_pred
    return y_true, y_pred


def _per_sample(sample_weight, values):
    """Weights of shape (batch,) (or any leading part of values' shape) broadcast to values:
    one weight per sample, as Keras's metrics take them."""
    weight = _tensor(sample_weight, values.backend)
    while len(weight.shape) < len(values.shape):
        weight = ops.expand_dims(weight, -1)
    return ops.broadcast_to(weight, values.shape)


def accuracy(y_true, y_pred):
    """1 where y_pred equals y_true exactly (Keras's Accuracy: for labels, not scores)."""
    y_pred = _tensor(y_pred)
    y_true, y_pred = _same_rank(_tensor(y_true, y_pred.backend), y_pred)
    return ops.cast(ops.equal(y_true, y_pred), "float32")


def pearson_correlation(y_true, y_pred, axis=-1):
    """The Pearson correlation of y_true and y_pred along axis (Keras's formula)."""
    y_pred = _tensor(y_pred)
    y_true, y_pred = _same_rank(_tensor(y_true, y_pred.backend), y_pred)
    true_centred = y_true - ops.mean(y_true, axis=axis, keepdims=True)
    pred_centred = y_pred - ops.mean(y_pred, axis=axis, keepdims=True)
    true_centred = true_centred / ops.std(true_centred, axis=axis, keepdims=True)
    pred_centred = pred_centred / ops.std(pred_centred, axis=axis, keepdims=True)
    return ops.mean(true_centred * pred_centred, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation along axis, as Keras 3.15.1 computes it (its covariance
    term centres y_true on y_pred's mean)."""
    y_pred = _tensor(y_pred)
    y_true, y_pred = _same_rank(_tensor(y_true, y_pred.backend), y_pred)
    true_mean = ops.mean(y_true, axis=axis, keepdims=True)
    pred_mean = ops.mean(y_pred, axis=axis, keepdims=True)
    true_var = ops.var(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = ops.var(y_pred - pred_mean, axis=axis, keepdims=True)
    covariance = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + ops.square(true_mean - pred_mean)
    return ops.mean(2.0 * covariance / (norm + EPSILON), axis=axis)


class _Wrapped(MeanMetricWrapper):
    """A MeanMetricWrapper whose config is Keras's: name, dtype and the function's arguments."""

    function = None
    default_name = None

    def __init__(self, name=None, dtype=None, **kwargs):
        super().__init__(type(self).function, name=name or self.default_name, dtype=dtype, **kwargs)
        self.dtype = dtype or "float32"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, **self._fn_kwargs}


def _wrapped(class_name, function, default_name, doc):
    return type(class_name, (_Wrapped,), {"function": staticmethod(function), "default_name": default_name,
                                          "__doc__": doc, "__module__": __name__})


Accuracy = _wrapped("Accuracy", accuracy, "accuracy", "How often y_pred equals y_true.")
MeanSquaredError = _wrapped("MeanSquaredError", F.mean_squared_error, "mean_squared_error",
                            "The mean of (y_true - y_pred)^2.")
MeanAbsoluteError = _wrapped("MeanAbsoluteError", F.mean_absolute_error, "mean_absolute_error",
                             "The mean of |y_true - y_pred|.")
MeanAbsolutePercentageError = _wrapped("MeanAbsolutePercentageError", F.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error",
                                       "The mean of 100 |y_true - y_pred| / max(|y_true|, 1e-7).")
MeanSquaredLogarithmicError = _wrapped("MeanSquaredLogarithmicError", F.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error",
                                       "The mean of (log(1 + y_pred) - log(1 + y_true))^2.")
LogCoshError = _wrapped("LogCoshError", F.log_cosh, "logcosh", "The mean of log(cosh(y_pred - y_true)).")
KLDivergence = _wrapped("KLDivergence", F.kl_divergence, "kl_divergence",
                        "The mean Kullback-Leibler divergence of y_pred from y_true.")
Poisson = _wrapped("Poisson", F.poisson, "poisson", "The mean of y_pred - y_true log(y_pred).")
Hinge = _wrapped("Hinge", F.hinge, "hinge", "The mean hinge loss (0/1 labels become -1/1).")
SquaredHinge = _wrapped("SquaredHinge", F.squared_hinge, "squared_hinge", "The mean squared hinge loss.")
CategoricalHinge = _wrapped("CategoricalHinge", F.categorical_hinge, "categorical_hinge",
                            "The mean categorical hinge loss.")


class BinaryCrossentropy(_Wrapped):
    """The mean binary cross-entropy (of probabilities, or of logits with from_logits)."""

    function = staticmethod(F.binary_crossentropy)

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0):
        super().__init__(name=name, dtype=dtype, from_logits=from_logits, label_smoothing=label_smoothing)


class CategoricalCrossentropy(_Wrapped):
    """The mean categorical cross-entropy of one-hot (or soft) targets."""

    function = staticmethod(F.categorical_crossentropy)

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0,
                 axis=-1):
        super().__init__(name=name, dtype=dtype, from_logits=from_logits, label_smoothing=label_smoothing,
                         axis=axis)


class SparseCategoricalCrossentropy(_Wrapped):
    """The mean categorical cross-entropy of integer labels."""

    function = staticmethod(F.sparse_categorical_crossentropy)

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, ignore_class=None,
                 axis=-1):
        super().__init__(name=name, dtype=dtype, from_logits=from_logits, ignore_class=ignore_class, axis=axis)


class PearsonCorrelation(_Wrapped):
    """The mean over batches of the Pearson correlation along axis."""

    function = staticmethod(pearson_correlation)

    def __init__(self, dtype=None, axis=-1, name="pearson_correlation"):
        super().__init__(name=name, dtype=dtype, axis=axis)


class ConcordanceCorrelation(_Wrapped):
    """The mean over batches of the concordance correlation along axis."""

    function = staticmethod(concordance_correlation)

    def __init__(self, dtype=None, axis=-1, name="concordance_correlation"):
        super().__init__(name=name, dtype=dtype, axis=axis)


class Sum(Metric):
    """The running (weighted) sum of the values given to update_state."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        values = _tensor(values)
        if sample_weight is not None:
            values = values * _per_sample(sample_weight, values)
        self.total.assign_add(ops.sum(values))

    def result(self):
        return self.total + 0.0


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean of (y_true - y_pred)^2 over everything seen."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _tensor(y_pred)
        y_true, y_pred = _same_rank(_tensor(y_true, y_pred.backend), y_pred)
        errors = ops.square(y_true - y_pred)
        super().update_state(errors, None if sample_weight is None else _per_sample(sample_weight, errors))

    def result(self):
        return ops.sqrt(_divide_no_nan(self.total, self.count))


class R2Score(Metric):
    """The coefficient of determination of (batch, outputs) targets: 1 - residual / total sum
    of squares per output, averaged ("uniform_average"), weighted by the outputs' variance
    ("variance_weighted_average") or not (None); adjusted for num_regressors when > 0."""

    AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in self.AGGREGATIONS:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of "
                             f"{self.AGGREGATIONS}. Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value >= 0. "
                             f"Received: num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self.num_samples = self.add_variable((), name="num_samples")
        self._outputs = None

    def _build(self, y_true, y_pred):
        if len(y_pred.shape) != 2 or len(y_true.shape) != 2:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}.")
        n = (y_pred.shape[-1],)
        self.squared_sum, self.sum = self.add_variable(n, name="squared_sum"), self.add_variable(n, name="sum")
        self.total_mse, self.count = self.add_variable(n, name="residual"), self.add_variable(n, name="count")
        for var in (self.squared_sum, self.sum, self.total_mse, self.count):
            if var.backend is not y_pred.backend:
                var.attach(y_pred.backend)
        self._outputs = n

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _tensor(y_pred)
        y_true, y_pred = _same_rank(_tensor(y_true, y_pred.backend), y_pred)
        if self._outputs is None:
            self._build(y_true, y_pred)
        if sample_weight is None:
            weight = ops.ones(y_true.shape, backend=y_true.backend)
        else:
            weight = _tensor(sample_weight, y_true.backend)
            if len(weight.shape) == 1:
                weight = ops.expand_dims(weight, 1)
            weight = ops.broadcast_to(weight, y_true.shape)
        weighted = y_true * weight
        self.sum.assign_add(ops.sum(weighted, axis=0))
        self.squared_sum.assign_add(ops.sum(y_true * weighted, axis=0))
        self.total_mse.assign_add(ops.sum(ops.square(y_true - y_pred) * weight, axis=0))
        self.count.assign_add(ops.sum(weight, axis=0))
        self.num_samples.assign_add(float(y_true.shape[0] * y_true.shape[1]))

    def result(self):
        if self._outputs is None:
            return ops.convert_to_tensor(0.0)
        mean = self.sum / self.count
        total = self.squared_sum - self.sum * mean
        raw = 1.0 - self.total_mse / total
        raw = ops.where(ops.isinf(raw), 0.0, raw)
        if self.class_aggregation == "uniform_average":
            score = ops.mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = ops.sum(total * raw) / ops.sum(total)
        else:
            score = raw
        if self.num_regressors:
            n = float(ops.convert_to_numpy(self.num_samples))
            p = float(self.num_regressors)
            if p < n - 1:     # Keras falls back to the plain score otherwise (with a warning)
                score = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
        return score

    def reset_state(self):
        super().reset_state()

    def get_config(self):
        return {"name": self.name, "dtype": "float32", "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


CLASSES = {cls.__name__: cls for cls in (
    Accuracy, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
    LogCoshError, KLDivergence, Poisson, Hinge, SquaredHinge, CategoricalHinge, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy, PearsonCorrelation, ConcordanceCorrelation, Sum,
    RootMeanSquaredError, R2Score)}
