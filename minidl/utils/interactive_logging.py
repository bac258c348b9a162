"""Whether progress goes to stdout as interactive output (progress bars), as Keras's
keras.utils.enable/disable_interactive_logging: disabled, progress bars fall silent."""

import threading

_state = threading.local()


def is_interactive_logging_enabled():
    return getattr(_state, "enabled", True)


def enable_interactive_logging():
    _state.enabled = True


def disable_interactive_logging():
    _state.enabled = False


__all__ = ["disable_interactive_logging", "enable_interactive_logging",
           "is_interactive_logging_enabled"]
