"""Writes tests/data/keras_ctc.npz with real Keras 3.15.1 (torch backend): keras.losses.ctc's
per-sample values, CTC()'s reductions (and with sample weights), and the gradient of the mean
loss with respect to the logits, for labels padded with 0 (the blank) at the end.

    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_ctc.py
"""

import os

import keras
import numpy as np
import torch

rng = np.random.default_rng(23)
out = {}
# 3 samples, 6 steps, 5 classes (0 the blank); label lengths 3, 2 and 1 (with a repeat in one)
logits = rng.standard_normal((3, 6, 5)).astype("float32")
labels = np.array([[1, 2, 2], [3, 4, 0], [2, 0, 0]], "int32")
weights = np.array([0.5, 1.0, 2.0], "float32")
out["logits"], out["labels"], out["weights"] = logits, labels, weights
out["values"] = keras.ops.convert_to_numpy(keras.losses.ctc(labels, logits))
out["mean"] = keras.ops.convert_to_numpy(keras.losses.CTC()(labels, logits))
out["sum"] = keras.ops.convert_to_numpy(keras.losses.CTC(reduction="sum")(labels, logits))
out["weighted"] = keras.ops.convert_to_numpy(keras.losses.CTC()(labels, logits, sample_weight=weights))
pred = torch.tensor(logits, requires_grad=True)
keras.losses.CTC()(torch.tensor(labels), pred).backward()
out["grad"] = pred.grad.numpy()
out["config"] = np.array(repr(sorted(keras.losses.CTC().get_config().items())))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_ctc.npz")
np.savez(path + ".tmp.npz", **out)
os.replace(path + ".tmp.npz", path)
