"""Corpus example: reproducibility in Keras models.

Modeled on keras-team/keras-io examples/keras_recipes/reproducibility_recipes.py (commit
0130fa2): utils.set_random_seed, every built-in initializer class called twice with seed=42
giving the same value, two GlorotNormal(seed=42) objects giving the same tensor and two unseeded
ones differing, and a Sequential convnet (Conv2D / MaxPooling2D / Dropout /
GlobalAveragePooling2D / Dense) trained twice after set_random_seed giving identical History
values (compared after a JSON round trip), with jit_compile=False in compile. Written anew for
minidl's corpus with the same Keras 3 API; synthetic digits and numpy arrays in place of
tf.data, small sizes."""

import json
import os
import tempfile

import numpy as np

import minidl as keras
from minidl import initializers, layers
from _data import digits

keras.utils.set_random_seed(812)
initializers_list = [initializers.RandomNormal, initializers.RandomUniform, initializers.TruncatedNormal,
                     initializers.VarianceScaling, initializers.GlorotNormal, initializers.GlorotUniform,
                     initializers.HeNormal, initializers.HeUniform, initializers.LecunNormal,
                     initializers.LecunUniform, initializers.Orthogonal]
for initializer in initializers_list:
    results = [float(np.asarray(keras.ops.convert_to_numpy(initializer(seed=42)(shape=(1, 1)))).item())
               for _ in range(2)]
    print(initializer.__name__, results)
    assert results[0] == results[1], initializer

result_1 = keras.initializers.GlorotNormal(seed=42)(shape=(3, 5))
result_2 = keras.initializers.GlorotNormal(seed=42)(shape=(3, 5))
assert np.allclose(keras.ops.convert_to_numpy(result_1), keras.ops.convert_to_numpy(result_2))
result_3 = keras.initializers.GlorotNormal()(shape=(3, 5))
result_4 = keras.initializers.GlorotNormal()(shape=(3, 5))
assert not np.allclose(keras.ops.convert_to_numpy(result_3), keras.ops.convert_to_numpy(result_4))

(train_images, train_labels), (test_images, test_labels) = digits(600, 1, size=32), digits(200, 2, size=32)
train_images = train_images[..., None].astype("float32") / 255.0
test_images = test_images[..., None].astype("float32") / 255.0


def train_model():
    model = keras.Sequential([
        keras.Input((32, 32, 1)),
        layers.Conv2D(16, (3, 3), activation="relu"),
        layers.MaxPooling2D((2, 2)),
        layers.Dropout(0.2),
        layers.Conv2D(16, (3, 3), activation="relu"),
        layers.MaxPooling2D((2, 2)),
        layers.Dropout(0.2),
        layers.Conv2D(16, (3, 3), activation="relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(32, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=False)
    history = model.fit(train_images, train_labels, batch_size=64, epochs=2,
                        validation_data=(test_images, test_labels), verbose=0)
    print(f"Model accuracy on test data: {model.evaluate(test_images, test_labels, verbose=0)[1] * 100:.2f}%")
    return history.history


keras.utils.set_random_seed(812)
history = train_model()
path = os.path.join(tempfile.mkdtemp(), "history.json")
with open(path, "w") as fp:
    json.dump({k: [float(v) for v in vs] for k, vs in history.items()}, fp)
keras.utils.set_random_seed(812)
history_again = train_model()
with open(path) as fp:
    history_loaded = json.load(fp)
assert set(history_loaded) == {"loss", "accuracy", "val_loss", "val_accuracy"}
for key in history_again:
    np.testing.assert_allclose(history_again[key], history_loaded[key], rtol=1e-6, err_msg=key)
print("ok")
