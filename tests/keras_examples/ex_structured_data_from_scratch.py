"""Corpus example: structured data classification from scratch.

Modeled on keras-team/keras-io examples/structured_data/structured_data_classification_from_scratch.py
(commit b0d6875): one named Input per column (int64 categorical, string categorical, float
numerical, shape (1,)), Normalization().adapt(column) for the numerical features,
IntegerLookup / StringLookup(output_mode="binary") .adapt(column) for the categorical ones,
layers.concatenate of the encoded features, Dense / Dropout / sigmoid Dense, compile("adam",
"binary_crossentropy", metrics=["accuracy"]) with positional arguments, fit with validation_data
given as dicts of columns, then predict on one new sample given as a dict of one-element lists.
Written anew for minidl's corpus with the same Keras 3 API; a synthetic 300-row heart-disease
table as numpy columns in place of the CSV / tf.data pipeline, fewer features and epochs."""

import numpy as np

import minidl as keras
from minidl import layers
from minidl.layers import IntegerLookup, Normalization, StringLookup

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(1337)
n = 300
columns = {"sex": rng.integers(0, 2, n), "cp": rng.integers(0, 5, n), "ca": rng.integers(0, 4, n),
           "thal": rng.choice(["normal", "fixed", "reversible"], n),
           "age": rng.normal(55, 9, n), "chol": rng.normal(240, 50, n), "thalach": rng.normal(150, 20, n)}
risk = (columns["cp"] >= 3).astype("int64") + (columns["thal"] == "reversible") + (columns["age"] > 60) + (columns["ca"] >= 2)
target = (risk + 0.3 * rng.standard_normal(n) > 1.5).astype("int64")
data = {k: (v.astype("float32") if v.dtype.kind == "f" else v)[:, None] for k, v in columns.items()}
val_index = rng.permutation(n)[: n // 5]
train_mask = np.ones(n, bool)
train_mask[val_index] = False
train_x = {k: v[train_mask] for k, v in data.items()}
val_x = {k: v[~train_mask] for k, v in data.items()}
train_y, val_y = target[train_mask], target[~train_mask]
print(f"Using {train_mask.sum()} samples for training and {len(val_index)} for validation")


def encode_numerical_feature(feature, name):
    normalizer = Normalization()
    normalizer.adapt(train_x[name])
    return normalizer(feature)


def encode_categorical_feature(feature, name, is_string):
    lookup_class = StringLookup if is_string else IntegerLookup
    lookup = lookup_class(output_mode="binary")
    lookup.adapt(train_x[name])
    return lookup(feature)


sex = keras.Input(shape=(1,), name="sex", dtype="int64")
cp = keras.Input(shape=(1,), name="cp", dtype="int64")
ca = keras.Input(shape=(1,), name="ca", dtype="int64")
thal = keras.Input(shape=(1,), name="thal", dtype="string")
age = keras.Input(shape=(1,), name="age")
chol = keras.Input(shape=(1,), name="chol")
thalach = keras.Input(shape=(1,), name="thalach")
all_inputs = [sex, cp, ca, thal, age, chol, thalach]
all_features = layers.concatenate([
    encode_categorical_feature(sex, "sex", False), encode_categorical_feature(cp, "cp", False),
    encode_categorical_feature(ca, "ca", False), encode_categorical_feature(thal, "thal", True),
    encode_numerical_feature(age, "age"), encode_numerical_feature(chol, "chol"),
    encode_numerical_feature(thalach, "thalach")])
x = layers.Dense(32, activation="relu")(all_features)
x = layers.Dropout(0.5)(x)
output = layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(all_inputs, output)
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
history = model.fit(train_x, train_y, batch_size=32, epochs=30, validation_data=(val_x, val_y), verbose=0)
print("val_accuracy", history.history["val_accuracy"][-1])
assert history.history["val_accuracy"][-1] > 0.75

sample = {"sex": 1, "cp": 4, "ca": 2, "thal": "reversible", "age": 66.0, "chol": 233.0, "thalach": 150.0}
input_dict = {name: np.array([value]) for name, value in sample.items()}
predictions = model.predict(input_dict, verbose=0)
print(f"This particular patient had a {100 * predictions[0][0]:.1f} percent probability of having a heart disease")
assert predictions.shape == (1, 1) and predictions[0][0] > 0.5
