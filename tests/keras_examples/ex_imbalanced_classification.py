"""Corpus example: imbalanced classification (credit card fraud detection).

Modeled on keras-team/keras-io examples/structured_data/imbalanced_classification.py (commit
d8288ba): features normalized with training-set statistics, a Sequential of Dense /
Dropout with a sigmoid output, metrics FalseNegatives / FalsePositives / TrueNegatives /
TruePositives / Precision / Recall with names, Adam(1e-2), "binary_crossentropy", fit with
class_weight={0: 1/n0, 1: 1/n1}, validation_data and a ModelCheckpoint whose file name holds
{epoch}. Written anew for minidl's corpus with the same Keras 3 API; a synthetic table (0.5 %
positives) in place of the Kaggle CSV, checkpoints in the .keras format, fewer epochs."""

import os
import tempfile

import numpy as np

import minidl as keras

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(0)
n, d = 20000, 30
features = rng.standard_normal((n, d)).astype("float32") * 3 + 5
score = features[:, :3].sum(axis=1)
targets = (score > np.quantile(score, 0.995)).astype("uint8")[:, None]

num_val_samples = int(len(features) * 0.2)
train_features, train_targets = features[:-num_val_samples], targets[:-num_val_samples]
val_features, val_targets = features[-num_val_samples:], targets[-num_val_samples:]
counts = np.bincount(train_targets[:, 0])
print(f"positives in training data: {counts[1]} ({100 * counts[1] / len(train_targets):.2f}% of total)")
weight_for_0, weight_for_1 = 1.0 / counts[0], 1.0 / counts[1]

mean = np.mean(train_features, axis=0)
train_features -= mean
val_features -= mean
std = np.std(train_features, axis=0)
train_features /= std
val_features /= std

model = keras.Sequential([
    keras.Input(shape=(train_features.shape[-1],)),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dropout(0.3),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dropout(0.3),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.summary()
metrics = [keras.metrics.FalseNegatives(name="fn"), keras.metrics.FalsePositives(name="fp"),
           keras.metrics.TrueNegatives(name="tn"), keras.metrics.TruePositives(name="tp"),
           keras.metrics.Precision(name="precision"), keras.metrics.Recall(name="recall")]
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=metrics)

with tempfile.TemporaryDirectory() as tmp:
    callbacks = [keras.callbacks.ModelCheckpoint(os.path.join(tmp, "fraud_model_at_epoch_{epoch}.keras"))]
    history = model.fit(train_features, train_targets, batch_size=2048, epochs=6, verbose=0,
                        callbacks=callbacks, validation_data=(val_features, val_targets),
                        class_weight={0: weight_for_0, 1: weight_for_1})
    saved = sorted(os.listdir(tmp))
    assert saved == [f"fraud_model_at_epoch_{e}.keras" for e in range(1, 7)], saved
    reloaded = keras.models.load_model(os.path.join(tmp, "fraud_model_at_epoch_6.keras"))
np.testing.assert_allclose(reloaded.predict(val_features[:16], verbose=0),
                           model.predict(val_features[:16], verbose=0), rtol=1e-5, atol=1e-6)

expected = {"loss", "fn", "fp", "tn", "tp", "precision", "recall"}
assert set(history.history) == expected | {"val_" + k for k in expected}, history.history.keys()
last = {k: v[-1] for k, v in history.history.items()}
print(last)
assert last["val_tp"] + last["val_fn"] == val_targets.sum()
assert last["val_tp"] + last["val_fn"] + last["val_tn"] + last["val_fp"] == len(val_targets)
assert last["val_recall"] > 0.7      # class weights make the rare class count
