"""Keras 3's confusion-matrix metrics: TruePositives, FalsePositives, TrueNegatives,
FalseNegatives at thresholds; SensitivityAtSpecificity, SpecificityAtSensitivity,
PrecisionAtRecall, RecallAtPrecision over num_thresholds thresholds; F1Score and FBetaScore;
IoU, BinaryIoU, MeanIoU, OneHotIoU and OneHotMeanIoU from a class confusion matrix.

All are written with minidl.ops, so that the counts stay on the backend and every update
runs backend ops (one comparison against every threshold at once, one one-hot product for
the class confusion matrix); result() reads them back only when the model logs it.
Predictions above a threshold (strictly) count as positive, as in Keras.
"""

import numbers

import numpy as np

from .. import ops
from .classes import Metric, _divide_no_nan

EPSILON = 1e-7


def _tensor(x, backend=None):
    return ops.cast(x if ops.is_tensor(x) else ops.convert_to_tensor(x, backend=backend), "float32")


def _evenly_spaced_thresholds(num_thresholds, owner):
    """Keras's num_thresholds thresholds: one just below 0, one just above 1, the rest evenly
    between (0.5 alone when num_thresholds is 1)."""
    if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, numbers.Integral) or num_thresholds <= 0:
        raise ValueError(f"{owner}: Argument `num_thresholds` must be an integer > 0. "
                         f"Received: num_thresholds={num_thresholds!r}")
    if num_thresholds == 1:
        return [0.5]
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - EPSILON] + inner + [1.0 + EPSILON]


class _Counts(Metric):
    """tp, fp, tn, fn (those in `kinds`) of y_pred > each threshold against y_true > 0.5,
    each sample counted with its weight. class_id picks one column of (batch, classes) data."""

    kinds = ("tp", "fp", "tn", "fn")

    def __init__(self, thresholds, name, dtype, class_id=None):
        super().__init__(name=name, dtype=dtype)
        self.thresholds = [float(t) for t in thresholds]
        for t in self.thresholds:
            if not 0.0 - EPSILON <= t <= 1.0 + EPSILON:
                raise ValueError(f"{type(self).__name__}: Threshold values must be in [0, 1]. "
                                 f"Received: {self.thresholds}")
        self.class_id = class_id
        n = (len(self.thresholds),)
        full = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}
        for kind in self.kinds:
            setattr(self, kind, self.add_variable(n, name=full[kind]))
        self._held_thresholds = None

    def _threshold_row(self, backend):
        held = self._held_thresholds
        if held is None or held.backend is not backend:
            # uploaded once per backend, not at every step
            held = self._held_thresholds = ops.convert_to_tensor(
                np.asarray(self.thresholds, np.float32).reshape(1, -1), backend=backend)
        return held

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _tensor(y_pred)
        y_true = _tensor(y_true, y_pred.backend)
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        if len(y_true.shape) == len(y_pred.shape) - 1:
            y_true = ops.expand_dims(y_true, -1)
        y_true = ops.broadcast_to(y_true, y_pred.shape)
        truth = ops.reshape(ops.cast(ops.greater(y_true, 0.5), "float32"), (-1, 1))
        positive = ops.cast(ops.greater(ops.reshape(y_pred, (-1, 1)), self._threshold_row(y_pred.backend)),
                            "float32")                                   # (items, thresholds)
        if sample_weight is not None:
            weight = _tensor(sample_weight, y_pred.backend)
            if self.class_id is not None and len(weight.shape) == len(y_pred.shape) + 1:
                weight = weight[..., self.class_id]
            while len(weight.shape) < len(y_pred.shape):
                weight = ops.expand_dims(weight, -1)
            weight = ops.reshape(ops.broadcast_to(weight, y_pred.shape), (-1, 1))
            truth_weighted = truth * weight
            false_weighted = (1.0 - truth) * weight
        else:
            truth_weighted, false_weighted = truth, 1.0 - truth
        sums = {"tp": lambda: positive * truth_weighted, "fp": lambda: positive * false_weighted,
                "fn": lambda: (1.0 - positive) * truth_weighted, "tn": lambda: (1.0 - positive) * false_weighted}
        for kind in self.kinds:
            getattr(self, kind).assign_add(ops.sum(sums[kind](), axis=0))

    def _one_or_all(self, value):
        return value[0] if len(self.thresholds) == 1 else value


def _count_class(class_name, kind, default_name):
    def __init__(self, thresholds=None, name=None, dtype=None):
        self.init_thresholds = thresholds
        values = [0.5] if thresholds is None else [float(t) for t in np.atleast_1d(thresholds)]
        _Counts.__init__(self, values, name or default_name, dtype)

    def result(self):
        return self._one_or_all(getattr(self, kind) + 0.0)

    def get_config(self):
        return {"name": self.name, "dtype": "float32", "thresholds": self.init_thresholds}
    return type(class_name, (_Counts,), {"kinds": (kind,), "__init__": __init__, "result": result,
                                         "get_config": get_config, "__module__": __name__,
                                         "__doc__": f"The (weighted) number of {default_name.replace('_', ' ')} "
                                                    "at each threshold (0.5 by default)."})


