"""InterruptGuard: SIGINT and SIGTERM during fit() become a flag checked between steps."""

import signal
import threading


class InterruptGuard:
    """While entered (in the main thread; elsewhere signals cannot be caught), SIGINT and
    SIGTERM only record themselves in `signal`: fit() checks it after each step, lets the
    callbacks save (Callback.on_interrupt) and raises KeyboardInterrupt. A second signal
    while that happens raises KeyboardInterrupt at once. The previous handlers come back
    on exit."""

    def __init__(self):
        self.signal = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.signal is not None:  # a second Ctrl-C while saving: stop at once
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False
