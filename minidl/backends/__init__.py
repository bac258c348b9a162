"""Backend registry: which backends exist, which one is active, and why one is not usable.

The active backend is chosen by `set_backend(name)`, else by the MINIDL_BACKEND
environment variable, else the first usable of DEFAULT_ORDER. Names are matched without
regard to case or surrounding spaces ("OpenCL " is "opencl"). Models take the active
backend when they are built, so switching backends affects models built afterwards.

Listing the backends is cheap: a backend module may define unavailable_reason(), a check
that opens no device and builds no kernel (the opencl one lists the OpenCL devices); the
others are created, which costs them nothing worth mentioning.
"""

import importlib

from .. import settings
from .base import Backend, BackendUnavailable

# name -> module that defines create(**options) -> Backend (raising BackendUnavailable),
# and optionally unavailable_reason() -> None or a sentence
_MODULES = {
    "cpu": "minidl.backends.cpu",
    "opencl": "minidl.backends.opencl",
    "numpy": "minidl.backends.numpy_backend",
}
DEFAULT_ORDER = ("cpu", "numpy")

_instances = {}
_active = None


def _normalize(name):
    return name.strip().lower()


def _module(name):
    if name not in _MODULES:
        raise ValueError(f"unknown backend {name!r}; known backends: {sorted(_MODULES)}, "
                         f"usable here: {available_backends()}")
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise BackendUnavailable(f"backend {name!r} cannot be imported: {exc}") from exc


def _create(name):
    name = _normalize(name)
    if name not in _instances:
        _instances[name] = _module(name).create()
    return _instances[name]


def unavailable_reason(name):
    """None if backend `name` can be used here, else a sentence saying why not. Cheap: it
    builds no kernels and tunes nothing."""
    name = _normalize(name)
    if name not in _MODULES:
        return f"unknown backend {name!r}; known backends: {sorted(_MODULES)}"
    try:
        if name in _instances:
            return None
        probe = getattr(_module(name), "unavailable_reason", None)
        if probe is not None:
            return probe()
        _create(name)
        return None
    except BackendUnavailable as exc:
        return str(exc)
    except Exception as exc:  # a broken install must not hide the other backends
        return f"backend {name!r} failed to start: {type(exc).__name__}: {exc}"


def available_backends():
    """Names of the backends usable on this machine (cheap: see unavailable_reason)."""
    return [name for name in _MODULES if unavailable_reason(name) is None]


def set_backend(name):
    """Make backend `name` ("cpu", "opencl" or "numpy", any case) the active one and return it.

    A Backend instance is accepted too (tests use NumpyBackend(dtype="float64")).
    """
    global _active
    if isinstance(name, Backend):
        _active = name
        return name
    if not isinstance(name, str):
        raise TypeError(f"set_backend: name must be a backend name or a Backend, "
                        f"got {type(name).__name__}")
    name = _normalize(name)
    try:
        backend = _create(name)
    except BackendUnavailable as exc:
        usable = [n for n in _MODULES if n != name and unavailable_reason(n) is None]
        raise BackendUnavailable(f"{exc} (usable backends here: {usable})") from None
    _active = backend
    return backend


def _set_requested(requested):
    """set_backend(MINIDL_BACKEND's value), its errors saying where the name came from."""
    try:
        return set_backend(requested)
    except ValueError as exc:
        raise ValueError(f"MINIDL_BACKEND={requested!r}: {exc}") from None
    except BackendUnavailable as exc:
        raise BackendUnavailable(f"MINIDL_BACKEND={requested!r}: {exc}") from None


def get_backend():
    """The active backend; picks MINIDL_BACKEND or the default on first use."""
    if _active is None:
        requested = settings.current().backend
        if requested:
            return _set_requested(requested)
        for name in DEFAULT_ORDER:
            if unavailable_reason(name) is None:
                try:
                    return set_backend(name)
                except BackendUnavailable:
                    continue  # the cheap check passed but the backend would not start
        raise BackendUnavailable(f"no backend of {list(DEFAULT_ORDER)} is usable here")
    return _active


__all__ = ["Backend", "BackendUnavailable", "available_backends", "get_backend",
           "set_backend", "unavailable_reason"]
