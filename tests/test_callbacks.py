"""Callbacks driven by a small fake training loop and a fake model that records what it is asked."""

import csv
import io
import re
from collections.abc import Mapping

import numpy as np
import pytest

from minidl import callbacks, optimizers, schedules


class FakeModel:
    """The attributes callbacks may use; save calls are recorded instead of writing files."""

    def __init__(self, optimizer=None):
        self.stop_training = False
        self.optimizer = optimizer or optimizers.SGD(learning_rate=1.0)
        self.weights = [np.zeros(3), np.zeros(2)]
        self.saved = []

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w) for w in weights]

    def save(self, path):
        self.saved.append(("model", path))

    def save_weights(self, path):
        self.saved.append(("weights", path))


class LazyLogs(Mapping):
    """Batch logs whose every value read is counted (each would be a device->host copy)."""

    def __init__(self, values, counter):
        self._values = values
        self._counter = counter

    def __getitem__(self, key):
        value = self._values[key]
        self._counter[key] = self._counter.get(key, 0) + 1
        return value

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)


def fit(cbs, model, epoch_logs, steps=4, batch_loss=None, params=None):
    """Run the callback protocol of fit(): epoch e ends with epoch_logs[e] and weights full of e.
    Returns the number of batch-log value reads."""
    reads = {}
    cb_list = callbacks.CallbackList(cbs, model=model,
                                     params=params or {"epochs": len(epoch_logs), "steps": steps,
                                                       "verbose": 1})
    cb_list.on_train_begin()
    for epoch, logs in enumerate(epoch_logs):
        cb_list.on_epoch_begin(epoch)
        for batch in range(steps):
            cb_list.on_train_batch_begin(batch)
            loss = batch_loss(epoch, batch) if batch_loss else 0.5
            values = {"loss": loss, "accuracy": 0.25, "batch": batch, "size": 32}
            cb_list.on_train_batch_end(batch, LazyLogs(values, reads))
            if model.stop_training:
                break
        model.weights = [np.full(3, float(epoch)), np.full(2, float(epoch))]
        cb_list.on_epoch_end(epoch, dict(logs))
        if model.stop_training:
            break
    cb_list.on_train_end()
    return reads


# ---------------------------------------------------------- CallbackList
class Recorder(callbacks.Callback):
    def __init__(self, name, calls):
        super().__init__()
        self.name, self.calls = name, calls

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append((self.name, "epoch_end", epoch, dict(logs)))

    def on_test_batch_end(self, batch, logs=None):
        self.calls.append((self.name, "test_batch_end", batch, None))

    def on_predict_begin(self, logs=None):
        self.calls.append((self.name, "predict_begin", None, None))


def test_callback_list_dispatches_in_order_and_sets_model_params():
    calls = []
    model = FakeModel()
    a, b = Recorder("a", calls), Recorder("b", calls)
    cb_list = callbacks.CallbackList([a, b], model=model, params={"epochs": 3})
    assert a.model is model and b.params == {"epochs": 3} and len(cb_list) == 2
    cb_list.on_epoch_end(2, {"loss": 1.0})
    cb_list.on_test_batch_end(5)
    cb_list.on_predict_begin()
    cb_list.on_train_batch_begin(0)          # a hook neither overrides: the base does nothing
    assert calls == [("a", "epoch_end", 2, {"loss": 1.0}), ("b", "epoch_end", 2, {"loss": 1.0}),
                     ("a", "test_batch_end", 5, None), ("b", "test_batch_end", 5, None),
                     ("a", "predict_begin", None, None), ("b", "predict_begin", None, None)]
    with pytest.raises(TypeError, match="Callback"):
        callbacks.CallbackList([lambda: None])


def test_history_records_epoch_logs():
    model = FakeModel()
    history = callbacks.History()
    logs = [{"loss": 1.0, "val_loss": 2.0}, {"loss": 0.5, "val_loss": 1.5}]
    fit([history], model, logs)
    assert history.epoch == [0, 1]
    assert history.history == {"loss": [1.0, 0.5], "val_loss": [2.0, 1.5]}
    assert model.history is history


