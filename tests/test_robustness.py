"""Training that survives: interruption, resume, crashes while saving, divergence, bad
input, long runs and determinism.

Subprocess tests drive tests/_train_script.py, which holds the exact run (model, data,
data order) that the in-process reference here repeats.
"""

import os
import selectors
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import minidl
import _train_script as script
from minidl.models import ModelFileError, load_model

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


def start_training(tmp_path, backend, source, pause_at, wait_for_signal):
    """A training subprocess held at pause_at=(epoch, step); returns (process, checkpoint)."""
    checkpoint = tmp_path / "ckpt.minidl"
    command = [sys.executable, SCRIPT, backend, source, str(checkpoint), str(EPOCHS),
               "--pause-at", f"{pause_at[0]}:{pause_at[1]}"] + (["--wait"] if wait_for_signal else [])
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=str(tmp_path), env=env)
    seen = read_until(proc, f"PAUSED {pause_at[0]} {pause_at[1]}")
    return proc, checkpoint, seen


def read_until(proc, marker, timeout=TIMEOUT_S):
    """Lines of proc's output up to and including the one starting with marker."""
    lines = []
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                continue
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith(marker):
                return lines
    finally:
        selector.close()
    proc.kill()
    proc.wait()
    raise AssertionError(f"the training subprocess never printed {marker!r}; output:\n"
                         + "".join(lines) + proc.stdout.read())


def finish(proc):
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError("the training subprocess did not stop:\n" + out)
    return out


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
    proc, checkpoint, _ = start_training(tmp_path, "numpy", source, pause_at, wait_for_signal=True)
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


# ---------------------------------------------------------------- 2. SIGKILL
@pytest.mark.parametrize("source", ["arrays", "iterator"])
@pytest.mark.parametrize("backend", EXACT_BACKENDS)
def test_sigkill_mid_epoch_then_resume_from_epoch_checkpoint_is_exact(tmp_path, backend, source):
    """Killed without warning in the middle of the last epoch, the run resumes from the
    checkpoint of the epoch before and ends with the weights of an uninterrupted run
    (same shuffled order, augmentation and dropout masks)."""
    proc, checkpoint, _ = start_training(tmp_path, backend, source, (EPOCHS - 1, 4),
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
    import contextlib

    from minidl import callbacks, io as minidl_io
    from minidl.models import saving

    real = minidl_io.atomic_write

    @contextlib.contextmanager
    def failing(path, mode="wb"):
        with real(path, mode) as f:
            yield _DiskFull(f)

    def start():
        monkeypatch.setattr(saving, "atomic_write", failing)
        monkeypatch.setattr(callbacks, "atomic_write", failing)
    return start


@pytest.mark.parametrize("kind", ["checkpoint", "csv"])
def test_write_errors_during_fit_keep_previous_checkpoint_and_log(tmp_path, disk_full, kind):
    """A full disk at the second epoch's ModelCheckpoint / CSVLogger write raises the
    OSError out of fit and leaves the first epoch's file complete, with no debris."""
    from minidl import callbacks
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
    import io
    import json
    import zipfile
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
    import io
    import zipfile
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        files = {name: z.read(name) for name in z.namelist()}
    files.update(replace)
    with zipfile.ZipFile(path, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)
    return files


def _npz(arrays):
    import io
    buf = io.BytesIO()
    np.savez(buf, **arrays)   # allow_pickle defaults to True here: object arrays are pickled
    return buf.getvalue()


def test_crafted_model_files_raise_model_file_error(tmp_path):
    """Object arrays (pickles), non-numeric weights, odd weight names and header fields of
    the wrong type are refused with ModelFileError naming the file and the problem."""
    import io
    import json
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
