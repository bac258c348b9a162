"""Keras 3's callbacks on minidl: LambdaCallback, ProgbarLogger, SwapEMAWeights,
BackupAndRestore (on minidl's resume machinery) and TensorBoard (event files read back with
tensorboard's EventAccumulator). Names, defaults and messages as Keras 3.15.1's."""

import json
import os
import sys

import numpy as np
import pytest

import minidl
from minidl import callbacks, layers


def _data(n=32):
    rng = np.random.default_rng(0)
    x = rng.random((n, 3)).astype(np.float32)
    return x, (x @ np.array([[1.0, -2.0], [0.5, 1.0], [2.0, 0.0]], np.float32))


def _model(optimizer="adam", seed=0, metrics=None):
    minidl.set_seed(seed)
    model = minidl.Sequential([layers.Input((3,)), layers.Dense(4, activation="relu", name="hidden"),
                               layers.Dense(2, name="out")])
    model.compile(optimizer, "mse", metrics=metrics)
    return model


# ----------------------------------------------------------------- LambdaCallback
def test_lambda_callback_runs_the_functions_given():
    seen = []
    cb = callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: seen.append(("epoch_begin", epoch, dict(logs))),
        on_epoch_end=lambda epoch, logs: seen.append(("epoch_end", epoch, sorted(logs))),
        on_train_begin=lambda logs: seen.append(("train_begin",)),
        on_train_end=lambda logs: seen.append(("train_end",)),
        on_batch_end=lambda batch, logs: seen.append(("batch_end", batch)),
        on_test_end=lambda logs: seen.append(("test_end", sorted(logs))))
    model = _model()
    x, y = _data(8)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cb])
    model.evaluate(x, y, verbose=0, callbacks=[cb])
    assert seen == [("train_begin",), ("epoch_begin", 0, {}), ("batch_end", 0), ("batch_end", 1),
                    ("epoch_end", 0, ["loss"]), ("train_end",),
                    ("test_end", ["loss"])]


def test_lambda_callback_checks_its_hooks():
    with pytest.raises(TypeError, match="unknown hooks"):
        callbacks.LambdaCallback(on_epoch_finish=print)
    with pytest.raises(TypeError, match="on_epoch_end must be callable"):
        callbacks.LambdaCallback(on_epoch_end=3)
    with pytest.raises(ValueError, match="not both"):
        callbacks.LambdaCallback(on_batch_end=print, on_train_batch_end=print)


# ----------------------------------------------------------------- ProgbarLogger
def test_progbar_logger_prints_as_the_call_s_verbose_says(capsys):
    model = _model()
    x, y = _data(8)
    model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.ProgbarLogger()])
    assert capsys.readouterr().out == ""
    cb = callbacks.ProgbarLogger()
    assert isinstance(cb, callbacks.ProgressBar) and cb.verbose is None
    model.evaluate(x, y, verbose=0, callbacks=[callbacks.ProgbarLogger()])
    model.fit(x, y, epochs=1, verbose=2, callbacks=[])
    assert "loss" in capsys.readouterr().out