# --------------------------------------------------------- EarlyStopping
def test_early_stopping_patience_and_restore_best_weights():
    model = FakeModel()
    stop = callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    losses = [1.0, 0.5, 0.6, 0.7, 0.8, 0.9]
    fit([stop], model, [{"val_loss": v} for v in losses])
    assert stop.stopped_epoch == 3 and model.stop_training
    assert stop.best == 0.5 and stop.best_epoch == 1
    np.testing.assert_array_equal(model.weights[0], np.full(3, 1.0))   # epoch 1's weights


def test_early_stopping_without_restore_keeps_last_weights():
    model = FakeModel()
    stop = callbacks.EarlyStopping(monitor="loss", patience=1)
    fit([stop], model, [{"loss": v} for v in [1.0, 1.0, 1.0]])
    assert stop.stopped_epoch == 1
    np.testing.assert_array_equal(model.weights[0], np.full(3, 1.0))


def test_early_stopping_min_delta_and_max_mode():
    model = FakeModel()
    stop = callbacks.EarlyStopping(monitor="loss", min_delta=0.1, patience=1)
    fit([stop], model, [{"loss": v} for v in [1.0, 0.95, 0.5]])
    assert stop.stopped_epoch == 1           # 0.95 is not 0.1 better than 1.0

    model = FakeModel()
    stop = callbacks.EarlyStopping(monitor="val_accuracy", patience=1)
    assert stop.mode == "max"
    fit([stop], model, [{"val_accuracy": v} for v in [0.5, 0.6, 0.7, 0.65, 0.8]])
    assert stop.stopped_epoch == 3 and stop.best == 0.7


def test_early_stopping_baseline_and_start_from_epoch():
    model = FakeModel()
    stop = callbacks.EarlyStopping(monitor="loss", patience=2, baseline=0.5)
    fit([stop], model, [{"loss": 0.9}] * 5)
    assert stop.stopped_epoch == 1           # never beat the baseline

    model = FakeModel()
    stop = callbacks.EarlyStopping(monitor="loss", patience=1, start_from_epoch=3)
    fit([stop], model, [{"loss": v} for v in [1.0, 2.0, 3.0, 4.0, 4.0, 4.0]])
    assert stop.stopped_epoch == 4 and stop.best == 4.0


def test_early_stopping_missing_monitor_warns():
    model = FakeModel()
    stop = callbacks.EarlyStopping(monitor="val_loss")
    with pytest.warns(UserWarning, match="val_loss.*available metrics are: loss"):
        fit([stop], model, [{"loss": 1.0}, {"loss": 2.0}])
    assert not model.stop_training


def test_mode_validation():
    with pytest.raises(ValueError, match="EarlyStopping: mode"):
        callbacks.EarlyStopping(mode="up")
    with pytest.raises(ValueError, match="ModelCheckpoint: mode"):
        callbacks.ModelCheckpoint("x", mode="lowest")
    # Keras 3: "auto" knows the loss (down) and the accuracies (up), nothing else.
    for name, mode in [("loss", "min"), ("val_loss", "min"), ("acc", "max"),
                       ("val_sparse_categorical_accuracy", "max")]:
        assert callbacks.ReduceLROnPlateau(monitor=name).mode == mode
    with pytest.raises(ValueError, match="ReduceLROnPlateau: cannot tell.*'learning_rate'.*mode='min'"):
        callbacks.ReduceLROnPlateau(monitor="learning_rate")
    assert callbacks.EarlyStopping(monitor="learning_rate", mode="max").mode == "max"


# ------------------------------------------------------ MonitorCallback
def _improvements(cb, values):
    """Which of values each improve on the best so far, by cb's rule."""
    cb.best = cb._initial_best()
    marks = []
    for value in values:
        better = cb._is_improvement(value, cb.best)
        if better:
            cb.best = value
        marks.append(better)
    return marks


