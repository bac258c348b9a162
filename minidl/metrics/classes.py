"""Keras's class-based metrics: the Metric base (update_state, result, reset_state, with state
from add_variable) and the built-in classes Keras scripts use, all written with minidl.ops so
that their state stays on the backend (on opencl nothing leaves the device until result() is
read)."""

import numpy as np

from .. import initializers, ops
from ..autodiff import Tensor, Variable
from ..naming import snake_case


class MetricVariable(Variable):
    """A metric's state tensor (never trained); assign / assign_add / assign_sub as Keras."""

    trainable = False

    def __init__(self, name, shape, initializer, backend):
        self.name = name
        self.shape = tuple(shape)
        self.initializer = initializers.get(initializer)
        self.grad = None
        self.attach(backend)

    def attach(self, backend):
        self.backend = backend
        self.value = backend.from_numpy(np.asarray(self.initializer(self.shape)), "float32")

    def assign(self, value):
        new = ops.broadcast_to(ops.cast(ops.convert_to_tensor(value, backend=self.backend)
                                        if not ops.is_tensor(value) else value, "float32"),
                               self.shape)
        if new.value is not self.value:
            self.backend.copy(self.value, new.value)

    def assign_add(self, value):
        self.assign(Tensor(self.value, self.backend) + value)

    def assign_sub(self, value):
        self.assign(Tensor(self.value, self.backend) - value)

    def reset(self):
        self.backend.copy_from_host(self.value, np.asarray(self.initializer(self.shape)))


class Metric:
    """Base class of stateful metrics (Keras's keras.metrics.Metric)."""

    def __init__(self, name=None, dtype=None):
        self.name = name or snake_case(type(self).__name__)
        self._variables = []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        var = MetricVariable(name or f"variable_{len(self._variables)}", shape, initializer,
                             ops.core.default_backend())
        self._variables.append(var)
        return var

    add_weight = add_variable

    @property
    def variables(self):
        return list(self._variables)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self):
        """Every variable back to its initial value (a fill on the backend for zeros)."""
        for var in self._variables:
            if isinstance(var.initializer, initializers.Zeros):
                var.backend.fill(var.value, 0.0)
            else:
                var.reset()

    def attach(self, backend):
        """Move the state to `backend` (a model compiled on another backend than the one
        active when the metric was made)."""
        for var in self._variables:
            if var.backend is not backend:
                var.attach(backend)

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _divide_no_nan(a, b):
    return ops.where(ops.greater(b, 0.0), a / ops.maximum(b, 1e-30), 0.0)