# ----------------------------------------------------------------- SwapEMAWeights
def test_swap_ema_weights_evaluates_and_predicts_with_the_averages(active_backend):
    model = _model(minidl.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.9))
    x, y = _data()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)   # the end takes the averages
    for _ in range(3):   # steps after which the weights and their averages differ
        model.train_on_batch(x[:8], y[:8])
    weights = model.get_weights()
    averages = [model.backend.to_numpy(a) for a in model.optimizer._state["average"]]
    plain = model.evaluate(x, y, verbose=0)
    swapped = model.evaluate(x, y, verbose=0, callbacks=[callbacks.SwapEMAWeights()])
    for a, b in zip(weights, model.get_weights()):   # swapped back after evaluate
        np.testing.assert_array_equal(a, b)
    reference = _model()
    reference.set_weights(averages)
    np.testing.assert_allclose(swapped, reference.evaluate(x, y, verbose=0), rtol=1e-5)
    assert abs(swapped - plain) > 0
    np.testing.assert_allclose(model.predict(x, verbose=0, callbacks=[callbacks.SwapEMAWeights()]),
                               reference.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_fit_validates_on_the_averages_with_swap_ema_weights(active_backend):
    model = _model(minidl.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5))
    x, y = _data()
    kept = {}

    class KeepAverages(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            kept["averages"] = [model.backend.to_numpy(a)
                                for a in model.optimizer._state["average"]]

    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0, validation_data=(x, y),
                        callbacks=[callbacks.SwapEMAWeights(), KeepAverages()])
    reference = _model()
    reference.set_weights(kept["averages"])
    np.testing.assert_allclose(history.history["val_loss"][0],
                               reference.evaluate(x, y, verbose=0), rtol=1e-5)


def test_swap_ema_weights_needs_use_ema():
    model = _model()
    x, y = _data(8)
    with pytest.raises(ValueError, match="SwapEMAWeights must be used when `use_ema=True` is set "
                                         "on the optimizer. Received: use_ema=False"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.SwapEMAWeights()])


def test_swap_ema_weights_on_epoch_ends_training_on_the_averages():
    x, y = _data()
    a = _model(minidl.optimizers.SGD(0.1, use_ema=True))
    b = _model(minidl.optimizers.SGD(0.1, use_ema=True))
    a.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    b.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False,
          callbacks=[callbacks.SwapEMAWeights(swap_on_epoch=True)])
    for wa, wb in zip(a.get_weights(), b.get_weights()):   # training went on the weights
        np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------- BackupAndRestore
class _Crash(callbacks.Callback):
    """Raises after `at` training steps in all (a preempted run)."""

    def __init__(self, at):
        super().__init__()
        self.at, self.steps = at, 0

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        if self.steps == self.at:
            raise RuntimeError("preempted")


@pytest.mark.parametrize("save_freq, crash_at", [("epoch", 6), (1, 7)])
def test_backup_and_restore_resumes_where_the_run_stopped(tmp_path, active_backend, save_freq,
                                                          crash_at):
    x, y = _data()
    reference = _model()
    full = reference.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    backup = os.fspath(tmp_path / "backup")
    model = _model()
    with pytest.raises(RuntimeError, match="preempted"):
        model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                  callbacks=[callbacks.BackupAndRestore(backup, save_freq=save_freq),
                             _Crash(crash_at)])
    assert os.path.exists(os.path.join(backup, "latest.minidl"))
    metadata = json.load(open(os.path.join(backup, "training_metadata.json")))
    assert metadata == ({"epoch": 1, "batch": 0} if save_freq == "epoch" else {"epoch": 1, "batch": 3})
    fresh = _model(seed=5)   # another start: the backup's weights and optimizer state win
    history = fresh.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                        callbacks=[callbacks.BackupAndRestore(backup, save_freq=save_freq)])
    assert len(history.history["loss"]) == 2   # epochs 2 and 3 only
    np.testing.assert_allclose(history.history["loss"][-1], full.history["loss"][-1], rtol=1e-4)
    for a, b in zip(reference.get_weights(), fresh.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert not os.path.exists(backup)   # delete_checkpoint=True: gone after a finished fit


def test_backup_and_restore_double_checkpoint_and_keep(tmp_path):
    x, y = _data()
    backup = tmp_path / "b"
    model = _model()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0,
              callbacks=[callbacks.BackupAndRestore(backup, double_checkpoint=True,
                                                    delete_checkpoint=False)])
    assert (backup / "latest.minidl").exists() and (backup / "latest.minidl.bkp").exists()
    (backup / "latest.minidl").write_bytes(b"not a model file")   # a torn write
    again = _model()
    history = again.fit(x, y, batch_size=8, epochs=2, verbose=0,
                        callbacks=[callbacks.BackupAndRestore(backup, double_checkpoint=True)])
    assert len(history.history["loss"]) == 1   # the .bkp held the end of epoch 1