@pytest.mark.parametrize("make", [
    lambda **kw: callbacks.EarlyStopping(**kw),
    lambda **kw: callbacks.ReduceLROnPlateau(**kw),
    lambda **kw: callbacks.ModelCheckpoint("m", save_best_only=True, **kw),
], ids=["EarlyStopping", "ReduceLROnPlateau", "ModelCheckpoint"])
def test_one_improvement_rule_for_every_monitoring_callback(make):
    """The three monitoring callbacks share MonitorCallback's rule (Keras 3): in "min"
    mode value + min_delta < best, in "max" mode value - min_delta > best, equal values
    and NaN never improve."""
    nan = float("nan")
    low = make(monitor="val_loss")
    assert isinstance(low, callbacks.MonitorCallback) and low.mode == "min"
    low.min_delta = 0.0
    assert _improvements(low, [1.0, 1.0, nan, 0.5, 0.7]) == [True, False, False, True, False]
    high = make(monitor="val_accuracy", mode="auto")
    high.min_delta = 0.1
    assert high.mode == "max"
    assert _improvements(high, [0.5, 0.55, 0.61, nan, 0.75]) == [True, False, True, False, True]


def test_min_delta_counts_the_same_in_early_stopping_and_reduce_lr():
    """The same values and min_delta: EarlyStopping stops, and ReduceLROnPlateau lowers the
    learning rate, after the same epoch."""
    values = [1.0, 0.95, 0.92, 0.5]
    stop = callbacks.EarlyStopping(monitor="loss", min_delta=0.1, patience=2)
    fit([stop], FakeModel(), [{"loss": v} for v in values])
    reduce = callbacks.ReduceLROnPlateau(monitor="loss", min_delta=0.1, patience=2, factor=0.5)
    model = FakeModel(optimizers.SGD(learning_rate=1.0))
    history = callbacks.History()
    fit([reduce, history], model, [{"loss": v} for v in values])
    assert stop.stopped_epoch == 2
    assert history.history["learning_rate"] == [1.0, 1.0, 1.0, 0.5]


# ----------------------------------------------------- ReduceLROnPlateau
def test_reduce_lr_on_plateau_with_cooldown_and_min_lr():
    model = FakeModel(optimizers.SGD(learning_rate=1.0))
    reduce = callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, cooldown=2,
                                         min_lr=0.2)
    history = callbacks.History()
    fit([reduce, history], model, [{"loss": 1.0}] * 8)
    assert history.history["learning_rate"] == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2]
    assert model.optimizer.learning_rate == 0.2


def test_reduce_lr_on_plateau_counts_only_real_improvements():
    model = FakeModel(optimizers.Adam(learning_rate=0.1))
    reduce = callbacks.ReduceLROnPlateau(factor=0.1, patience=2, min_delta=0.01)
    fit([reduce], model, [{"val_loss": v} for v in [1.0, 0.995, 0.99, 0.5]])
    # 0.995 and 0.99 are within min_delta of 1.0: two epochs without improvement.
    assert model.optimizer.learning_rate == pytest.approx(0.01)
    assert reduce.best == 0.5


def test_reduce_lr_on_plateau_replaces_a_schedule():
    model = FakeModel(optimizers.SGD(learning_rate=schedules.PiecewiseConstantDecay([100], [0.4, 0.1])))
    reduce = callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0)
    fit([reduce], model, [{"loss": 1.0}, {"loss": 1.0}])
    assert model.optimizer.learning_rate == pytest.approx(0.2)


def test_reduce_lr_on_plateau_rejects_bad_factor():
    with pytest.raises(ValueError, match="factor"):
        callbacks.ReduceLROnPlateau(factor=1.0)


# ------------------------------------------------- LearningRateScheduler
def test_learning_rate_scheduler_two_argument_schedule():
    model = FakeModel(optimizers.SGD(learning_rate=0.8))
    seen = []

    def halve_after_first(epoch, lr):
        seen.append((epoch, lr))
        return lr if epoch == 0 else lr * 0.5

    history = callbacks.History()
    fit([callbacks.LearningRateScheduler(halve_after_first), history], model, [{"loss": 1.0}] * 3)
    assert seen == [(0, 0.8), (1, 0.8), (2, 0.4)]
    assert history.history["learning_rate"] == [0.8, 0.4, 0.2]


