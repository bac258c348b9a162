"""Corpus example: timeseries forecasting for weather prediction.

Modeled on keras-team/keras-io examples/timeseries/timeseries_weather_forecasting.py (commit
e70ae74): features normalized with the training split's mean and std, windows of the past
sampled every `step` rows by timeseries_dataset_from_array(x, y, sequence_length=...,
sampling_rate=..., batch_size=...) for training and validation with the targets `future` rows
ahead, an Input shaped from the first batch, LSTM(32) + Dense(1), Adam(learning_rate) with
"mse", EarlyStopping(monitor="val_loss", min_delta=0, patience=5) and
ModelCheckpoint(save_weights_only=True, save_best_only=True), fit on the datasets, then
predict on a validation batch. Written anew for minidl's corpus with the same Keras 3 API
(utils.timeseries_dataset_from_array, the Keras 3 name of keras.preprocessing's); a synthetic
7-feature daily-cycle series in place of the Jena climate CSV, short windows, 3 epochs, a
.weights.h5 checkpoint, next(iter(dataset)) in place of tf.data's dataset.take(1)."""

import os
import tempfile

import numpy as np

import minidl as keras

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(0)
n = 6000
t = np.arange(n)
temperature = 10 + 8 * np.sin(2 * np.pi * t / 144) + 0.5 * rng.standard_normal(n)
others = [np.sin(2 * np.pi * t / 144 + k) + 0.3 * rng.standard_normal(n) for k in range(6)]
data = np.stack([others[0], temperature, *others[1:]], axis=1).astype("float32")

split_fraction, step, past, future = 0.715, 6, 120, 12
learning_rate, batch_size, epochs = 0.001, 64, 3
train_split = int(split_fraction * n)
data_mean, data_std = data[:train_split].mean(axis=0), data[:train_split].std(axis=0)
features = (data - data_mean) / data_std
train_data, val_data = features[:train_split], features[train_split:]

start = past + future
x_train = train_data
y_train = features[start:start + train_split, [1]]
sequence_length = int(past / step)
dataset_train = keras.utils.timeseries_dataset_from_array(x_train, y_train, sequence_length=sequence_length,
                                                          sampling_rate=step, batch_size=batch_size)
x_end = len(val_data) - past - future
label_start = train_split + past + future
x_val, y_val = val_data[:x_end], features[label_start:, [1]]
dataset_val = keras.utils.timeseries_dataset_from_array(x_val, y_val, sequence_length=sequence_length,
                                                        sampling_rate=step, batch_size=batch_size)

# dataset.take(1) is tf.data's; iterating the dataset is the Keras 3 part
inputs, targets = next(iter(dataset_train))
inputs, targets = np.asarray(inputs), np.asarray(targets)
print("Input shape:", inputs.shape, "Target shape:", targets.shape)
assert inputs.shape == (batch_size, sequence_length, 7) and targets.shape == (batch_size, 1)
np.testing.assert_allclose(inputs[0], x_train[0:past:step])
np.testing.assert_allclose(targets[0], y_train[0])

inputs = keras.layers.Input(shape=(inputs.shape[1], inputs.shape[2]))
outputs = keras.layers.Dense(1)(keras.layers.LSTM(32)(inputs))
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate), loss="mse")
model.summary()

path_checkpoint = os.path.join(tempfile.mkdtemp(), "model_checkpoint.weights.h5")
es_callback = keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=5)
modelckpt_callback = keras.callbacks.ModelCheckpoint(monitor="val_loss", filepath=path_checkpoint, verbose=1,
                                                     save_weights_only=True, save_best_only=True)
history = model.fit(dataset_train, epochs=epochs, validation_data=dataset_val,
                    callbacks=[es_callback, modelckpt_callback], verbose=0)
print(history.history)
assert history.history["val_loss"][-1] < 0.5      # the daily cycle is learned (variance is 1)
assert os.path.exists(path_checkpoint)
model.load_weights(path_checkpoint)
x, y = next(iter(dataset_val))
prediction = model.predict(x, verbose=0)
assert prediction.shape == (batch_size, 1)