def test_backup_and_restore_arguments():
    with pytest.raises(ValueError, match="Empty `backup_dir` argument passed"):
        callbacks.BackupAndRestore(backup_dir=None)
    with pytest.raises(ValueError, match="Invalid value for argument `save_freq`. Received: "
                                         "save_freq=batch. Expected either 'epoch' or an integer"):
        callbacks.BackupAndRestore("/tmp/x", save_freq="batch")


# ----------------------------------------------------------------- TensorBoard
def test_tensorboard_writes_what_tensorboard_reads(tmp_path, active_backend):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    x, y = _data(16)
    model = _model()
    cb = callbacks.TensorBoard(tmp_path, histogram_freq=1, update_freq=2,
                               write_steps_per_second=True)
    history = model.fit(x, y, batch_size=4, epochs=3, verbose=0, validation_data=(x, y),
                        callbacks=[cb])
    model.evaluate(x, y, verbose=0, callbacks=[cb])
    train = EventAccumulator(os.fspath(tmp_path / "train"))
    train.Reload()
    tags = train.Tags()
    assert {"epoch_loss", "epoch_learning_rate", "epoch_steps_per_second", "batch_loss",
            "batch_steps_per_second"} <= set(tags["scalars"])
    np.testing.assert_allclose([e.value for e in train.Scalars("epoch_loss")],
                               history.history["loss"], rtol=1e-6)
    assert [e.step for e in train.Scalars("epoch_loss")] == [0, 1, 2]
    assert [e.step for e in train.Scalars("batch_loss")] == [2, 4, 6, 8, 10, 12]
    assert set(tags["histograms"]) == {"hidden/kernel/histogram", "hidden/bias/histogram",
                                       "out/kernel/histogram", "out/bias/histogram"}
    histogram = train.Histograms("out/kernel/histogram")[-1].histogram_value
    final = model.get_weights()[2]
    assert histogram.num == final.size and np.isclose(histogram.max, final.max())
    assert "keras" in tags["tensors"]
    config = json.loads(train.Tensors("keras")[0].tensor_proto.string_val[0])
    assert config["class_name"] == "Sequential"
    validation = EventAccumulator(os.fspath(tmp_path / "validation"))
    validation.Reload()
    np.testing.assert_allclose([e.value for e in validation.Scalars("epoch_loss")],
                               history.history["val_loss"], rtol=1e-6)
    assert "evaluation_loss_vs_iterations" in validation.Tags()["scalars"]


def test_tensorboard_arguments_and_the_missing_package(monkeypatch):
    with pytest.raises(ValueError, match="update_freq"):
        callbacks.TensorBoard(update_freq="sometimes")
    with pytest.raises(ValueError, match="profile_batch"):
        callbacks.TensorBoard(profile_batch=2)
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto", None)
    with pytest.raises(ImportError, match=r"pip install minidl\[tensorboard\]"):
        callbacks.TensorBoard()


def test_an_epoch_stopped_by_a_callback_is_still_validated():
    """Keras 3's fit: a callback setting model.stop_training in on_train_batch_end breaks the
    epoch's loop, and that epoch is still evaluated (its logs get val_*), then fit ends."""
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    model = minidl.Sequential([minidl.layers.Input((3,)), minidl.layers.Dense(2)])
    model.compile("sgd", "mse")
    x, y = np.ones((40, 3), np.float32), np.zeros((40, 2), np.float32)

    class StopAfterTwo(minidl.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 1:
                self.model.stop_training = True

    history = model.fit(x, y, batch_size=10, epochs=3, validation_data=(x, y), verbose=0,
                        callbacks=[StopAfterTwo()])
    assert model.optimizer.iterations == 2
    assert list(history.history) == ["loss", "val_loss"] and len(history.history["val_loss"]) == 1