def test_learning_rate_scheduler_one_argument_and_errors():
    model = FakeModel(optimizers.Adam(learning_rate=schedules.ExponentialDecay(0.1, 1, 0.5)))
    fit([callbacks.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))], model, [{}] * 2)
    assert model.optimizer.learning_rate == pytest.approx(0.02)
    with pytest.raises(ValueError, match="finite float.*epoch 0"):
        fit([callbacks.LearningRateScheduler(lambda epoch, lr: "big")], FakeModel(), [{}])
    with pytest.raises(TypeError, match="callable"):
        callbacks.LearningRateScheduler(0.1)


# ------------------------------------------------------- ModelCheckpoint
def test_model_checkpoint_every_epoch_formats_filename():
    model = FakeModel()
    ckpt = callbacks.ModelCheckpoint("ckpt/{epoch:02d}-{val_loss:.2f}.mdl")
    reads = fit([ckpt], model, [{"val_loss": 0.5}, {"val_loss": 0.25}])
    assert model.saved == [("model", "ckpt/01-0.50.mdl"), ("model", "ckpt/02-0.25.mdl")]
    assert reads == {}                       # epoch-level saving never touches batch logs


def test_model_checkpoint_save_best_only_and_weights_only():
    model = FakeModel()
    ckpt = callbacks.ModelCheckpoint("best-{epoch}.w", save_best_only=True, save_weights_only=True)
    fit([ckpt], model, [{"val_loss": v} for v in [0.5, 0.7, 0.3, 0.3]])
    assert model.saved == [("weights", "best-1.w"), ("weights", "best-3.w")]
    assert ckpt.best == 0.3


def test_model_checkpoint_max_mode_and_threshold():
    model = FakeModel()
    ckpt = callbacks.ModelCheckpoint("m{epoch}", monitor="val_accuracy", save_best_only=True,
                                     initial_value_threshold=0.6)
    fit([ckpt], model, [{"val_accuracy": v} for v in [0.5, 0.7, 0.65, 0.9]])
    assert model.saved == [("model", "m2"), ("model", "m4")]


def test_model_checkpoint_save_freq_in_batches():
    model = FakeModel()
    ckpt = callbacks.ModelCheckpoint("{epoch}-{batch}-{loss:.1f}", save_freq=2, monitor="loss")
    reads = fit([ckpt], model, [{"loss": 1.0}] * 2, steps=5)
    assert [p for _, p in model.saved] == ["1-2-0.5", "1-4-0.5", "2-1-0.5", "2-3-0.5", "2-5-0.5"]
    assert reads == {"loss": 5, "accuracy": 5, "batch": 5, "size": 5}   # only for the 5 saves
    with pytest.raises(ValueError, match="save_freq"):
        callbacks.ModelCheckpoint("x", save_freq="batch")


def test_model_checkpoint_missing_fields():
    with pytest.raises(KeyError, match="cannot format filepath.*val_acc"):
        fit([callbacks.ModelCheckpoint("{val_acc:.2f}")], FakeModel(), [{"loss": 1.0}])
    model = FakeModel()
    with pytest.warns(UserWarning, match="val_loss"):
        fit([callbacks.ModelCheckpoint("m", save_best_only=True)], model, [{"loss": 1.0}])
    assert model.saved == []


def test_model_checkpoint_never_saves_weights_that_would_not_load():
    """NaN or infinite weights would make load_model refuse the file: the save is skipped
    with a warning, so the previous (loadable) file stays."""
    model = FakeModel()
    ckpt = callbacks.ModelCheckpoint("m-{epoch}")
    cb_list = callbacks.CallbackList([ckpt], model=model)
    cb_list.on_epoch_end(0, {"loss": 1.0})
    model.weights[1][0] = float("nan")
    with pytest.warns(UserWarning, match="not saving m-2.*NaN or infinite.*previous file stays"):
        cb_list.on_epoch_end(1, {"loss": float("nan")})
    model.weights[1][0] = float("inf")
    with pytest.warns(UserWarning, match="not saving m-3"):
        cb_list.on_interrupt(2, {"loss": 1.0})
    assert model.saved == [("model", "m-1")]
    best = callbacks.ModelCheckpoint("best", monitor="loss", save_best_only=True)
    best.set_model(model)
    with pytest.warns(UserWarning, match="not saving best"):
        best.on_epoch_end(0, {"loss": 0.5})
    assert best.best == float("inf")     # a value not saved is no best to beat


