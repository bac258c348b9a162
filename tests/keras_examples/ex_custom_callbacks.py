"""Corpus example: writing your own callbacks.

Modeled on keras-team/keras-io guides/writing_your_own_callbacks.py (commit 040e8ba): a
Callback overriding every on_(train|test|predict)_(begin|end) and on_*_batch_* hook and reading
logs.keys() in each (logs is a dict, also at the beginning), callbacks passed to fit / evaluate /
predict, the loss and mean_absolute_error in batch and epoch logs, an early stopping callback
using self.model.stop_training / get_weights / set_weights, and a learning-rate scheduler
callback setting self.model.optimizer.learning_rate in on_epoch_begin; steps_per_epoch with
arrays. Written anew for minidl's corpus with the same Keras 3 API; synthetic digits, small
sizes."""

import numpy as np

import minidl as keras
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


def get_model():
    model = keras.Sequential()
    model.add(keras.layers.Dense(1))
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.1), loss="mean_squared_error",
                  metrics=["mean_absolute_error"])
    return model


(x_train, y_train), (x_test, y_test) = digits(1000, 1), digits(1000, 2)
x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
x_test = x_test.reshape(-1, 784).astype("float32") / 255.0
y_train, y_test = y_train.astype("float32"), y_test.astype("float32")

calls = []


class CustomCallback(keras.callbacks.Callback):
    def _log(self, hook, logs):
        calls.append((hook, sorted(logs.keys())))

    def on_train_begin(self, logs=None):
        self._log("train_begin", logs)

    def on_train_end(self, logs=None):
        self._log("train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._log("epoch_begin", logs)

    def on_epoch_end(self, epoch, logs=None):
        self._log("epoch_end", logs)

    def on_test_begin(self, logs=None):
        self._log("test_begin", logs)

    def on_test_end(self, logs=None):
        self._log("test_end", logs)

    def on_predict_begin(self, logs=None):
        self._log("predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._log("predict_end", logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._log("train_batch_begin", logs)

    def on_train_batch_end(self, batch, logs=None):
        self._log("train_batch_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._log("test_batch_begin", logs)

    def on_test_batch_end(self, batch, logs=None):
        self._log("test_batch_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._log("predict_batch_begin", logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._log("predict_batch_end", logs)


model = get_model()
model.fit(x_train, y_train, batch_size=128, epochs=1, verbose=0, validation_split=0.5,
          callbacks=[CustomCallback()])
model.evaluate(x_test, y_test, batch_size=128, verbose=0, callbacks=[CustomCallback()])
model.predict(x_test, batch_size=128, callbacks=[CustomCallback()], verbose=0)
hooks = [h for h, _ in calls]
for hook in ["train_begin", "epoch_begin", "train_batch_begin", "train_batch_end", "test_begin",
             "test_batch_end", "epoch_end", "train_end", "predict_begin", "predict_batch_end", "predict_end"]:
    assert hook in hooks, hook
assert hooks[0] == "train_begin" and hooks[hooks.index("predict_begin") - 1] == "test_end"
epoch_end_keys = dict(calls)["epoch_end"]
assert epoch_end_keys == ["loss", "mean_absolute_error", "val_loss", "val_mean_absolute_error"], epoch_end_keys
assert dict(calls)["train_batch_end"] == ["loss", "mean_absolute_error"], dict(calls)["train_batch_end"]

seen = {"batch": [], "epoch": []}


class LossAndErrorPrintingCallback(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        seen["batch"].append(logs["loss"])

    def on_test_batch_end(self, batch, logs=None):
        seen["batch"].append(logs["loss"])

    def on_epoch_end(self, epoch, logs=None):
        seen["epoch"].append((logs["loss"], logs["mean_absolute_error"]))
        print(f"The average loss for epoch {epoch} is {logs['loss']:7.2f} "
              f"and mean absolute error is {logs['mean_absolute_error']:7.2f}.")


model = get_model()
model.fit(x_train, y_train, batch_size=128, epochs=2, verbose=0, callbacks=[LossAndErrorPrintingCallback()])
model.evaluate(x_test, y_test, batch_size=128, verbose=0, callbacks=[LossAndErrorPrintingCallback()])
assert len(seen["epoch"]) == 2 and len(seen["batch"]) == 2 * 8 + 8, len(seen["batch"])


class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
    def __init__(self, patience=0):
        super().__init__()
        self.patience = patience
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best = 0, 0, np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = logs.get("loss")
        if np.less(current, self.best):
            self.best, self.wait = current, 0
            self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                self.model.set_weights(self.best_weights)


stopper = EarlyStoppingAtMinLoss()
model = get_model()
history = model.fit(x_train, y_train, batch_size=64, steps_per_epoch=5, epochs=30, verbose=0,
                    callbacks=[LossAndErrorPrintingCallback(), stopper])
print("stopped at epoch", stopper.stopped_epoch)
assert len(history.history["loss"]) < 30 and stopper.stopped_epoch > 0
np.testing.assert_allclose(model.get_weights()[0], stopper.best_weights[0])

LR_SCHEDULE = [(3, 0.05), (6, 0.01), (9, 0.005), (12, 0.001)]


def lr_schedule(epoch, lr):
    if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
        return lr
    for start, rate in LR_SCHEDULE:
        if epoch == start:
            return rate
    return lr


applied = []


class CustomLearningRateScheduler(keras.callbacks.Callback):
    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(ops_value(self.model.optimizer.learning_rate))
        scheduled_lr = self.schedule(epoch, lr)
        self.model.optimizer.learning_rate = scheduled_lr
        applied.append(scheduled_lr)


def ops_value(v):
    return keras.ops.convert_to_numpy(v)


model = get_model()
model.fit(x_train, y_train, batch_size=64, steps_per_epoch=5, epochs=15, verbose=0,
          callbacks=[LossAndErrorPrintingCallback(), CustomLearningRateScheduler(lr_schedule)])
assert abs(applied[2] - 0.1) < 1e-6 and abs(applied[3] - 0.05) < 1e-6 and abs(applied[14] - 0.001) < 1e-6, applied
assert abs(float(ops_value(model.optimizer.learning_rate)) - 0.001) < 1e-6
print("ok")
