"""Access to the compiled C kernels (minidl._cpu_kernels), pointer helpers and argument checks."""

import os

import numpy as np

from ..base import BackendUnavailable
from ..checks import check_shape

# libgomp, the OpenMP runtime of the kernels, reads its wait policy once, when the extension
# loads it. Its default keeps idle threads spinning after every parallel region; on a machine
# whose cores are shared with other jobs that spinning takes the core the other kernel thread
# needs (the CIFAR-10 CNN step ran 1.5-3x slower than with passive waiting on the shared
# 2-core EPYC). A user's own OMP_WAIT_POLICY is kept; minidl.bench restores torch's default
# in its child processes when this line chose the policy.
WAIT_POLICY_CHOSEN_HERE = "OMP_WAIT_POLICY" not in os.environ
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

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


# ffi.from_buffer is the cheapest way from a numpy array to a C pointer (about 0.2 us, five
# times faster than casting array.ctypes.data) and keeps the array alive while the call runs.
def fptr(array):
    """float* to the data of a C-contiguous float32 numpy array (no copy)."""
    return ffi.from_buffer("float[]", array)


def iptr(array):
    """int32_t* to the data of a C-contiguous int32 numpy array (no copy)."""
    return ffi.from_buffer("int32_t[]", array)


FLOAT32 = np.dtype(np.float32)
INT32 = np.dtype(np.int32)
_CTYPES = {FLOAT32: "float[]", INT32: "int32_t[]"}


def checked(op, name, array, shape=None, dtype=FLOAT32):
    """Pointer to `array` after checking it is a C-contiguous numpy array of `dtype` (and `shape`);
    the ValueError / TypeError names the op, the argument and the shapes.

    The common case costs about 0.3 us: identity tests, then ffi.from_buffer, which itself
    refuses arrays that are not C-contiguous."""
    if array.__class__ is not np.ndarray or array.dtype is not dtype or (
            shape is not None and array.shape != shape):
        _check_slowly(op, name, array, shape, dtype)
    try:
        return ffi.from_buffer(_CTYPES[dtype], array)
    except (ValueError, BufferError):
        raise ValueError(f"{op}: {name} of shape {tuple(array.shape)} must be C-contiguous") from None


def _check_slowly(op, name, array, shape, dtype):
    """The full checks behind `checked`'s fast path: raise with a message, or return if fine."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{op}: {name} must be a numpy {dtype.name} array (a cpu backend "
                        f"tensor), got {type(array).__name__}")
    if array.dtype != dtype:
        raise ValueError(f"{op}: {name} must be {dtype.name}, got {array.dtype} "
                         f"of shape {tuple(array.shape)}")
    if shape is not None:
        check_shape(op, name, array, shape)
