"""Corpus example: training and evaluation with the built-in methods.

Modeled on keras-team/keras-io guides/training_with_built_in_methods.py (commit 0157114, read in
its tf.keras form; written with the Keras 3 spelling): a functional MLP with named layers,
compile with objects and with string identifiers, fit with validation_data, evaluate with
batch_size, predict; a custom loss function and a Loss subclass with a regularization term; a
Metric subclass (add_weight state, update_state with sample_weight, result, reset_state); an
add_loss activity-regularization layer; validation_split; class_weight and sample_weight; a
multi-input multi-output model with losses, metrics and loss_weights given per output name;
callbacks EarlyStopping(min_delta, patience), ModelCheckpoint with {epoch} in the name and
save_best_only, and a learning-rate schedule (optimizers.schedules.ExponentialDecay) given to
the optimizer. Written anew for minidl's corpus with the same Keras 3 API; synthetic digits,
small sizes and epochs."""

import os
import tempfile

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

(x_train, y_train), (x_test, y_test) = digits(1500, 1), digits(300, 2)
x_train = x_train.reshape(-1, 784).astype("float32") / 255
x_test = x_test.reshape(-1, 784).astype("float32") / 255
y_train, y_test = y_train.astype("float32"), y_test.astype("float32")
x_val, y_val = x_train[-300:], y_train[-300:]
x_train, y_train = x_train[:-300], y_train[:-300]


def get_uncompiled_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    return keras.Model(inputs=inputs, outputs=outputs)


def get_compiled_model():
    model = get_uncompiled_model()
    model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy", metrics=["sparse_categorical_accuracy"])
    return model


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.RMSprop(), loss=keras.losses.SparseCategoricalCrossentropy(),
              metrics=[keras.metrics.SparseCategoricalAccuracy()])
history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_data=(x_val, y_val), verbose=0)
assert set(history.history) == {"loss", "sparse_categorical_accuracy", "val_loss", "val_sparse_categorical_accuracy"}
results = model.evaluate(x_test, y_test, batch_size=128, verbose=0)
print("test loss, test acc:", results)
assert results[1] > 0.9
assert model.predict(x_test[:3], verbose=0).shape == (3, 10)


def custom_mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


y_train_one_hot = keras.utils.to_categorical(y_train, 10)
model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=custom_mean_squared_error)
history = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=2, verbose=0)
assert history.history["loss"][1] < history.history["loss"][0]


class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse"):
        super().__init__(name=name)
        self.regularization_factor = regularization_factor

    def call(self, y_true, y_pred):
        mse = ops.mean(ops.square(y_true - y_pred), axis=-1)
        reg = ops.mean(ops.square(0.5 - y_pred), axis=-1)
        return mse + reg * self.regularization_factor


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=CustomMSE())
model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, verbose=0)


class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.reshape(ops.argmax(y_pred, axis=1), (-1, 1))
        values = ops.cast(ops.equal(ops.cast(ops.reshape(y_true, (-1, 1)), "int32"), ops.cast(y_pred, "int32")),
                          "float32")
        if sample_weight is not None:
            values = ops.multiply(values, ops.cast(sample_weight, "float32"))
        self.true_positives.assign_add(ops.sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        self.true_positives.assign(0.0)


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3), loss=keras.losses.SparseCategoricalCrossentropy(),
              metrics=[CategoricalTruePositives()])
history = model.fit(x_train, y_train, batch_size=64, epochs=2, verbose=0)
ctp = history.history["categorical_true_positives"]
print("categorical_true_positives per epoch", ctp)
assert 0.8 * len(x_train) < ctp[-1] <= len(x_train)      # reset every epoch, counted over the epoch


class ActivityRegularizationLayer(layers.Layer):
    def call(self, inputs):
        self.add_loss(ops.sum(inputs) * 0.1)
        return inputs


inputs = keras.Input(shape=(784,), name="digits")
x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = ActivityRegularizationLayer()(x)
x = layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = layers.Dense(10, name="predictions")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
history = model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)
assert history.history["loss"][0] > 1.0      # the regularization term dominates

model = get_compiled_model()
history = model.fit(x_train, y_train, batch_size=64, validation_split=0.2, epochs=1, verbose=0)
assert "val_loss" in history.history

class_weight = {i: 1.0 for i in range(10)}
class_weight[5] = 2.0
model = get_compiled_model()
model.fit(x_train, y_train, class_weight=class_weight, batch_size=64, epochs=1, verbose=0)
sample_weight = np.ones(shape=(len(y_train),))
sample_weight[y_train == 5] = 2.0
model = get_compiled_model()
model.fit(x_train, y_train, sample_weight=sample_weight, batch_size=64, epochs=1, verbose=0)

image_input = keras.Input(shape=(32, 32, 3), name="img_input")
timeseries_input = keras.Input(shape=(None, 10), name="ts_input")
x1 = layers.GlobalMaxPooling2D()(layers.Conv2D(3, 3)(image_input))
x2 = layers.GlobalMaxPooling1D()(layers.Conv1D(3, 3)(timeseries_input))
x = layers.concatenate([x1, x2])
score_output = layers.Dense(1, name="score_output")(x)
class_output = layers.Dense(5, name="class_output")(x)
model = keras.Model(inputs=[image_input, timeseries_input], outputs=[score_output, class_output])
model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
              loss={"score_output": keras.losses.MeanSquaredError(),
                    "class_output": keras.losses.CategoricalCrossentropy()},
              metrics={"score_output": [keras.metrics.MeanAbsolutePercentageError(), keras.metrics.MeanAbsoluteError()],
                       "class_output": [keras.metrics.CategoricalAccuracy()]},
              loss_weights={"score_output": 2.0, "class_output": 1.0})
rng = np.random.default_rng(0)
img_data = rng.random((100, 32, 32, 3)).astype("float32")
ts_data = rng.random((100, 20, 10)).astype("float32")
score_targets = rng.random((100, 1)).astype("float32")
class_targets = rng.random((100, 5)).astype("float32")
history = model.fit({"img_input": img_data, "ts_input": ts_data},
                    {"score_output": score_targets, "class_output": class_targets}, batch_size=32, epochs=1,
                    verbose=0)
print(sorted(history.history))
assert {"loss", "score_output_loss", "class_output_loss", "score_output_mean_absolute_error",
        "class_output_categorical_accuracy"} <= set(history.history), sorted(history.history)

tmp = tempfile.mkdtemp()
model = get_compiled_model()
callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=2, verbose=1),
             keras.callbacks.ModelCheckpoint(filepath=os.path.join(tmp, "mymodel_{epoch}.keras"),
                                             save_best_only=True, monitor="val_loss", verbose=1)]
history = model.fit(x_train, y_train, epochs=20, batch_size=64, callbacks=callbacks, validation_split=0.2, verbose=0)
print("epochs run before early stopping:", len(history.history["loss"]))
assert len(history.history["loss"]) < 20
assert any(name.startswith("mymodel_") for name in os.listdir(tmp))

lr_schedule = keras.optimizers.schedules.ExponentialDecay(initial_learning_rate=0.1, decay_steps=100000,
                                                          decay_rate=0.96, staircase=True)
model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=lr_schedule), loss="sparse_categorical_crossentropy")
model.fit(x_train, y_train, epochs=1, batch_size=64, verbose=0)
print("ok")