TruePositives = _count_class("TruePositives", "tp", "true_positives")
FalsePositives = _count_class("FalsePositives", "fp", "false_positives")
TrueNegatives = _count_class("TrueNegatives", "tn", "true_negatives")
FalseNegatives = _count_class("FalseNegatives", "fn", "false_negatives")


class _AtConstraint(_Counts):
    """The best value of one rate among the thresholds where another rate reaches `value`."""

    argument = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        owner = type(self).__name__
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
            raise ValueError(f"{owner}: Argument `{self.argument}` must be in the range [0, 1]. "
                             f"Received: {self.argument}={value!r}")
        self.value, self.num_thresholds = float(value), num_thresholds
        super().__init__(_evenly_spaced_thresholds(num_thresholds, owner), name, dtype, class_id)

    def _rates(self):
        return {"sensitivity": _divide_no_nan(self.tp, self.tp + self.fn),
                "specificity": _divide_no_nan(self.tn, self.tn + self.fp),
                "precision": _divide_no_nan(self.tp, self.tp + self.fp)}

    def _best(self, constrained, dependent):
        # Keras's _find_max_under_constraint: 0 when no threshold satisfies the constraint
        feasible = ops.greater_equal(constrained, self.value)
        return ops.max(ops.maximum(ops.where(feasible, dependent, 0.0), 0.0))

    def get_config(self):
        return {"name": self.name, "dtype": "float32", "num_thresholds": self.num_thresholds,
                "class_id": self.class_id, self.argument: self.value}


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity among the thresholds whose specificity is >= specificity."""

    argument = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def result(self):
        rates = self._rates()
        return self._best(rates["specificity"], rates["sensitivity"])


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity among the thresholds whose sensitivity is >= sensitivity."""

    argument = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def result(self):
        rates = self._rates()
        return self._best(rates["sensitivity"], rates["specificity"])


class PrecisionAtRecall(_AtConstraint):
    """The best precision among the thresholds whose recall is >= recall."""

    argument = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def result(self):
        rates = self._rates()
        return self._best(rates["sensitivity"], rates["precision"])


class RecallAtPrecision(_AtConstraint):
    """The best recall among the thresholds whose precision is >= precision."""

    argument = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def result(self):
        rates = self._rates()
        return self._best(rates["precision"], rates["sensitivity"])


# ---------------------------------------------------------------- F-scores
class FBetaScore(Metric):
    """(1 + beta^2) precision recall / (beta^2 precision + recall) of (batch, classes) data, per
    class (average=None) or averaged ("micro", "macro", "weighted"). Predictions above
    `threshold` are positive; without one, each row's largest (non-zero) prediction."""

    AVERAGES = (None, "micro", "macro", "weighted")

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in self.AVERAGES:
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float > 0. Received: "
                             f"beta={beta!r}")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, numbers.Real)
                                      or not 0.0 < threshold <= 1.0):
            raise ValueError(f"Invalid `threshold` argument value. It should be a Python float in the range "
                             f"]0, 1]. Received: threshold={threshold!r}")
        self.average, self.beta, self.threshold = average, float(beta), threshold
        self.axis = None if average == "micro" else 0
        self._classes = None

    def _build(self, y_true, y_pred):
        if len(y_pred.shape) != 2 or len(y_true.shape) != 2:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}.")
        shape = () if self.average == "micro" else (y_pred.shape[-1],)
        for name in ("true_positives", "false_positives", "false_negatives", "intermediate_weights"):
            var = self.add_variable(shape, name=name)
            if var.backend is not y_pred.backend:
                var.attach(y_pred.backend)
            setattr(self, name, var)
        self._classes = y_pred.shape[-1]

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _tensor(y_pred)
        y_true = _tensor(y_true, y_pred.backend)
        if self._classes is None:
            self._build(y_true, y_pred)
        if self.threshold is None:
            top = ops.max(y_pred, axis=-1, keepdims=True)
            predicted = ops.logical_and(ops.greater_equal(y_pred, top), ops.greater(ops.abs(y_pred), 1e-9))
        else:
            predicted = ops.greater(y_pred, self.threshold)
        predicted = ops.cast(predicted, "float32")
        weight = None if sample_weight is None else ops.expand_dims(_tensor(sample_weight, y_pred.backend), 1)

        def weighted_sum(value):
            return ops.sum(value if weight is None else value * weight, axis=self.axis)
        self.true_positives.assign_add(weighted_sum(predicted * y_true))
        self.false_positives.assign_add(weighted_sum(predicted * (1.0 - y_true)))
        self.false_negatives.assign_add(weighted_sum((1.0 - predicted) * y_true))
        self.intermediate_weights.assign_add(weighted_sum(y_true))

    def result(self):
        if self._classes is None:
            return ops.convert_to_tensor(0.0)
        precision = self.true_positives / (self.true_positives + self.false_positives + EPSILON)
        recall = self.true_positives / (self.true_positives + self.false_negatives + EPSILON)
        beta2 = self.beta ** 2
        score = (precision * recall) / (beta2 * precision + recall + EPSILON) * (1.0 + beta2)
        if self.average == "weighted":
            weights = self.intermediate_weights / (ops.sum(self.intermediate_weights) + EPSILON)
            return ops.sum(score * weights)
        if self.average is not None:
            return ops.mean(score)
        return score

    def reset_state(self):
        super().reset_state()

    def get_config(self):
        return {"name": self.name, "dtype": "float32", "beta": self.beta, "average": self.average,
                "threshold": self.threshold}


