"""Training that survives: interruption, resume, crashes while saving, divergence, bad
input, long runs and determinism.

Subprocess tests drive tests/_train_script.py, which holds the exact run (model, data,
data order) that the in-process reference here repeats.
"""

import contextlib
import gc
import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minidl
import _train_script as script
from minidl import callbacks, io as minidl_io, layers as L, optimizers as O
from minidl.data import ArrayIterator, Augment
from minidl.models import ModelFileError, Sequential, load_model, minidl_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "_train_script.py")
BACKENDS = minidl.available_backends()
EXACT_BACKENDS = [b for b in ("numpy", "cpu") if b in BACKENDS]
EPOCHS = 3
STEPS = -(-script.SAMPLES // script.BATCH)
TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def restore_backend():
    yield
    minidl.set_backend("numpy")


_references = {}


def reference(backend, source):
    """(weights, optimizer iterations) of an uninterrupted EPOCHS-epoch run, computed once."""
    key = (backend, source)
    if key not in _references:
        _references[key] = script.reference_weights(backend, source, EPOCHS)
    return _references[key]


def assert_same_weights(actual, expected):
    assert len(actual) == len(expected)
    for i, (a, b) in enumerate(zip(actual, expected)):
        assert a.shape == b.shape, f"weight {i}"
        np.testing.assert_array_equal(a, b, err_msg=f"weight {i} differs")


def start_training(tmp_path, backend, source, pause_at, wait_for_signal, save_freq=None,
                   extra=()):
    """A training subprocess held at pause_at=(epoch, step); returns (process, checkpoint)."""
    checkpoint = tmp_path / "ckpt.minidl"
    command = [sys.executable, SCRIPT, backend, source, str(checkpoint), str(EPOCHS),
               "--pause-at", f"{pause_at[0]}:{pause_at[1]}"] + (["--wait"] if wait_for_signal else [])
    command += (["--save-freq", str(save_freq)] if save_freq else []) + list(extra)
    proc = spawn(command, tmp_path)
    read_until(proc, f"PAUSED {pause_at[0]} {pause_at[1]}")
    return proc, checkpoint


def spawn(command, cwd):
    """A subprocess whose output lines a thread hands over as they come (a select() on the
    pipe would miss lines already pulled into the reader's buffer)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=str(cwd), env=dict(os.environ, PYTHONPATH=ROOT))
    proc.lines, proc.seen = queue.Queue(), []

    def pump():
        for line in proc.stdout:
            proc.lines.put(line)
        proc.lines.put(None)
    threading.Thread(target=pump, daemon=True).start()
    return proc


def read_until(proc, marker, timeout=TIMEOUT_S):
    """Read proc's output up to and including the line that starts with marker."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = proc.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            line = None
        if line is None:
            proc.kill()
            proc.wait()
            raise AssertionError(f"the training subprocess never printed {marker!r}; output:\n"
                                 + "".join(proc.seen))
        proc.seen.append(line)
        if line.startswith(marker):
            return


def finish(proc):
    """Wait for proc to end; returns its whole output."""
    try:
        proc.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the training subprocess did not stop:\n" + "".join(proc.seen))
    while (line := proc.lines.get(timeout=TIMEOUT_S)) is not None:
        proc.seen.append(line)
    return "".join(proc.seen)


def resume(checkpoint, backend, source):
    """Continue a run from its checkpoint the documented way; returns the model."""
    minidl.set_backend(backend)
    model = load_model(checkpoint)
    script.fit(model, source, EPOCHS, initial_epoch=model.trained_epochs)
    return model


def no_temporary_files(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []


# ---------------------------------------------------------------- 1. SIGINT / SIGTERM
@pytest.mark.parametrize("signum, source, pause_at", [
    (signal.SIGINT, "arrays", (1, 4)),
    (signal.SIGTERM, "arrays", (1, 4)),
    (signal.SIGINT, "iterator", (1, 4)),
    (signal.SIGINT, "arrays", (0, 4)),   # the first epoch: nothing completed yet
], ids=["sigint", "sigterm", "sigint-iterator", "sigint-first-epoch"])
def test_signal_finishes_the_step_saves_then_raises_and_resumes_exactly(
        tmp_path, signum, source, pause_at):
    """The signal arrives before step S of epoch E runs: that step still runs, the
    ModelCheckpoint file is written complete with the position (E, S + 1), fit raises
    KeyboardInterrupt only after saving, and resuming from the file ends bitwise equal to
    an uninterrupted run."""
    proc, checkpoint = start_training(tmp_path, "numpy", source, pause_at, wait_for_signal=True)
    proc.send_signal(signum)
    out = finish(proc)
    assert proc.returncode == 3, out
    assert "SIGNAL RECORDED" in out, out
    saved_at = out.index(f"Interrupted: saved the model to {checkpoint}")
    raised_at = out.index(f"KeyboardInterrupt: training interrupted in epoch {pause_at[0] + 1} "
                          f"after step {pause_at[1] + 1}")
    assert saved_at < raised_at
    assert no_temporary_files(tmp_path)

    model = load_model(checkpoint)
    assert model.trained_epochs == pause_at[0]
    assert model.fit_state["epoch"] == pause_at[0]
    assert model.fit_state["step"] == pause_at[1] + 1       # the step in flight finished
    assert model.optimizer.iterations == pause_at[0] * STEPS + pause_at[1] + 1

    resumed = resume(checkpoint, "numpy", source)
    weights, iterations = reference("numpy", source)
    assert resumed.optimizer.iterations == iterations
    assert_same_weights(resumed.get_weights(), weights)


@pytest.mark.parametrize("epoch", [0, EPOCHS - 1])
def test_signal_at_an_epoch_end_stops_there(tmp_path, epoch):
    """Ctrl-C during the epoch-end callbacks (or validation) stops before another step and
    is not lost after the last epoch: fit saves the end-of-epoch position and raises
    KeyboardInterrupt instead of returning as if nothing happened."""
    proc, checkpoint = start_training(tmp_path, "numpy", "arrays", (epoch, "end"),
                                      wait_for_signal=True)
    proc.send_signal(signal.SIGINT)
    out = finish(proc)
    assert proc.returncode == 3, out
    assert "FINISHED" not in out and f"Interrupted: saved the model to {checkpoint}" in out
    assert f"KeyboardInterrupt: training interrupted after epoch {epoch + 1}" in out
    model = load_model(checkpoint)
    assert (model.trained_epochs, model.fit_state["epoch"], model.fit_state["step"]) == \
        (epoch + 1, epoch + 1, 0)
    assert model.optimizer.iterations == (epoch + 1) * STEPS     # not one step more
    resumed = resume(checkpoint, "numpy", "arrays")
    weights, iterations = reference("numpy", "arrays")
    assert resumed.optimizer.iterations == iterations
    assert_same_weights(resumed.get_weights(), weights)


def test_second_signal_while_saving_stops_at_once_leaving_the_previous_file(tmp_path):
    """A second Ctrl-C while the interrupted save is half written stops at once: the
    temporary file is removed and the checkpoint of the last completed epoch stays."""
    proc, checkpoint = start_training(tmp_path, "numpy", "arrays", (1, 2), wait_for_signal=True,
                                         extra=["--slow-interrupted-save"])
    proc.send_signal(signal.SIGINT)
    read_until(proc, "SAVING")
    proc.send_signal(signal.SIGINT)
    out = finish(proc)
    assert proc.returncode == 3 and "SAVE WAIT TIMED OUT" not in out, out
    assert "Interrupted: saved" not in out
    assert no_temporary_files(tmp_path)
    model = load_model(checkpoint)
    assert (model.trained_epochs, model.fit_state["step"]) == (1, 0)


# ---------------------------------------------------------------- 2. SIGKILL
@pytest.mark.parametrize("source", ["arrays", "iterator"])
@pytest.mark.parametrize("backend", EXACT_BACKENDS)
def test_sigkill_mid_epoch_then_resume_from_epoch_checkpoint_is_exact(tmp_path, backend, source):
    """Killed without warning in the middle of the last epoch, the run resumes from the
    checkpoint of the epoch before and ends with the weights of an uninterrupted run
    (same shuffled order, augmentation and dropout masks)."""
    proc, checkpoint = start_training(tmp_path, backend, source, (EPOCHS - 1, 4),
                                         wait_for_signal=False)
    proc.send_signal(signal.SIGKILL)
    finish(proc)
    assert proc.returncode == -signal.SIGKILL

    minidl.set_backend(backend)
    model = load_model(checkpoint)
    assert model.trained_epochs == EPOCHS - 1
    assert model.fit_state["step"] == 0
    resumed = resume(checkpoint, backend, source)
    weights, iterations = reference(backend, source)
    assert resumed.optimizer.iterations == iterations
    assert_same_weights(resumed.get_weights(), weights)


@pytest.mark.parametrize("source", ["arrays", "iterator"])
def test_sigkill_then_resume_from_a_mid_epoch_batch_checkpoint_is_exact(tmp_path, source):
    """ModelCheckpoint(save_freq=4) saves inside epochs: a file written after step 4 of
    epoch 1 records that position, so the resumed run skips the 4 steps it already
    trained instead of repeating them."""
    proc, checkpoint = start_training(tmp_path, "numpy", source, (1, 6),
                                         wait_for_signal=False, save_freq=4)
    proc.send_signal(signal.SIGKILL)
    finish(proc)
    model = load_model(checkpoint)
    # 9 steps an epoch: saves after global steps 4 and 8 (epoch 0), then 12 (step 3 of epoch 1)
    assert model.optimizer.iterations == 12
    assert (model.trained_epochs, model.fit_state["epoch"], model.fit_state["step"]) == (1, 1, 3)
    resumed = resume(checkpoint, "numpy", source)
    weights, iterations = reference("numpy", source)
    assert resumed.optimizer.iterations == iterations
    assert_same_weights(resumed.get_weights(), weights)


# ---------------------------------------------------------------- 3. crash-safe files
@pytest.mark.parametrize("kind", ["model", "weights", "csv"])
def test_sigkill_while_writing_leaves_the_previous_complete_file(tmp_path, kind):
    """The process dies (SIGKILL) after writing half of the new file's bytes: the final
    name still holds the first, complete file; the half-written bytes exist only in a
    temporary file beside it."""
    path = tmp_path / f"out.{kind}"
    proc = subprocess.run([sys.executable, SCRIPT, "--crash-save", kind, str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT),
                          timeout=TIMEOUT_S)
    assert proc.returncode == -signal.SIGKILL, proc.stdout
    assert "FIRST SAVED" in proc.stdout and "SECOND SAVE RETURNED" not in proc.stdout
    fresh = script.build_model("numpy")   # the weights of the first save
    if kind == "model":
        model = load_model(path)
        assert model.trained_epochs == 0 and model.optimizer.iterations == 0
        assert_same_weights(model.get_weights(), fresh.get_weights())
    elif kind == "weights":
        other = script.build_model("numpy")
        other.set_weights([np.zeros_like(w) for w in other.get_weights()])
        other.load_weights(path)
        assert_same_weights(other.get_weights(), fresh.get_weights())
    else:
        assert path.read_text() == ("epoch,accuracy,loss,val_accuracy,val_loss\n"
                                    "0,0.25,0.5,NA,NA\n")
    partial = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(partial) == 1 and partial[0].stat().st_size > 0   # the crash hit mid-write


class _DiskFull:
    """A file proxy whose large writes put half the bytes down, then fail like a full disk."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        if len(data) >= 64:
            self._f.write(data[: len(data) // 2])
            raise OSError(28, "No space left on device")
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)


@pytest.fixture
def disk_full(monkeypatch):
    """From now on every file minidl writes fails half way through."""
    real = minidl_io.atomic_write

    @contextlib.contextmanager
    def failing(path, mode="wb"):
        with real(path, mode) as f:
            yield _DiskFull(f)

    def start():
        monkeypatch.setattr(minidl_files, "atomic_write", failing)
        monkeypatch.setattr(callbacks.csv_logger, "atomic_write", failing)
    return start


@pytest.mark.parametrize("kind", ["checkpoint", "csv"])
def test_write_errors_during_fit_keep_previous_checkpoint_and_log(tmp_path, disk_full, kind):
    """A full disk at the second epoch's ModelCheckpoint / CSVLogger write raises the
    OSError out of fit and leaves the first epoch's file complete, with no debris."""
    path = tmp_path / ("ckpt.minidl" if kind == "checkpoint" else "log.csv")

    class FailFromEpoch(callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1:
                disk_full()

    writer = (callbacks.ModelCheckpoint(str(path)) if kind == "checkpoint"
              else callbacks.CSVLogger(str(path)))
    model = script.build_model("numpy")
    with pytest.raises(OSError, match="No space left"):
        script.fit(model, "arrays", EPOCHS, extra_callbacks=[FailFromEpoch(), writer])
    assert no_temporary_files(tmp_path)
    if kind == "checkpoint":
        assert load_model(path).trained_epochs == 1
    else:
        rows = path.read_text().splitlines()
        assert len(rows) == 2 and rows[1].startswith("0,")


def _saved_model_bytes(tmp_path):
    model = script.build_model("numpy")
    script.fit(model, "arrays", 1)
    path = tmp_path / "good.minidl"
    model.save(path)
    return model, path.read_bytes()


def test_every_truncation_and_byte_flip_raises_model_file_error(tmp_path):
    """Any prefix of a model file, and the file with any one byte changed, either loads
    the original weights (a byte the format does not check, such as a timestamp) or
    raises ModelFileError naming the file: never another exception, never other weights."""
    model, data = _saved_model_bytes(tmp_path)
    bad = tmp_path / "bad.minidl"
    cuts = sorted(set(np.linspace(0, len(data) - 1, 60).astype(int)) | {len(data) - 1})
    for cut in cuts:
        bad.write_bytes(data[:cut])
        with pytest.raises(ModelFileError, match="bad.minidl"):
            load_model(bad)
    rng = np.random.default_rng(0)
    for position in sorted(set(rng.integers(0, len(data), 150)) | set(range(0, 64))
                           | set(range(len(data) - 64, len(data)))):
        flipped = bytearray(data)
        flipped[position] ^= 0x5A
        bad.write_bytes(bytes(flipped))
        try:
            loaded = load_model(bad)
        except ModelFileError as exc:
            assert "bad.minidl" in str(exc)
            continue
        assert_same_weights(loaded.get_weights(), model.get_weights())


def test_model_files_hold_no_pickles(tmp_path):
    """Every member is JSON or an npz of plain numeric arrays that loads with
    allow_pickle=False."""
    _, data = _saved_model_bytes(tmp_path)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert sorted(z.namelist()) == ["minidl_model.json", "optimizer.npz", "weights.npz"]
        json.loads(z.read("minidl_model.json"))
        for member in ("optimizer.npz", "weights.npz"):
            with np.load(io.BytesIO(z.read(member)), allow_pickle=False) as npz:
                for key in npz.files:
                    assert npz[key].dtype != object and np.issubdtype(npz[key].dtype, np.number)


def _rewrite(path, data, **replace):
    """A copy of the model file `data` with some members replaced, written to path."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        files = {name: z.read(name) for name in z.namelist()}
    files.update(replace)
    with zipfile.ZipFile(path, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)
    return files


def _npz(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)   # allow_pickle defaults to True here: object arrays are pickled
    return buf.getvalue()


def test_crafted_model_files_raise_model_file_error(tmp_path):
    """Object arrays (pickles), non-numeric weights, odd weight names and header fields of
    the wrong type are refused with ModelFileError naming the file and the problem."""
    _, data = _saved_model_bytes(tmp_path)
    path = tmp_path / "crafted.minidl"
    files = _rewrite(path, data)
    weights = dict(np.load(io.BytesIO(files["weights.npz"])))
    first = sorted(weights)[0]
    header = json.loads(files["minidl_model.json"])

    def rejects(pattern, **replace):
        _rewrite(path, data, **replace)
        with pytest.raises(ModelFileError, match=r"crafted\.minidl.*" + pattern):
            load_model(path)

    pickled = dict(weights, **{first: np.array([{"boom": 1}], dtype=object)})
    rejects(r"weights\.npz.*pickle", **{"weights.npz": _npz(pickled)})
    optimizer = dict(np.load(io.BytesIO(files["optimizer.npz"])))
    optimizer["iterations"] = np.array([print], dtype=object)
    rejects(r"optimizer\.npz.*pickle", **{"optimizer.npz": _npz(optimizer)})
    rejects(r"dtype <U", **{"weights.npz": _npz(dict(weights, **{first: np.full(3, "ab")}))})
    rejects(r"'junk'", **{"weights.npz": _npz(dict(weights, junk=np.zeros(2)))})
    for field, value in [("trained_epochs", "3"), ("trained_epochs", -1), ("seed", None),
                         ("fit_state", [0, 1]), ("fit_state", {"epoch": 1, "step": "x"}),
                         ("compile", "adam"), ("compile", {"optimizer": 3})]:
        rejects(field, **{"minidl_model.json": json.dumps(dict(header, **{field: value}))})
    rejects("object", **{"minidl_model.json": b"[1, 2]"})
    rejects("compile settings", **{"minidl_model.json": json.dumps(dict(
        header, compile=dict(header["compile"], loss="no_such_loss")))})


# ---------------------------------------------------------------- 4. divergence
def _diverging_run(backend, epochs, verbose, extra_callbacks=()):
    """A linear regression whose learning rate jumps to 1e20 in the second epoch: the loss
    overflows a few batches in. Returns (history, per-batch (epoch, batch, loss), model)."""
    minidl.set_backend(backend)
    minidl.set_seed(3)
    rng = np.random.default_rng(0)
    x = rng.normal(0, 10, size=(80, 4)).astype(np.float32)
    y = x @ rng.normal(size=(4, 2)).astype(np.float32)
    model = Sequential([L.Input((4,)), L.Dense(2)])
    model.compile(optimizer=O.SGD(1e-3), loss="mse")
    seen = []

    class Record(callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            seen.append((self.epoch, batch, float(logs["loss"])))

    schedule = callbacks.LearningRateScheduler(lambda epoch: 1e-3 if epoch == 0 else 1e20)
    history = model.fit(x, y, batch_size=10, epochs=epochs, verbose=verbose,
                        callbacks=[schedule, Record()] + list(extra_callbacks))
    return history, seen, model


@pytest.mark.parametrize("backend", BACKENDS)
def test_terminate_on_nan_stops_at_the_first_bad_batch_and_names_it(backend, capsys):
    history, seen, model = _diverging_run(backend, 4, 0, [callbacks.TerminateOnNaN()])
    bad = [(e, b) for e, b, loss in seen if not np.isfinite(loss)]
    assert bad, seen
    epoch, batch = bad[0]
    assert epoch == 1                           # epoch 0 trains normally
    assert seen[-1][:2] == (epoch, batch)       # not one batch more
    assert model.optimizer.iterations == len(seen)
    assert len(history.history["loss"]) == epoch + 1   # no further epoch
    out = capsys.readouterr().out
    assert f"Batch {batch}, epoch {epoch}: invalid loss" in out
    assert "terminating training" in out


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_diverged_epoch_never_replaces_the_last_loadable_checkpoint(backend, tmp_path):
    """TerminateOnNaN stops epoch 2 at its first NaN batch, and its epoch end still runs:
    ModelCheckpoint does not replace epoch 1's file with NaN weights (which load_model
    would refuse), it warns and keeps it."""
    path = tmp_path / "ckpt.minidl"
    with pytest.warns(UserWarning, match="not saving.*NaN or infinite"):
        history, seen, model = _diverging_run(
            backend, 4, 0, [callbacks.TerminateOnNaN(), callbacks.ModelCheckpoint(str(path))])
    assert len(history.history["loss"]) == 2 and not np.isfinite(history.history["loss"][-1])
    minidl.set_backend(backend)
    saved = load_model(path)
    assert saved.trained_epochs == 1
    assert all(np.all(np.isfinite(w)) for w in saved.get_weights())
    assert no_temporary_files(tmp_path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_terminate_on_nan_training_continues_showing_nan(backend, capsys):
    """Keras behaviour: the progress bar shows the non-finite loss as it is and every
    epoch runs."""
    history, seen, model = _diverging_run(backend, 3, 1)
    out = capsys.readouterr().out
    assert len(history.history["loss"]) == 3 and len(seen) == 3 * 8
    assert model.optimizer.iterations == 3 * 8
    assert not np.isfinite(history.history["loss"][-1])
    assert "Epoch 3/3" in out
    assert "loss: nan" in out or "loss: inf" in out
    assert "Traceback" not in out


# ---------------------------------------------------------------- 5. malformed input
N = 12
X_OK = np.random.default_rng(0).random((N,) + script.IMAGE, dtype=np.float32)
Y_OK = np.arange(N) % 3
IMAGES_OK = np.zeros((N,) + script.IMAGE, dtype=np.uint8)


def _with_value(array, index, value):
    array = array.astype(np.float32 if np.isfinite(value) else np.float64).copy()
    array.flat[index % array.size] = value
    return array


# Each strategy draws (pattern, call): call(model) must raise ValueError or TypeError whose
# message matches pattern (it names the argument at fault).
class _Case:
    def __init__(self, pattern, call, args):
        self.pattern, self.call, self.args = pattern, call, args

    def __call__(self, model):
        return self.call(model, *self.args)

    def __repr__(self):  # names the case by its line here, so a failure is easy to find
        return (f"<case at line {self.call.__code__.co_firstlineno}: expects {self.pattern!r}, "
                f"args {self.args!r}>")


def _case(pattern, call, *strategies):
    return st.tuples(*strategies).map(lambda args: _Case(pattern, call, args))


_not_arrays = st.sampled_from([None, 5, "images", {"x": 1}, object()])
_bad_dtype_x = st.sampled_from(["str", "object", "datetime", "complex"]).map(
    lambda kind: {"str": np.full((N,) + script.IMAGE, "a"),
                  "object": np.empty((N,) + script.IMAGE, dtype=object),
                  "datetime": np.zeros((N,) + script.IMAGE, dtype="datetime64[s]"),
                  "complex": X_OK + 1j}[kind])
_bad_shape_x = st.lists(st.integers(0, 9), min_size=0, max_size=5).filter(
    lambda s: tuple(s[1:]) != script.IMAGE or (s and s[0] == 0)).map(
    lambda s: np.zeros(s, dtype=np.float32))
_non_finite_x = st.tuples(st.integers(0, 10**6), st.sampled_from([np.nan, np.inf, -np.inf])).map(
    lambda a: _with_value(X_OK, *a))
_bad_x = st.one_of(_not_arrays, _bad_dtype_x, _bad_shape_x, _non_finite_x)

_bad_labels = st.one_of(
    st.just(Y_OK + 0j),                                                           # complex
    st.integers(3, 10**6).map(lambda v: np.where(Y_OK == 0, v, Y_OK)),            # too large
    st.integers(-10**6, -1).map(lambda v: np.where(Y_OK == 0, v, Y_OK)),           # negative
    st.floats(0.01, 1.99).filter(lambda v: v != 1.0).map(lambda v: Y_OK + v - 1 + (Y_OK == 0)),
    st.sampled_from([np.nan, np.inf]).map(lambda v: _with_value(Y_OK, 0, v)),
    st.just(np.full(N, "1")), st.just(np.array([None] * N, dtype=object)),
    st.just(np.zeros((N, 3))),                                                    # one-hot, sparse loss
    st.integers(0, 30).filter(lambda n: n != N).map(lambda n: np.arange(n) % 3))  # length
_bad_positive_int = st.one_of(st.integers(-5, 0), st.floats(0.5, 9.5), st.just(True),
                              st.sampled_from(["8", [4], np.float64(4.0)]))

_fit = lambda model, **kw: model.fit(**dict(dict(x=X_OK, y=Y_OK, verbose=0), **kw))  # noqa: E731

MODEL_CASES = st.one_of(
    _case(r"\bx\b", lambda m, x: _fit(m, x=x), _bad_x),
    _case(r"\by\b", lambda m, y: _fit(m, y=y), _bad_labels),
    _case(r"\bx\b", lambda m, x: m.evaluate(x, Y_OK), _bad_x),
    _case(r"\by\b", lambda m, y: m.evaluate(X_OK, y), _bad_labels),
    _case(r"\bx\b", lambda m, x: m.predict(x), _bad_x),
    _case(r"\bx\b", lambda m, x: m.predict_on_batch(x), _bad_x),
    _case(r"\bx\b", lambda m, x: m.train_on_batch(x, Y_OK), _bad_x),
    _case(r"\by\b", lambda m, y: m.train_on_batch(X_OK, y), _bad_labels),
    _case(r"\by\b", lambda m, y: m.test_on_batch(X_OK, y), _bad_labels),
    _case("batch_size", lambda m, b: _fit(m, batch_size=b), _bad_positive_int),
    _case("batch_size", lambda m, b: m.evaluate(X_OK, Y_OK, batch_size=b), _bad_positive_int),
    _case("batch_size", lambda m, b: m.predict(X_OK, batch_size=b), _bad_positive_int),
    _case("epochs", lambda m, e: _fit(m, epochs=e), _bad_positive_int),
    _case("steps_per_epoch", lambda m, s: _fit(m, steps_per_epoch=s), _bad_positive_int),
    _case("steps", lambda m, s: m.evaluate(X_OK, Y_OK, steps=s), _bad_positive_int),
    _case("initial_epoch", lambda m, e: _fit(m, initial_epoch=e),
          st.one_of(st.integers(-9, -1), st.floats(0.5, 3.5), st.just("1"))),
    _case("verbose", lambda m, v: _fit(m, verbose=v), st.sampled_from([3, -1, "yes", 1.5])),
    _case("validation_split", lambda m, v: _fit(m, validation_split=v),
          st.one_of(st.floats(-5, -0.01), st.floats(1.0, 5), st.just("0.2"), st.just(np.nan))),
    _case("validation_data", lambda m, v: _fit(m, validation_data=v),
          st.sampled_from([X_OK, (X_OK,), (X_OK, Y_OK, Y_OK, Y_OK), "data"])),
    _case("callbacks", lambda m, c: _fit(m, callbacks=c), st.sampled_from(["cb", [1], [None]])),
    _case("optimizer", lambda m, o: m.compile(optimizer=o, loss="sparse_categorical_crossentropy"),
          st.sampled_from(["nope", 5, [O.SGD()]])),
    _case("loss", lambda m, v: m.compile(optimizer="sgd", loss=v), st.sampled_from(["nope", 5])),
    _case("metric", lambda m, v: m.compile(optimizer="sgd", loss="sparse_categorical_crossentropy",
                                           metrics=v), st.sampled_from(["accuracy", ["nope"], 5])),
    _case("weights", lambda m, w: m.set_weights(w), st.sampled_from([5, None, np.zeros(3), "w"])),
    _case("filepath", lambda m, p: m.save(p), st.sampled_from([5, None, ["m.minidl"]])),
    _case("filepath", lambda m, p: m.save_weights(p), st.sampled_from([5, None])),
    _case("filepath", lambda m, p: m.load_weights(p), st.sampled_from([5, None])),
    _case("filepath", lambda m, p: load_model(p), st.sampled_from([5, None, b"\xff"[0]])),
)

_bad_size = st.one_of(st.integers(-3, 0), st.floats(0.5, 3.5), st.sampled_from(["3", None, True]))
_bad_pair = st.one_of(_bad_size.map(lambda v: (v, 3)), st.just((3,)), st.just((3, 3, 3)),
                      st.just("3x3"))
_bad_rate = st.one_of(st.floats(-5, -0.01), st.floats(1.0, 5), st.sampled_from(["0.5", np.nan]))
_not_a_number = st.sampled_from(["0.1", None, [0.1], np.nan, np.inf])

CONSTRUCTOR_CASES = st.one_of(
    _case("units", lambda m, u: L.Dense(u), _bad_size),
    _case("activation", lambda m, a: L.Dense(4, activation=a), st.sampled_from(["nope", 5])),
    _case("filters", lambda m, f: L.Conv2D(f, 3), _bad_size),
    _case("kernel_size", lambda m, k: L.Conv2D(4, k), st.one_of(_bad_size, _bad_pair)),
    _case("strides", lambda m, s: L.Conv2D(4, 3, strides=s), st.one_of(_bad_size, _bad_pair)),
    _case("padding", lambda m, p: L.Conv2D(4, 3, padding=p), st.sampled_from(["full", 1, None])),
    _case("pool_size", lambda m, p: L.MaxPooling2D(p), st.one_of(_bad_size, _bad_pair)),
    _case("strides", lambda m, s: L.AveragePooling2D(2, strides=s),   # None: strides = pool_size
          st.one_of(_bad_size, _bad_pair).filter(lambda v: v is not None)),
    _case("padding", lambda m, p: L.MaxPooling2D(2, padding=p), st.sampled_from(["full", 0])),
    _case("rate", lambda m, r: L.Dropout(r), _bad_rate),
    _case("momentum", lambda m, v: L.BatchNormalization(momentum=v),
          st.one_of(_bad_rate, st.just(None))),
    _case("epsilon", lambda m, v: L.BatchNormalization(epsilon=v),
          st.one_of(st.floats(-5, 0), _not_a_number)),
    _case("target_shape", lambda m, s: L.Reshape(s), st.sampled_from([(0,), (-2,), "x", (2.5,), 5])),
    _case("padding", lambda m, p: L.ZeroPadding2D(p),
          st.one_of(st.integers(-5, -1), st.integers(-5, -1).map(lambda v: (v, 1)),
                    st.sampled_from([(1,), (1, 1, 1), "1"]))),
    _case("shape", lambda m, s: L.Input(s), st.sampled_from([(0,), (-1, 3), "x", (2.5,)])),   # () is one value a sample, as in Keras
    _case("negative_slope", lambda m, v: L.LeakyReLU(v), st.sampled_from(["x", None, np.nan])),
    _case("name", lambda m, v: L.Dense(3, name=v), st.sampled_from(["", 5, ["a"]])),
)

_optimizers = st.sampled_from([O.SGD, O.RMSprop, O.Adam, O.Adagrad])
OPTIMIZER_CASES = st.one_of(
    _case("learning_rate", lambda m, cls, v: cls(learning_rate=v), _optimizers,
          st.one_of(st.floats(-5, -1e-9), _not_a_number)),
    _case("clipnorm", lambda m, cls, v: cls(clipnorm=v), _optimizers,
          st.one_of(st.floats(-5, 0), _not_a_number.filter(lambda v: v is not None))),
    _case("clipvalue", lambda m, cls, v: cls(clipvalue=v), _optimizers,
          st.one_of(st.floats(-5, 0), st.sampled_from(["1", np.nan]))),
    _case("weight_decay", lambda m, cls, v: cls(weight_decay=v), _optimizers,
          st.one_of(st.floats(-5, -1e-9), st.sampled_from(["1", np.nan]))),
    _case("momentum", lambda m, v: O.SGD(momentum=v), st.one_of(st.floats(-5, -0.01),
                                                                 st.floats(1.01, 5), _not_a_number)),
    _case("beta_1", lambda m, v: O.Adam(beta_1=v), st.one_of(_bad_rate, st.just(None))),
    _case("beta_2", lambda m, v: O.Adam(beta_2=v), st.one_of(_bad_rate, st.just(None))),
    _case("epsilon", lambda m, cls, v: cls(epsilon=v), st.sampled_from([O.RMSprop, O.Adam, O.Adagrad]),
          st.one_of(st.floats(-5, -1e-9), _not_a_number)),
    _case("rho", lambda m, v: O.RMSprop(rho=v), st.one_of(_bad_rate, st.just(None))),
    _case("initial_accumulator_value", lambda m, v: O.Adagrad(initial_accumulator_value=v),
          st.one_of(st.floats(-5, -1e-9), _not_a_number)),
)

_bad_images = st.one_of(
    st.just(np.zeros((N, 8, 8), dtype=np.uint8)), st.just(np.zeros((N, 8), dtype=np.uint8)),
    st.just(np.zeros((0, 8, 8, 3), dtype=np.uint8)), st.just(np.full((N, 8, 8, 3), "a")),
    st.just(np.empty((N, 8, 8, 3), dtype=object)), st.just("images"), st.just(None))
ITERATOR_CASES = st.one_of(
    _case(r"\bx\b", lambda m, x: ArrayIterator(x, Y_OK), _bad_images),
    _case(r"\by\b", lambda m, n: ArrayIterator(IMAGES_OK, np.arange(n)),
          st.integers(0, 30).filter(lambda n: n != N)),
    _case("batch_size", lambda m, b: ArrayIterator(IMAGES_OK, Y_OK, batch_size=b), _bad_positive_int),
    _case("augment", lambda m, a: ArrayIterator(IMAGES_OK, Y_OK, augment=a),
          st.sampled_from(["flip", {"pad": 1}, 1])),
    _case("mean", lambda m, v: ArrayIterator(IMAGES_OK, Y_OK, mean=v, std=1.0),
          st.sampled_from([[0.1, 0.2], [np.nan] * 3, "zero", np.zeros((2, 3))])),
    _case("std", lambda m, v: ArrayIterator(IMAGES_OK, Y_OK, mean=0.0, std=v),
          st.sampled_from([0.0, -1.0, [1.0, 0.0, 1.0], [1.0, 1.0], np.inf, "one"])),
    _case("kernel", lambda m, k: ArrayIterator(IMAGES_OK, Y_OK, kernel=k),
          st.sampled_from(["gpu", None, 1])),
    _case("pad", lambda m, p: Augment(pad=p), st.one_of(st.integers(-5, -1), st.floats(0.5, 2.5),
                                                       st.just("1"))),
    _case("crop", lambda m, c: Augment(crop=c), _bad_pair),
    _case("crop", lambda m, c: ArrayIterator(IMAGES_OK, Y_OK, augment=Augment(crop=c)),
          st.tuples(st.integers(9, 20), st.integers(1, 20))),
    _case(r"\by\b", lambda m, y: m.fit(ArrayIterator(IMAGES_OK, Y_OK), y, verbose=0),
          st.just(Y_OK)),
    _case("validation_split", lambda m, v: m.fit(ArrayIterator(IMAGES_OK, Y_OK),
                                                 validation_split=v, verbose=0),
          st.floats(0.1, 0.9)),
    _case(r"\by\b|targets", lambda m, y: m.fit(ArrayIterator(IMAGES_OK, y), verbose=0),
          st.sampled_from([Y_OK + 3, np.full(N, "1"), np.zeros((N, 3))])),
)


@pytest.fixture(scope="module")
def models():
    """One compiled model per backend, shared by the hypothesis examples."""
    built = {backend: script.build_model(backend) for backend in BACKENDS}
    minidl.set_backend("numpy")
    return built


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=st.one_of(MODEL_CASES, CONSTRUCTOR_CASES, OPTIMIZER_CASES, ITERATOR_CASES))
def test_malformed_input_raises_value_or_type_error_naming_the_argument(models, backend, case):
    pattern, call = case.pattern, case
    minidl.set_backend(backend)
    model = models[backend]
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises((ValueError, TypeError)) as info:
        call(model)
    assert re.search(pattern, str(info.value)), \
        f"message does not name {pattern!r}: {type(info.value).__name__}: {info.value}"
    for a, b in zip(model.get_weights(), before):  # a refused call trains nothing
        np.testing.assert_array_equal(a, b)
    assert model.compiled and model.optimizer.built      # and leaves the model usable


def test_complex_inputs_are_refused_not_truncated(models):
    """fit(X + 1j, Y) used to train on the real part with only a ComplexWarning."""
    model = models["numpy"]
    for call in (lambda: model.fit(X_OK + 1j, Y_OK, verbose=0), lambda: model.predict(X_OK + 1j),
                 lambda: model.train_on_batch(X_OK.astype(np.complex64), Y_OK)):
        with pytest.raises(TypeError, match=r"^x: complex values \(dtype complex"):
            call()
    with pytest.raises(TypeError, match=r"^y: complex targets"):
        model.fit(X_OK, Y_OK + 0j, verbose=0)


# ---------------------------------------------------------------- 6. flat memory
def _resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_and_device_buffers_stay_flat_over_epochs(backend, monkeypatch):
    """After the first epoch (which allocates every buffer once), further epochs with
    validation allocate no backend tensors (nor OpenCL buffers), Python/numpy allocations
    (tracemalloc) grow by less than 64 KiB and resident memory (which also sees C
    allocations, but only once freed heap space is used up) by less than 256 KiB."""
    model = script.build_model(backend)
    x, y = script.make_data()
    x = np.tile(x.astype(np.float32) / 255.0, (2, 1, 1, 1))   # 18 steps an epoch
    y = np.tile(y, 2)
    allocations = []

    def counting(owner, name):
        real = getattr(owner, name)

        def wrapper(*args, **kwargs):
            allocations.append(name)
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, wrapper)

    for name in ("empty", "zeros", "from_numpy"):
        counting(model.backend, name)
    if hasattr(model.backend, "rt"):     # opencl: every buffer comes from its runtime's alloc
        counting(model.backend.rt, "alloc")
    marks = []

    class Measure(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            gc.collect()
            marks.append((_resident_bytes(), len(allocations), tracemalloc.get_traced_memory()[0]))

    tracemalloc.start()
    try:
        model.fit(x, y, batch_size=script.BATCH, epochs=6, verbose=0,
                  validation_data=(x[:20], y[:20]), callbacks=[Measure()])
    finally:
        tracemalloc.stop()
    (rss_first, allocated_first, traced_first), (rss_last, allocated_last, traced_last) = \
        marks[0], marks[-1]
    assert allocated_first > 0                      # the counters do see allocations
    assert allocated_last == allocated_first, allocations[allocated_first:]
    growth = rss_last - rss_first
    print(f"{backend}: resident memory after epoch 1 {rss_first / 2**20:.1f} MiB, "
          f"growth over 5 more epochs {growth / 2**10:.0f} KiB, traced Python/numpy "
          f"allocations {(traced_last - traced_first) / 2**10:.1f} KiB")
    assert traced_last - traced_first < 64 * 2**10, [m[2] for m in marks]
    assert growth < 256 * 2**10, [m[0] for m in marks]


# ---------------------------------------------------------------- 7. determinism
def _seeded_run(backend, source, seed):
    model = script.build_model(backend, seed)
    script.fit(model, source, 2)
    return model.get_weights()


@pytest.mark.parametrize("backend, source", [(b, s) for b in BACKENDS
                                             for s in ("arrays", "iterator")])
def test_same_seed_gives_identical_weights(backend, source):
    """minidl.set_seed(s) fixes initial weights, shuffling, augmentation order and dropout
    masks: two runs give the same weights bit for bit (OpenCL included: its kernels reduce
    in a fixed order), and another seed gives other weights."""
    first = _seeded_run(backend, source, 11)
    assert_same_weights(_seeded_run(backend, source, 11), first)
    other = _seeded_run(backend, source, 12)
    assert any(not np.array_equal(a, b) for a, b in zip(other, first))


def test_interrupted_save_fills_file_names_from_the_running_logs(tmp_path, capsys):
    """A checkpoint name with {loss} is filled from the epoch's running loss when Ctrl-C
    arrives; a name that needs a val_ value cannot be, and fit says so instead of staying
    silent about it."""
    class CtrlC(callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                signal.raise_signal(signal.SIGINT)

    model = script.build_model("numpy")
    before = signal.getsignal(signal.SIGINT)   # SIG_IGN when the suite runs in the background
    named = callbacks.ModelCheckpoint(str(tmp_path / "ck-{epoch:02d}-{loss:.3f}.minidl"))
    needs_val = callbacks.ModelCheckpoint(str(tmp_path / "best-{val_loss:.3f}.minidl"))
    with pytest.raises(KeyboardInterrupt, match="epoch 1 after step 3"):
        script.fit(model, "arrays", EPOCHS, extra_callbacks=[named, needs_val, CtrlC()])
    saved = [p.name for p in tmp_path.iterdir()]
    assert len(saved) == 1 and saved[0].startswith("ck-01-") and saved[0] != "ck-01-.minidl"
    assert load_model(tmp_path / saved[0]).fit_state["step"] == 3
    out = capsys.readouterr().out
    assert "nothing saved" in out and "best-{val_loss:.3f}.minidl" in out and "val_loss" in out
    assert signal.getsignal(signal.SIGINT) is before   # handlers restored
