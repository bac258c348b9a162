"""Access to the compiled C kernels (minidl._cpu_kernels) and pointer helpers."""

from ..base import BackendUnavailable

try:
    from minidl._cpu_kernels import ffi, lib  # built by setup.py from csrc/ through cffi
except ImportError as exc:  # not built: `pip install .` (or `pip install -e .`) compiles it
    ffi = lib = None
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


def require_lib():
    if lib is None:
        raise BackendUnavailable(
            "the 'cpu' backend's C extension minidl._cpu_kernels is not built "
            f"({IMPORT_ERROR}); run `pip install -e .` in the minidl checkout to compile it")
    return lib


def fptr(array):
    """float* to the data of a C-contiguous float32 numpy array (no copy)."""
    return ffi.cast("float *", array.ctypes.data)


def iptr(array):
    """int32_t* to the data of a C-contiguous int32 numpy array (no copy)."""
    return ffi.cast("int32_t *", array.ctypes.data)