class Mean(Metric):
    """The running (weighted) mean of the values given to update_state."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        values = ops.cast(ops.convert_to_tensor(values) if not ops.is_tensor(values) else values,
                          "float32")
        if sample_weight is None:
            self.total.assign_add(ops.sum(values))
            self.count.assign_add(float(int(np.prod(ops.shape(values)))))
        else:
            w = ops.cast(ops.convert_to_tensor(sample_weight) if not ops.is_tensor(sample_weight)
                         else sample_weight, "float32")
            # Keras squeezes a weight's trailing axes of size 1 down to the values' rank
            while len(ops.shape(w)) > len(ops.shape(values)) and ops.shape(w)[-1] == 1:
                w = ops.squeeze(w, -1)
            w = ops.broadcast_to(w, ops.shape(values))
            self.total.assign_add(ops.sum(values * w))
            self.count.assign_add(ops.sum(w))

    def result(self):
        return _divide_no_nan(self.total, self.count)


class MeanMetricWrapper(Mean):
    """A function of (y_true, y_pred) averaged over every value it returns (Keras's wrapper)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "mean"), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    return ops.mean(ops.equal(ops.greater(y_true, 0.5), ops.greater(y_pred, threshold)), axis=-1)


def categorical_accuracy(y_true, y_pred):
    return ops.cast(ops.equal(ops.argmax(y_true, axis=-1), ops.argmax(y_pred, axis=-1)), "float32")


def _sparse_labels(y_true, y_pred):
    labels = ops.cast(y_true, "float32")
    if len(ops.shape(labels)) == len(ops.shape(y_pred)):
        labels = ops.squeeze(labels, -1)
    return labels


def sparse_categorical_accuracy(y_true, y_pred):
    return ops.equal(_sparse_labels(y_true, y_pred),
                     ops.cast(ops.argmax(y_pred, axis=-1), "float32"))


def _in_top_k(target_score, y_pred, k):
    # in the top k when fewer than k scores are strictly larger (ties count in)
    above = ops.sum(ops.greater(y_pred, ops.expand_dims(target_score, -1)), axis=-1)
    return ops.less(above, float(k))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    target = ops.one_hot(ops.argmax(y_true, axis=-1), ops.shape(y_pred)[-1])
    return _in_top_k(ops.sum(target * y_pred, axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    target = ops.one_hot(_sparse_labels(y_true, y_pred), ops.shape(y_pred)[-1])
    return _in_top_k(ops.sum(target * y_pred, axis=-1), y_pred, k)


def cosine_similarity(y_true, y_pred, axis=-1):
    """sum(l2_normalize(y_true) * l2_normalize(y_pred)) along axis, each norm floored at 1e-7
    (Keras's metrics.cosine_similarity; the loss is its negative)."""
    def normalize(x):
        return x * ops.minimum(ops.rsqrt(ops.sum(ops.square(x), axis=axis, keepdims=True)), 1e7)
    y_pred = ops.cast(y_pred, "float32")
    return ops.sum(normalize(ops.cast(y_true, "float32")) * normalize(y_pred), axis=axis)


class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine similarity of targets and predictions along `axis`."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"CosineSimilarity: axis must be an int, got {axis!r}")
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class _ConfusionCounts(Metric):
    """True/false positives and negatives of predictions thresholded at `thresholds`."""

    def __init__(self, thresholds, name, dtype):
        super().__init__(name=name, dtype=dtype)
        self.thresholds = [float(t) for t in thresholds]
        n = (len(self.thresholds),)
        self.tp, self.fp = self.add_variable(n, name="tp"), self.add_variable(n, name="fp")
        self.tn, self.fn = self.add_variable(n, name="tn"), self.add_variable(n, name="fn")

    def update_state(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}: sample_weight is not supported")
        truth = ops.reshape(ops.greater(ops.cast(y_true, "float32"), 0.5), (-1, 1))
        scores = ops.reshape(ops.cast(y_pred, "float32"), (-1, 1))
        thresholds = self._threshold_tensor(scores.backend)
        positive = ops.greater(scores, thresholds)           # (samples, thresholds)
        self.tp.assign_add(ops.sum(positive * truth, axis=0))
        self.fp.assign_add(ops.sum(positive * (1.0 - truth), axis=0))
        self.fn.assign_add(ops.sum((1.0 - positive) * truth, axis=0))
        self.tn.assign_add(ops.sum((1.0 - positive) * (1.0 - truth), axis=0))

    def _threshold_tensor(self, backend):
        held = getattr(self, "_thresholds_on", None)
        if held is None or held.backend is not backend:
            # uploaded once per backend, not every step
            held = self._thresholds_on = ops.convert_to_tensor(
                np.asarray(self.thresholds, np.float32).reshape(1, -1), backend=backend)
        return held


class Precision(_ConfusionCounts):
    """tp / (tp + fp) of predictions above `thresholds` (0.5 by default)."""

    def __init__(self, thresholds=None, name="precision", dtype=None):
        super().__init__([0.5] if thresholds is None else np.atleast_1d(thresholds), name, dtype)

    def result(self):
        value = _divide_no_nan(self.tp, self.tp + self.fp)
        return value[0] if len(self.thresholds) == 1 else value


class Recall(_ConfusionCounts):
    """tp / (tp + fn) of predictions above `thresholds` (0.5 by default)."""

    def __init__(self, thresholds=None, name="recall", dtype=None):
        super().__init__([0.5] if thresholds is None else np.atleast_1d(thresholds), name, dtype)

    def result(self):
        value = _divide_no_nan(self.tp, self.tp + self.fn)
        return value[0] if len(self.thresholds) == 1 else value


class AUC(_ConfusionCounts):
    """Area under the ROC curve from num_thresholds thresholds spread over [0, 1] (Keras's
    defaults: 200 thresholds, the first just below 0 and the last just above 1), by the
    trapezoidal rule."""

    def __init__(self, num_thresholds=200, curve="ROC", name="auc", dtype=None):
        if curve != "ROC":
            raise ValueError(f"AUC: only curve='ROC' is supported, got {curve!r}")
        if num_thresholds < 2:
            raise ValueError(f"AUC: num_thresholds must be > 1, got {num_thresholds}")
        eps = 1e-7
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        super().__init__([0.0 - eps] + inner + [1.0 + eps], name, dtype)

    def result(self):
        tpr = _divide_no_nan(self.tp, self.tp + self.fn)
        fpr = _divide_no_nan(self.fp, self.fp + self.tn)
        return ops.sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) * 0.5)


CLASSES = {cls.__name__: cls for cls in (
    Mean, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
    TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, Precision, Recall, AUC,
    CosineSimilarity)}
