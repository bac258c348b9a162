"""Writes losses.json: Keras 3.15.1's new losses (value and gradient with respect to y_pred, by
torch autograd) on fixed data, for tests/test_losses_keras3.py.
Run: KERAS_BACKEND=torch /work/kvenv/bin/python tests/keras3_reference/make_losses.py"""
import json
import os

import keras
import numpy as np
import torch

rng = np.random.default_rng(5)


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def data(kind):
    if kind == "multilabel":
        return (rng.random((6, 3)) > 0.5) * 1.0, rng.uniform(0.05, 0.95, (6, 3))
    if kind == "logits":
        return (rng.random((6, 3)) > 0.5) * 1.0, rng.normal(size=(6, 3)) * 2
    if kind == "probs":
        return np.eye(4)[rng.integers(0, 4, 6)], softmax(rng.normal(size=(6, 4)))
    if kind == "class_logits":
        return np.eye(4)[rng.integers(0, 4, 6)], rng.normal(size=(6, 4)) * 2
    if kind == "sparse":
        return rng.integers(0, 4, (6,)) * 1.0, softmax(rng.normal(size=(6, 4)))
    if kind == "mask":
        return (rng.random((5, 8)) > 0.6) * 1.0, rng.uniform(0.0, 1.0, (5, 8))
    if kind == "embeddings":
        e = rng.normal(size=(8, 4))
        return rng.integers(0, 3, (8,)) * 1.0, e / np.linalg.norm(e, axis=1, keepdims=True)
    raise ValueError(kind)


CASES = [
    ("BinaryFocalCrossentropy", {}, "multilabel"),
    ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5}, "multilabel"),
    ("BinaryFocalCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "logits"),
    ("BinaryFocalCrossentropy", {"reduction": "sum"}, "multilabel"),
    ("CategoricalFocalCrossentropy", {}, "probs"),
    ("CategoricalFocalCrossentropy", {"alpha": 0.5, "gamma": 1.0, "label_smoothing": 0.2}, "probs"),
    ("CategoricalFocalCrossentropy", {"from_logits": True}, "class_logits"),
    ("Dice", {}, "mask"), ("Dice", {"axis": -1}, "mask"), ("Dice", {"axis": -1, "reduction": "sum"}, "mask"),
    ("Tversky", {}, "mask"), ("Tversky", {"alpha": 0.7, "beta": 0.3, "axis": -1}, "mask"),
    ("CategoricalGeneralizedCrossEntropy", {}, "sparse"), ("CategoricalGeneralizedCrossEntropy", {"q": 0.8}, "sparse"),
    ("Circle", {}, "embeddings"), ("Circle", {"gamma": 10.0, "margin": 0.25, "remove_diagonal": False}, "embeddings"),
]

out = []
for name, kwargs, kind in CASES:
    y_true, y_pred = data(kind)
    loss = getattr(keras.losses, name)(**kwargs)
    p = torch.tensor(y_pred.astype("float32"), requires_grad=True)
    value = loss(torch.tensor(y_true.astype("float32")), p)
    value.backward()
    out.append({"class": name, "kwargs": kwargs, "y_true": y_true.tolist(), "y_pred": y_pred.tolist(),
                "value": float(value.detach()), "grad": p.grad.numpy().tolist(), "config": loss.get_config()})

functions = []
for fname, kwargs, kind in [("binary_focal_crossentropy", {}, "multilabel"),
                            ("categorical_focal_crossentropy", {}, "probs"), ("dice", {}, "mask"),
                            ("dice", {"axis": -1}, "mask"), ("tversky", {"alpha": 0.2, "beta": 0.8}, "mask"),
                            ("categorical_generalized_cross_entropy", {"q": 0.5}, "sparse"),
                            ("circle", {}, "embeddings")]:
    y_true, y_pred = data(kind)
    value = getattr(keras.losses, fname)(torch.tensor(y_true.astype("float32")),
                                         torch.tensor(y_pred.astype("float32")), **kwargs)
    functions.append({"name": fname, "kwargs": kwargs, "y_true": y_true.tolist(), "y_pred": y_pred.tolist(),
                      "value": np.asarray(value).tolist()})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "losses.json.tmp"), "w") as f:
    json.dump({"keras": keras.__version__, "classes": out, "functions": functions}, f)
os.replace(os.path.join(here, "losses.json.tmp"), os.path.join(here, "losses.json"))
