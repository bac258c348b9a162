"""A small training run shared by tests/test_robustness.py and the subprocesses it starts.

As a module: `build_model`, `make_data`, `make_source` and `reference_weights` give the
exact run (model, data, data order) that a subprocess trains, so a test can compare a
resumed run with an uninterrupted one computed in its own process.

As a script (the subprocess side):

    python tests/_train_script.py BACKEND SOURCE CHECKPOINT EPOCHS [--pause-at E:S] [--wait]
                                  [--save-freq N] [--slow-interrupted-save]

trains with a ModelCheckpoint(CHECKPOINT) saving every epoch (or every N batches). With --pause-at E:S it prints
"PAUSED E S" when epoch E (0-based) is about to run step S (0-based, or "end": the end of
the epoch) and then waits there:
until fit's SIGINT/SIGTERM handler has recorded a signal (--wait), or for 60 s (the test
kills it with SIGKILL meanwhile). With --slow-interrupted-save the save that follows the
signal writes half the file, prints "SAVING" and waits for a second signal. Exit codes: 0 finished, 3 fit raised KeyboardInterrupt
(its message is printed on a "KeyboardInterrupt:" line).

    python tests/_train_script.py --crash-save KIND PATH

saves twice to PATH (KIND "model", "weights" or "csv") and, on the second save, kills
itself with SIGKILL after writing half of the bytes of the file, to check that the
crash leaves the first file intact under PATH.
"""

import os
import signal
import sys
import time

import numpy as np

if __name__ == "__main__":  # run as a script from any folder: import the checkout's minidl
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import minidl
from minidl import callbacks, layers, optimizers
from minidl.data import Augment, ArrayIterator
from minidl.models import Sequential

SEED = 1234
SAMPLES = 72
BATCH = 8            # 9 steps per epoch
IMAGE = (8, 8, 3)
PAUSE_LIMIT_S = 60.0


def make_data():
    """uint8 images whose class shows in channel 0, and their labels."""
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, size=SAMPLES)
    x = rng.integers(0, 160, size=(SAMPLES,) + IMAGE).astype(np.uint8)
    x[..., 0] += (y * 40).astype(np.uint8)[:, None, None]
    return x, y


def make_source(source):
    """fit()'s data for SOURCE: "arrays" (x, y, fit shuffles) or "iterator" (an augmenting
    ArrayIterator with its own seeded state)."""
    x, y = make_data()
    if source == "arrays":
        return (x.astype(np.float32) / 255.0, y), {"batch_size": BATCH, "shuffle": True}
    if source == "iterator":
        it = ArrayIterator(x, y, batch_size=BATCH, shuffle=True, seed=99,
                           augment=Augment(pad=1, crop=(8, 8), flip=True), mean=0.5, std=0.25)
        return (it,), {}
    raise ValueError(f"unknown source {source!r}")