class F1Score(FBetaScore):
    """FBetaScore with beta = 1."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


# ---------------------------------------------------------------- intersection over union
class _IoUBase(Metric):
    """A (num_classes, num_classes) confusion matrix of integer labels (rows: truth, columns:
    prediction), each pair counted with its weight; labels outside [0, num_classes) and
    those equal to ignore_class are not counted."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype)
        if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or num_classes < 1:
            raise ValueError(f"{type(self).__name__}: num_classes must be an integer >= 1, got {num_classes!r}")
        self.num_classes, self.ignore_class = int(num_classes), ignore_class
        self.sparse_y_true, self.sparse_y_pred, self.axis = sparse_y_true, sparse_y_pred, axis
        self.total_cm = self.add_variable((self.num_classes, self.num_classes), name="total_confusion_matrix")

    def _labels(self, y, sparse):
        y = _tensor(y) if sparse else ops.cast(ops.argmax(_tensor(y), axis=self.axis), "float32")
        return ops.reshape(y, (-1,))

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = self._predicted_labels(y_pred)
        y_true = self._labels(y_true, self.sparse_y_true)
        n = float(self.num_classes)
        keep = ops.logical_and(ops.logical_and(ops.greater_equal(y_true, 0.0), ops.less(y_true, n)),
                               ops.logical_and(ops.greater_equal(y_pred, 0.0), ops.less(y_pred, n)))
        if self.ignore_class is not None:
            keep = ops.logical_and(keep, ops.not_equal(y_true, float(self.ignore_class)))
        weight = ops.cast(keep, "float32")
        if sample_weight is not None:
            weight = weight * ops.broadcast_to(ops.reshape(_tensor(sample_weight, y_pred.backend), (-1,)),
                                               weight.shape)
        true_rows = ops.one_hot(ops.where(keep, y_true, 0.0), self.num_classes) * ops.expand_dims(weight, -1)
        predicted_rows = ops.one_hot(ops.where(keep, y_pred, 0.0), self.num_classes)
        self.total_cm.assign_add(ops.matmul(ops.transpose(true_rows), predicted_rows))

    def _predicted_labels(self, y_pred):
        return self._labels(y_pred, self.sparse_y_pred)

    def reset_state(self):
        super().reset_state()


class IoU(_IoUBase):
    """tp / (tp + fp + fn) of each class in target_class_ids, averaged over those that occur."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, sparse_y_true, sparse_y_pred, axis)
        target_class_ids = list(target_class_ids)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is "
                             f"[0, {num_classes}).")
        self.target_class_ids = target_class_ids
        self._targets = None

    def result(self):
        cm = self.total_cm
        tp = ops.diagonal(cm)
        denominator = ops.sum(cm, axis=0) + ops.sum(cm, axis=1) - tp
        held = self._targets
        if held is None or held.backend is not cm.backend:
            held = self._targets = ops.convert_to_tensor(np.asarray(self.target_class_ids, np.int32),
                                                         backend=cm.backend)
        tp, denominator = ops.take(tp, held), ops.take(denominator, held)
        valid = ops.cast(ops.greater(denominator, 1e-9), "float32")
        iou = _divide_no_nan(tp, denominator)
        return _divide_no_nan(ops.sum(iou), ops.sum(valid))

    def get_config(self):
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids, "name": self.name,
                "dtype": "float32", "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of two classes, predictions >= threshold being class 1."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(2, target_class_ids, name=name, dtype=dtype)
        self.threshold = float(threshold)

    def _predicted_labels(self, y_pred):
        return ops.reshape(ops.cast(ops.greater_equal(_tensor(y_pred), self.threshold), "float32"), (-1,))

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": "float32"}


class MeanIoU(IoU):
    """The IoU of every class, averaged over those that occur."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name, dtype, ignore_class, sparse_y_true,
                         sparse_y_pred, axis)

    def get_config(self):
        config = super().get_config()
        del config["target_class_ids"]
        return config


class OneHotIoU(IoU):
    """IoU of one-hot targets and scores (the arg max of each is the class)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """MeanIoU of one-hot targets and scores."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, sparse_y_true=False, sparse_y_pred=sparse_y_pred,
                         axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


CLASSES = {cls.__name__: cls for cls in (
    TruePositives, FalsePositives, TrueNegatives, FalseNegatives, SensitivityAtSpecificity,
    SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision, FBetaScore, F1Score, IoU, BinaryIoU,
    MeanIoU, OneHotIoU, OneHotMeanIoU)}
