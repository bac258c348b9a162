"""One thread at a time per model: fit, evaluate, predict and the calls that read or change
the weights share the model's step buffers, running metrics and training position, so a
call from a second thread while one runs raises instead of computing wrong outputs or
losing steps. The thread that runs a call may make others (a callback inside fit may
evaluate, predict or save), so the guard is re-entrant."""

import contextlib
import functools
import threading


class ModelInUseError(RuntimeError):
    """A model was used from a second thread while another thread was using it."""


class UseGuard:
    """A re-entrant lock taken without waiting, which remembers the outermost call."""

    def __init__(self):
        self._lock = threading.RLock()
        self._running = None   # (thread name, method name) of the outermost call

    @contextlib.contextmanager
    def hold(self, owner, what):
        if not self._lock.acquire(blocking=False):
            thread, running = self._running or ("another thread", "a call")
            raise ModelInUseError(
                f"{owner}.{what}(): the model is running {running}() in thread {thread!r}; a "
                "model trains, evaluates and predicts in one thread at a time (those share its "
                "step buffers and training state); wait for that call to end, or use another "
                "model (load_model of a saved copy)")
        outer = self._running
        if outer is None:
            self._running = (threading.current_thread().name, what)
        try:
            yield
        finally:
            self._running = outer
            self._lock.release()


def one_thread_at_a_time(method):
    """Decorate a Model method so it holds the model's UseGuard while it runs."""
    name = method.__name__

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        with self._use_guard.hold(self.describe(), name):
            return method(self, *args, **kwargs)
    return guarded
