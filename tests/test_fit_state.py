"""Where a fit starts: at the start of its first epoch, unless it resumes a saved position
inside that epoch on data arranged the same way (and then it says so)."""

import io
import re
import warnings

import numpy as np
import pytest

import minidl
from minidl import callbacks, layers, optimizers
from minidl.data import ArrayIterator
from minidl.models import Sequential, load_model


@pytest.fixture(autouse=True)
def numpy_backend():
    minidl.set_backend("numpy")
    yield
    minidl.set_backend("numpy")


def build():
    minidl.set_seed(5)
    model = Sequential([layers.Input((4,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizers.SGD(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)).astype(np.float32), rng.integers(0, 3, n)


class CountBatches(callbacks.Callback):
    def __init__(self, fail_at=None):
        super().__init__()
        self.batches, self.fail_at = [], fail_at

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append(batch)
        if batch == self.fail_at:
            raise RuntimeError("callback failed")


def test_a_fit_after_a_failed_fit_runs_every_batch():
    """A callback raised in batch 3: the next fit on the same data runs all 10 batches,
    and a fit on 8 new samples its 2 batches, with a loss in its history."""
    model = build()
    x, y = data(320)
    with pytest.raises(RuntimeError, match="callback failed"):
        model.fit(x, y, batch_size=32, verbose=0, callbacks=[CountBatches(fail_at=3)])
    counter = CountBatches()
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # nothing to warn about either: nothing is resumed
        model.fit(x, y, batch_size=32, verbose=0, callbacks=[counter])
    assert counter.batches == list(range(10))
    assert model.optimizer.iterations == 4 + 10

    with pytest.raises(RuntimeError):
        model.fit(x, y, batch_size=32, verbose=0, callbacks=[CountBatches(fail_at=5)])
    counter = CountBatches()
    history = model.fit(*data(8, 1), batch_size=4, verbose=0, callbacks=[counter])
    assert counter.batches == [0, 1]
    assert sorted(history.history) == ["accuracy", "loss"]


def test_a_failed_iterator_fit_repeats_the_epoch_in_the_same_order():
    """With a data iterator the retried epoch starts at its first batch, in the order the
    failed attempt drew (the iterator state at the epoch's start)."""
    x = np.random.default_rng(0).integers(0, 255, size=(40, 4, 4, 1)).astype(np.uint8)
    y = np.arange(40) % 3
    minidl.set_seed(5)
    model = Sequential([layers.Input((4, 4, 1)), layers.Flatten(), layers.Dense(3)])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    it = ArrayIterator(x, y, batch_size=8, shuffle=True, seed=3, prefetch=False)
    seen = []

    class Record(CountBatches):
        def on_train_batch_begin(self, batch, logs=None):
            seen.append(batch)

    with pytest.raises(RuntimeError):
        model.fit(it, verbose=0, callbacks=[Record(fail_at=2)])
    model.fit(it, verbose=0, callbacks=[Record()])
    assert seen == [0, 1, 2, 0, 1, 2, 3, 4]


def _checkpoint_inside_epoch(tmp_path, x, y):
    """A model file saved after step 4 of the 9 steps of epoch 0 (batches of 8)."""
    path = tmp_path / "ck.minidl"
    model = build()
    with pytest.raises(RuntimeError):
        model.fit(x, y, batch_size=8, verbose=0,
                  callbacks=[callbacks.ModelCheckpoint(str(path), save_freq=4),
                             CountBatches(fail_at=5)])
    saved = load_model(path)
    assert (saved.fit_state["epoch"], saved.fit_state["step"]) == (0, 4)
    return path


def test_a_saved_position_resumes_only_on_matching_data(tmp_path):
    x, y = data(72)
    path = _checkpoint_inside_epoch(tmp_path, x, y)

    # Another batch size would skip the wrong samples: the epoch starts at its start.
    model, counter = load_model(path), CountBatches()
    with pytest.warns(UserWarning, match=r"saved position \(epoch 1, 4 steps done, on 72 samples "
                                         r"in 9 batches of 8, shuffled\) does not match this data "
                                         r"\(72 samples in 5 batches of 16"):
        model.fit(x, y, batch_size=16, verbose=0, callbacks=[counter])
    assert counter.batches == list(range(5))

    # Other data (8 samples), or the same samples unshuffled: likewise.
    for kwargs in ({"x": x[:8], "y": y[:8], "batch_size": 8}, {"x": x, "y": y, "batch_size": 8,
                                                               "shuffle": False}):
        model, counter = load_model(path), CountBatches()
        with pytest.warns(UserWarning, match="does not match this data"):
            model.fit(verbose=0, callbacks=[counter], **kwargs)
        assert counter.batches == list(range(len(kwargs["x"]) // 8))

    # The same data: it resumes after the 4 steps done, and says so.
    model, counter, out = load_model(path), CountBatches(), io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(x, y, batch_size=8, verbose=0,
                  callbacks=[counter, callbacks.ProgressBar(verbose=2, file=out)])
    assert counter.batches == [4, 5, 6, 7, 8]
    assert out.getvalue().startswith("Epoch 1/1 (resumed at step 4 of 9) - train ")
    assert model.optimizer.iterations == 9


def test_a_resumed_progress_bar_starts_at_the_resumed_step(tmp_path, capsys):
    """--resume from a mid-epoch checkpoint: the bar starts at the saved step, ends at
    9/9 (not 5/9), and says where it resumed."""
    x, y = data(72)
    model = load_model(_checkpoint_inside_epoch(tmp_path, x, y))
    capsys.readouterr()
    model.fit(x, y, batch_size=8, epochs=2, verbose=1)
    out = capsys.readouterr().out
    first, second = out.split("Epoch 2/2", 1)
    assert "Epoch 1/2 (resumed at step 4 of 9)" in first
    assert re.findall(r"\b(\d)/9\b", first)[0] == "4"        # the first draw: 4 of 9 done
    assert re.findall(r"\b(\d)/9\b", first)[-1] == "9"
    assert "resumed" not in second and re.findall(r"\b(\d)/9\b", second)[0] == "0"
