"""Backend registry: which backends exist, which one is active, and why one is not usable.

The active backend is chosen by `set_backend(name)`, else by the MINIDL_BACKEND
environment variable, else the first usable of DEFAULT_ORDER. Models take the
active backend when they are built, so switching backends affects models built
afterwards.
"""

import importlib
import os

from .base import Backend, BackendUnavailable

# name -> module that defines create(**options) -> Backend (raising BackendUnavailable)
_MODULES = {
    "cpu": "minidl.backends.cpu",
    "opencl": "minidl.backends.opencl",
    "numpy": "minidl.backends.numpy_backend",
}
DEFAULT_ORDER = ("cpu", "numpy")

_instances = {}
_active = None


def _create(name):
    if name not in _MODULES:
        raise ValueError(f"unknown backend {name!r}; known backends: {sorted(_MODULES)}, "
                         f"usable here: {available_backends()}")
    if name not in _instances:
        try:
            module = importlib.import_module(_MODULES[name])
        except ImportError as exc:
            raise BackendUnavailable(f"backend {name!r} cannot be imported: {exc}") from exc
        _instances[name] = module.create()
    return _instances[name]


def unavailable_reason(name):
    """None if backend `name` works here, else a sentence saying why not."""
    try:
        _create(name)
        return None
    except BackendUnavailable as exc:
        return str(exc)
    except Exception as exc:  # a broken install must not hide the other backends
        return f"backend {name!r} failed to start: {type(exc).__name__}: {exc}"


def available_backends():
    """Names of the backends usable on this machine."""
    return [name for name in _MODULES if unavailable_reason(name) is None]


def set_backend(name):
    """Make backend `name` ("cpu", "opencl" or "numpy") the active one and return it.

    A Backend instance is accepted too (tests use NumpyBackend(dtype="float64")).
    """
    global _active
    if isinstance(name, Backend):
        _active = name
        return name
    if not isinstance(name, str):
        raise TypeError(f"set_backend: name must be a backend name or a Backend, "
                        f"got {type(name).__name__}")
    try:
        backend = _create(name)
    except BackendUnavailable as exc:
        usable = [n for n in _MODULES if n != name and unavailable_reason(n) is None]
        raise BackendUnavailable(f"{exc} (usable backends here: {usable})") from None
    _active = backend
    return backend


def get_backend():
    """The active backend; picks MINIDL_BACKEND or the default on first use."""
    if _active is None:
        requested = os.environ.get("MINIDL_BACKEND")
        if requested:
            return set_backend(requested)
        for name in DEFAULT_ORDER:
            if unavailable_reason(name) is None:
                return set_backend(name)
    return _active


__all__ = ["Backend", "BackendUnavailable", "available_backends", "get_backend",
           "set_backend", "unavailable_reason"]