def test_on_interrupt_saves_every_checkpoint_but_the_best_only_ones(capsys):
    model = FakeModel()
    every = callbacks.ModelCheckpoint("ck-{epoch}-{loss:.1f}", save_weights_only=True)
    best = callbacks.ModelCheckpoint("best", save_best_only=True)
    needs_val = callbacks.ModelCheckpoint("v-{val_loss}")
    calls = []

    class Listener(callbacks.Callback):
        def on_interrupt(self, epoch, logs=None):
            calls.append((epoch, dict(logs)))

    cb_list = callbacks.CallbackList([every, best, needs_val, Listener()], model=model)
    cb_list.on_interrupt(1, {"loss": 0.25})
    assert model.saved == [("weights", "ck-2-0.2")]
    assert calls == [(1, {"loss": 0.25})]
    out = capsys.readouterr().out
    assert "Interrupted: saved the model to ck-2-0.2" in out
    assert "nothing saved" in out and "v-{val_loss}" in out
    callbacks.Callback().on_interrupt(0, {})          # the base hook does nothing


# ------------------------------------------------------------- CSVLogger
def read_csv(path, sep=","):
    with open(path, newline="") as f:
        return list(csv.reader(f, delimiter=sep))


def test_csv_logger_writes_complete_file_each_epoch(tmp_path):
    path = tmp_path / "log.csv"
    logger = callbacks.CSVLogger(path)
    model = FakeModel()
    cb_list = callbacks.CallbackList([logger], model=model)
    cb_list.on_train_begin()
    cb_list.on_epoch_end(0, {"loss": 0.5, "accuracy": 0.25, "val_loss": 0.75, "val_accuracy": 0.125})
    assert read_csv(path) == [["epoch", "accuracy", "loss", "val_accuracy", "val_loss"],
                              ["0", "0.25", "0.5", "0.125", "0.75"]]
    cb_list.on_epoch_end(1, {"loss": 0.25, "accuracy": 0.5, "val_loss": 0.5, "val_accuracy": 0.25})
    cb_list.on_train_end()
    assert read_csv(path)[2] == ["1", "0.5", "0.25", "0.25", "0.5"]
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv"]   # no temporary file left


def test_csv_logger_leaves_room_for_later_validation(tmp_path):
    path = tmp_path / "log.csv"
    fit([callbacks.CSVLogger(path, separator=";")], FakeModel(),
        [{"loss": 1.0}, {"loss": 0.5, "val_loss": 0.75}])
    assert read_csv(path, ";") == [["epoch", "loss", "val_loss"], ["0", "1.0", "NA"],
                                   ["1", "0.5", "0.75"]]


def test_csv_logger_append_continues_rows(tmp_path):
    path = tmp_path / "log.csv"
    fit([callbacks.CSVLogger(path)], FakeModel(), [{"loss": 1.0, "val_loss": 2.0}] * 2)
    fit([callbacks.CSVLogger(path, append=True)], FakeModel(), [{"val_loss": 1.0, "loss": 0.5}])
    assert read_csv(path) == [["epoch", "loss", "val_loss"], ["0", "1.0", "2.0"],
                              ["1", "1.0", "2.0"], ["0", "0.5", "1.0"]]
    fit([callbacks.CSVLogger(path)], FakeModel(), [{"loss": 3.0, "val_loss": 4.0}])
    assert read_csv(path) == [["epoch", "loss", "val_loss"], ["0", "3.0", "4.0"]]


def test_csv_logger_rejects_bad_separator(tmp_path):
    with pytest.raises(ValueError, match="separator"):
        callbacks.CSVLogger(tmp_path / "x.csv", separator=", ")


