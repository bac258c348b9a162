"""Writes metrics.json: Keras 3.15.1's metric classes (two update_state calls, then result(),
with and without sample weights) and metric functions on fixed data, for
tests/test_metrics_keras3.py.
Run: KERAS_BACKEND=torch /work/kvenv/bin/python tests/keras3_reference/make_metrics.py"""
import json
import os

import keras
import numpy as np

rng = np.random.default_rng(23)


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def batch(kind, n):
    if kind == "regression":
        return rng.uniform(0.1, 2.0, (n, 3)), rng.uniform(0.1, 2.0, (n, 3))
    if kind == "binary":
        return (rng.random((n, 1)) > 0.5) * 1.0, rng.random((n, 1))
    if kind == "multilabel":
        return (rng.random((n, 3)) > 0.5) * 1.0, rng.random((n, 3))
    if kind == "probs":
        return np.eye(4)[rng.integers(0, 4, n)], softmax(rng.normal(size=(n, 4)))
    if kind == "sparse":
        return rng.integers(0, 4, (n,)) * 1.0, softmax(rng.normal(size=(n, 4)))
    if kind == "logits":
        return np.eye(4)[rng.integers(0, 4, n)], rng.normal(size=(n, 4)) * 2
    if kind == "labels":
        return rng.integers(0, 3, (n,)) * 1.0, rng.integers(0, 3, (n,)) * 1.0
    if kind == "hinge":
        return rng.choice([-1.0, 1.0], (n, 3)), rng.normal(size=(n, 3))
    raise ValueError(kind)


CASES = [
    ("Accuracy", {}, "labels"), ("Sum", {}, "values"),
    ("MeanSquaredError", {}, "regression"), ("MeanAbsoluteError", {}, "regression"),
    ("RootMeanSquaredError", {}, "regression"), ("MeanAbsolutePercentageError", {}, "regression"),
    ("MeanSquaredLogarithmicError", {}, "regression"), ("LogCoshError", {}, "regression"),
    ("CosineSimilarity", {}, "regression"), ("R2Score", {}, "regression"),
    ("R2Score", {"class_aggregation": "variance_weighted_average"}, "regression"),
    ("R2Score", {"class_aggregation": None}, "regression"), ("R2Score", {"num_regressors": 2}, "regression"),
    ("PearsonCorrelation", {}, "regression"), ("ConcordanceCorrelation", {}, "regression"),
    ("BinaryCrossentropy", {}, "binary"), ("BinaryCrossentropy", {"label_smoothing": 0.1}, "binary"),
    ("CategoricalCrossentropy", {}, "probs"), ("CategoricalCrossentropy", {"from_logits": True}, "logits"),
    ("SparseCategoricalCrossentropy", {}, "sparse"), ("KLDivergence", {}, "probs"), ("Poisson", {}, "regression"),
    ("Hinge", {}, "hinge"), ("SquaredHinge", {}, "hinge"), ("CategoricalHinge", {}, "probs"),
    ("Hinge", {}, "multilabel"),
    ("TruePositives", {}, "binary"), ("FalsePositives", {}, "binary"), ("TrueNegatives", {}, "binary"),
    ("FalseNegatives", {}, "binary"), ("TruePositives", {"thresholds": [0.2, 0.5, 0.8]}, "multilabel"),
    ("FalseNegatives", {"thresholds": [0.3, 0.6]}, "multilabel"),
    ("SensitivityAtSpecificity", {"specificity": 0.5}, "binary"),
    ("SpecificityAtSensitivity", {"sensitivity": 0.6}, "binary"),
    ("PrecisionAtRecall", {"recall": 0.7}, "binary"), ("RecallAtPrecision", {"precision": 0.6}, "binary"),
    ("PrecisionAtRecall", {"recall": 0.5, "num_thresholds": 10}, "multilabel"),
    ("SensitivityAtSpecificity", {"specificity": 0.4, "class_id": 1}, "multilabel"),
    ("F1Score", {}, "multilabel"), ("F1Score", {"threshold": 0.5}, "multilabel"),
    ("F1Score", {"average": "macro", "threshold": 0.4}, "multilabel"),
    ("F1Score", {"average": "micro", "threshold": 0.4}, "multilabel"),
    ("F1Score", {"average": "weighted"}, "probs"), ("FBetaScore", {"beta": 2.0, "threshold": 0.5}, "multilabel"),
    ("IoU", {"num_classes": 3, "target_class_ids": [0, 2]}, "labels"), ("MeanIoU", {"num_classes": 3}, "labels"),
    ("MeanIoU", {"num_classes": 3, "ignore_class": 1}, "labels"),
    ("BinaryIoU", {}, "binary"), ("BinaryIoU", {"target_class_ids": [1], "threshold": 0.3}, "binary"),
    ("OneHotIoU", {"num_classes": 4, "target_class_ids": [1, 3]}, "probs"),
    ("OneHotMeanIoU", {"num_classes": 4}, "probs"),
]

out = []
for name, kwargs, kind in CASES:
    for weighted in (False, True):
        metric = getattr(keras.metrics, name)(**kwargs)
        batches = []
        for n in (6, 5):
            if kind == "values":
                y_true, y_pred = None, rng.normal(size=(n, 2))
            else:
                y_true, y_pred = batch(kind, n)
            w = rng.uniform(0.2, 2.0, (n,)).round(1) if weighted else None
            if name in ("IoU", "MeanIoU", "BinaryIoU", "OneHotIoU", "OneHotMeanIoU") and weighted:
                w = rng.integers(1, 3, (n,)) * 1.0          # Keras's IoU counts in integers
            if kind == "values":
                metric.update_state(y_pred.astype("float32"), sample_weight=w)
            else:
                metric.update_state(y_true.astype("float32"), y_pred.astype("float32"), sample_weight=w)
            batches.append({"y_true": None if y_true is None else y_true.tolist(), "y_pred": y_pred.tolist(),
                            "sample_weight": None if w is None else w.tolist()})
        result = np.asarray(metric.result())
        out.append({"class": name, "kwargs": kwargs, "batches": batches, "result": result.tolist(),
                    "name": metric.name, "config": metric.get_config()})

functions = []
for fname, kind in [("mean_squared_error", "regression"), ("mean_absolute_error", "regression"),
                    ("mean_absolute_percentage_error", "regression"), ("mean_squared_logarithmic_error", "regression"),
                    ("log_cosh", "regression"), ("huber", "regression"), ("kl_divergence", "probs"),
                    ("poisson", "regression"), ("hinge", "hinge"), ("squared_hinge", "hinge"),
                    ("categorical_hinge", "probs"), ("binary_crossentropy", "multilabel"),
                    ("binary_focal_crossentropy", "multilabel"), ("categorical_crossentropy", "probs"),
                    ("categorical_focal_crossentropy", "probs"), ("sparse_categorical_crossentropy", "sparse"),
                    ("pearson_correlation", "regression"), ("concordance_correlation", "regression")]:
    y_true, y_pred = batch(kind, 5)
    value = np.asarray(getattr(keras.metrics, fname)(y_true.astype("float32"), y_pred.astype("float32")))
    functions.append({"name": fname, "y_true": y_true.tolist(), "y_pred": y_pred.tolist(), "value": value.tolist()})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "metrics.json.tmp"), "w") as f:
    json.dump({"keras": keras.__version__, "classes": out, "functions": functions}, f)
os.replace(os.path.join(here, "metrics.json.tmp"), os.path.join(here, "metrics.json"))