def build_model(backend, seed=SEED):
    """A seeded small CNN with Dropout (so dropout seeds matter) and Adam (so optimizer
    slots and its iteration count matter), compiled on BACKEND."""
    minidl.set_backend(backend)
    minidl.set_seed(seed)
    model = Sequential([layers.Input(IMAGE),
                        layers.Conv2D(4, 3, padding="same", activation="relu"),
                        layers.MaxPooling2D(2), layers.Dropout(0.3), layers.Flatten(),
                        layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def fit(model, source, epochs, initial_epoch=0, extra_callbacks=()):
    args, kwargs = make_source(source)
    return model.fit(*args, epochs=epochs, initial_epoch=initial_epoch, verbose=0,
                     callbacks=list(extra_callbacks), **kwargs)


def reference_weights(backend, source, epochs):
    """The weights of an uninterrupted run."""
    model = build_model(backend)
    fit(model, source, epochs)
    return model.get_weights(), model.optimizer.iterations


def fit_signal_recorded():
    """Whether fit's SIGINT/SIGTERM handler (minidl.models.interrupts.InterruptGuard) has seen a signal."""
    owner = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
    return getattr(owner, "signal", None) is not None


class PauseAt(callbacks.Callback):
    """Announce, then hold, the step (epoch, step) before it runs, or with step "end" the
    end of the epoch (after the callbacks before this one, ModelCheckpoint included)."""

    def __init__(self, epoch, step, wait_for_signal):
        super().__init__()
        self.target = (epoch, step)
        self.wait_for_signal = wait_for_signal
        self._epoch = None

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if (self._epoch, batch) == self.target:
            self._hold(batch)

    def on_epoch_end(self, epoch, logs=None):
        if (epoch, "end") == self.target:
            self._hold("end")

    def _hold(self, where):
        print(f"PAUSED {self._epoch} {where}", flush=True)
        deadline = time.monotonic() + PAUSE_LIMIT_S
        while time.monotonic() < deadline:
            if self.wait_for_signal and fit_signal_recorded():
                print("SIGNAL RECORDED", flush=True)
                return
            time.sleep(0.005)
        print("PAUSE TIMED OUT", flush=True)


class _HalfThenWait:
    """A file proxy that writes half of the first large write, says "SAVING" and waits
    (for a second signal, whose KeyboardInterrupt ends the wait)."""

    def __init__(self, f):
        self._f = f
        self._waited = False

    def write(self, data):
        if len(data) >= 64 and not self._waited:
            self._waited = True   # zipfile's clean-up writes after the interrupt pass through
            self._f.write(data[: len(data) // 2])
            print("SAVING", flush=True)
            # Short sleeps: the kernel may hand the signal to another thread (BLAS), and
            # the main thread runs Python's handler only when it next executes bytecode.
            deadline = time.monotonic() + PAUSE_LIMIT_S
            while time.monotonic() < deadline:
                time.sleep(0.005)
            print("SAVE WAIT TIMED OUT", flush=True)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)


def _slow_down_interrupted_saves():
    """Saves made after fit recorded a signal stop half way through their first member."""
    import contextlib
    from minidl import io as minidl_io
    from minidl.models import minidl_files

    @contextlib.contextmanager
    def slow_atomic_write(target, mode="wb"):
        with minidl_io.atomic_write(target, mode) as f:
            yield _HalfThenWait(f) if fit_signal_recorded() else f

    minidl_files.atomic_write = slow_atomic_write


def train_main(argv):
    backend, source, checkpoint, epochs = argv[:4]
    if "--slow-interrupted-save" in argv:
        _slow_down_interrupted_saves()
    pause = None
    if "--pause-at" in argv:
        e, s = argv[argv.index("--pause-at") + 1].split(":")
        pause = PauseAt(int(e), s if s == "end" else int(s), "--wait" in argv)
    save_freq = int(argv[argv.index("--save-freq") + 1]) if "--save-freq" in argv else "epoch"
    model = build_model(backend)
    cbs = [callbacks.ModelCheckpoint(checkpoint, save_freq=save_freq)] + ([pause] if pause else [])
    try:
        fit(model, source, int(epochs), extra_callbacks=cbs)
    except KeyboardInterrupt as exc:
        print(f"KeyboardInterrupt: {exc}", flush=True)
        return 3
    print("FINISHED", flush=True)
    return 0


class _HalfThenKill:
    """A file proxy that writes half of the first large write, then SIGKILLs the process."""

    def __init__(self, f, threshold):
        self._f, self._threshold = f, threshold

    def write(self, data):
        if len(data) >= self._threshold:
            self._f.write(data[: len(data) // 2])
            self._f.flush()
            os.fsync(self._f.fileno())
            os.kill(os.getpid(), signal.SIGKILL)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)


def crash_save_main(kind, path):
    import contextlib
    from minidl import io as minidl_io
    from minidl.models import minidl_files

    model = build_model("numpy")
    x, y = make_data()
    csv_logger = callbacks.CSVLogger(path)
    csv_logger.set_model(model)

    def save(epoch):
        if kind == "model":
            model.save(path)
        elif kind == "weights":
            model.save_weights(path)
        else:
            if epoch == 0:
                csv_logger.on_train_begin()
            csv_logger.on_epoch_end(epoch, {"loss": 0.5 / (epoch + 1), "accuracy": 0.25})

    save(0)
    print("FIRST SAVED", flush=True)

    @contextlib.contextmanager
    def killing_atomic_write(target, mode="wb"):
        with minidl_io.atomic_write(target, mode) as f:
            yield _HalfThenKill(f, threshold=64)

    minidl_files.atomic_write = killing_atomic_write
    callbacks.csv_logger.atomic_write = killing_atomic_write
    model.fit(x.astype(np.float32) / 255.0, y, batch_size=BATCH, epochs=1, verbose=0)
    save(1)
    print("SECOND SAVE RETURNED", flush=True)  # the kill above makes this unreachable
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--crash-save":
        sys.exit(crash_save_main(sys.argv[2], sys.argv[3]))
    sys.exit(train_main(sys.argv[1:]))