# -------------------------------------------------------- TerminateOnNaN
def test_terminate_on_nan(capsys):
    model = FakeModel()
    losses = {(0, 0): 1.0, (0, 1): 0.5, (1, 0): 0.4, (1, 1): float("nan")}
    reads = fit([callbacks.TerminateOnNaN()], model, [{"loss": 1.0}] * 3, steps=3,
                batch_loss=lambda e, b: losses.get((e, b), 0.3))
    out = capsys.readouterr().out
    assert "Batch 1, epoch 1: invalid loss nan, terminating training" in out
    assert model.stop_training
    assert reads == {"loss": 5}              # every batch read once, accuracy never


def test_terminate_on_inf(capsys):
    model = FakeModel()
    fit([callbacks.TerminateOnNaN()], model, [{}] * 2, steps=2,
        batch_loss=lambda e, b: float("inf"))
    assert "Batch 0, epoch 0: invalid loss inf" in capsys.readouterr().out
    assert model.stop_training


# ----------------------------------------------------------- ProgressBar
def test_progress_bar_reads_batch_logs_only_at_refresh_interval():
    out = io.StringIO()
    bar = callbacks.ProgressBar(file=out, refresh_interval=3600)
    reads = fit([bar], FakeModel(), [{"loss": 0.25, "val_loss": 0.5}] * 2, steps=50)
    assert reads == {}
    text = out.getvalue()
    assert "Epoch 1/2" in text and "Epoch 2/2" in text
    assert "loss: 0.2500 - val_loss: 0.5000" in text
    assert "50/50" in text


def test_progress_bar_refreshes_with_batch_logs():
    out = io.StringIO()
    bar = callbacks.ProgressBar(file=out, refresh_interval=0.0)
    reads = fit([bar], FakeModel(), [{"loss": 0.25}], steps=3,
                batch_loss=lambda e, b: float("nan") if b == 2 else 1.5)
    assert reads == {"loss": 3, "accuracy": 3}
    text = out.getvalue()
    assert "loss: 1.5000 - accuracy: 0.2500]" in text      # batch and size are not shown
    assert "loss: nan - accuracy: 0.2500" in text


def test_progress_bar_verbose_2_prints_one_line_per_epoch():
    out = io.StringIO()
    bar = callbacks.ProgressBar(file=out)
    logs = [{"loss": 0.5, "val_loss": float("nan")}, {"loss": 0.25, "val_loss": 0.125}]
    reads = fit([bar], FakeModel(), logs, steps=7,
                params={"epochs": 2, "steps": 7, "verbose": 2})
    lines = out.getvalue().splitlines()
    assert reads == {}
    assert len(lines) == 2
    assert lines[0].startswith("Epoch 1/2 - ") and lines[0].endswith("loss: 0.5000 - val_loss: nan")
    assert "s/step - " in lines[1] and lines[1].endswith("loss: 0.2500 - val_loss: 0.1250")


def test_progress_bar_labels_training_and_validation_time():
    """The epoch line says which time is training and which validation; the time per step
    counts training only."""
    out = io.StringIO()
    bar = callbacks.ProgressBar(file=out)
    logs = [{"loss": 0.5}, {"loss": 0.25, "val_loss": 0.125}]
    fit([bar], FakeModel(), logs, steps=3, params={"epochs": 2, "steps": 3, "verbose": 2})
    first, second = out.getvalue().splitlines()
    assert re.match(r"Epoch 1/2 - train \d+\.\ds - \d+us/step - loss: 0.5000$", first), first
    assert re.match(r"Epoch 2/2 - train \d+\.\ds \+ validation \d+\.\ds - \d+us/step - ", second), \
        second
    out = io.StringIO()
    fit([callbacks.ProgressBar(file=out, refresh_interval=3600)], FakeModel(), logs[1:], steps=3)
    assert re.search(r"val_loss: 0.1250 - train \d+\.\ds \+ validation \d+\.\ds", out.getvalue())


def test_progress_bar_starts_a_resumed_epoch_at_its_step():
    """fit resuming after 14 of 16 steps: the bar starts at 14 and ends at 16/16, and says
    where it resumed; the next epoch starts at 0."""
    out = io.StringIO()
    bar = callbacks.ProgressBar(file=out, refresh_interval=0.0)
    params = {"epochs": 4, "steps": 16, "verbose": 1, "initial_epoch": 2, "initial_step": 14}
    cb_list = callbacks.CallbackList([bar], model=FakeModel(), params=params)
    cb_list.on_train_begin()
    for epoch, first in [(2, 14), (3, 0)]:
        cb_list.on_epoch_begin(epoch)
        for batch in range(first, 16):
            cb_list.on_train_batch_end(batch, {"loss": 1.0})
        cb_list.on_epoch_end(epoch, {"loss": 1.0})
    cb_list.on_train_end()
    text = out.getvalue()
    assert "Epoch 3/4 (resumed at step 14 of 16)" in text and "14/16" in text
    assert "Epoch 4/4:" in text and "resumed" not in text.split("Epoch 4/4")[1]
    assert "0/16" in text.split("Epoch 4/4")[1]
    assert text.count("16/16") >= 2
    out = io.StringIO()
    bar = callbacks.ProgressBar(verbose=2, file=out)
    bar.set_params(dict(params, verbose=2))
    bar.on_epoch_begin(2)
    bar.on_train_batch_end(14, {})
    bar.on_epoch_end(2, {"loss": 1.0})
    assert out.getvalue().startswith("Epoch 3/4 (resumed at step 14 of 16) - train ")


def test_progress_bar_verbose_0_is_silent():
    out = io.StringIO()
    fit([callbacks.ProgressBar(verbose=0, file=out)], FakeModel(), [{"loss": 1.0}])
    assert out.getvalue() == ""


def test_progress_bar_evaluate_outside_fit():
    out = io.StringIO()
    bar = callbacks.ProgressBar(verbose=2, file=out)
    bar.set_params({"steps": 2})
    bar.on_test_begin()
    bar.on_test_batch_end(0, {"loss": 1.0})
    bar.on_test_batch_end(1, {"loss": 1.0})
    bar.on_test_end({"loss": 0.75, "accuracy": 0.5})
    assert out.getvalue().startswith("Evaluate - ")
    assert out.getvalue().rstrip().endswith("loss: 0.7500 - accuracy: 0.5000")


# ------------------------------------------------- with a real model (numpy)
class WeightRecorder(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.weights, self.val_loss = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.model.get_weights())
        self.val_loss.append(logs["val_loss"])


def test_real_model_restores_and_checkpoints_the_best_epoch(tmp_path):
    import minidl
    from minidl import layers
    from minidl.models import Sequential
    minidl.set_backend("numpy")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 5)).astype(np.float32)
    y = (x[:, 0] - x[:, 2] > 0).astype(np.int32)
    xv, yv = x[:24] + rng.normal(scale=2.0, size=(24, 5)).astype(np.float32), 1 - y[:24]

    def build():
        model = Sequential([layers.Input((5,)), layers.Dense(8, activation="relu"),
                            layers.Dense(2, activation="softmax")])
        model.compile(optimizer=optimizers.Adam(0.05), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        return model

    model = build()
    recorder = WeightRecorder()
    best_path = tmp_path / "best.weights"
    model.fit(x, y, epochs=6, batch_size=16, verbose=0, validation_data=(xv, yv),
              callbacks=[recorder,
                         callbacks.EarlyStopping(patience=10, restore_best_weights=True),
                         callbacks.ModelCheckpoint(best_path, save_best_only=True,
                                                   save_weights_only=True)])
    best = int(np.argmin(recorder.val_loss))
    assert best < len(recorder.val_loss) - 1      # the anti-correlated validation set degrades
    for got, want in zip(model.get_weights(), recorder.weights[best]):
        np.testing.assert_array_equal(got, want)
    fresh = build()
    fresh.load_weights(best_path)
    for got, want in zip(fresh.get_weights(), recorder.weights[best]):
        np.testing.assert_array_equal(got, want)
