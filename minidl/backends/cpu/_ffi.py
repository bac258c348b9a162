"""The compiled C kernels (minidl._cpu_kernels): loading them with the process's settings,
checked pointers to numpy arrays, the one window struct, and the one error policy.

Every C function is named minidl_* and takes outputs, inputs, weights, scalar parameters, then
sizes (csrc/status.h). A kernel that can fail returns a status; `raise_for_status` turns a
nonzero one into the Python exception that names the op.
"""

import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import settings
from ..base import BackendUnavailable
from ..checks import check_shape

ISA_IDS = {"generic": 0, "avx2": 1, "avx512": 2}

# libgomp, the OpenMP runtime of the kernels, reads its wait policy once, when the extension
# loads it. Its default keeps idle threads spinning after every parallel region; on a machine
# whose cores are shared with other jobs that spinning takes the core the other kernel thread
# needs (the CIFAR-10 CNN step ran 1.5-3x slower than with passive waiting on the shared
# 2-core EPYC). So the policy is passive while the extension loads, unless the user chose one,
# and os.environ is then left as the user had it: child processes (torch in minidl.bench) run
# with their own default.
WAIT_POLICY_CHOSEN_HERE = "OMP_WAIT_POLICY" not in os.environ


def _load_extension():
    if WAIT_POLICY_CHOSEN_HERE:
        os.environ["OMP_WAIT_POLICY"] = "passive"
    try:
        from minidl._cpu_kernels import ffi, lib  # built by setup.py from csrc/ through cffi
    finally:
        if WAIT_POLICY_CHOSEN_HERE:
            os.environ.pop("OMP_WAIT_POLICY", None)
    return ffi, lib


def apply_settings():
    """Pass settings.current()'s num_threads, cpu_isa and amx (MINIDL_NUM_THREADS, MINIDL_CPU_ISA,
    MINIDL_AMX) to the kernels; done when the extension loads, again by whoever changed the
    settings since."""
    chosen = settings.current()
    lib.minidl_set_num_threads(chosen.num_threads or 0)  # 0: every core
    wanted = ISA_IDS[chosen.cpu_isa] if chosen.cpu_isa else lib.minidl_cpu_best_isa()
    if lib.minidl_set_isa(wanted) != wanted:
        warnings.warn(f"MINIDL_CPU_ISA={chosen.cpu_isa}: this CPU does not support it; the cpu "
                      f"backend uses {ffi.string(lib.minidl_cpu_isa_name()).decode()}", RuntimeWarning,
                      stacklevel=2)
    lib.minidl_set_amx(1 if chosen.amx else 0)


try:
    ffi, lib = _load_extension()
except ImportError as exc:  # not built: `pip install .` (or `pip install -e .`) compiles it
    ffi = lib = None
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None
    apply_settings()


def require_lib():
    if lib is None:
        raise BackendUnavailable(
            "the 'cpu' backend's C extension minidl._cpu_kernels is not built "
            f"({IMPORT_ERROR}); run `pip install -e .` in the minidl checkout to compile it")
    return lib


# ---------------------------------------------------------------- pointers

# ffi.from_buffer is the cheapest way from a numpy array to a C pointer (about 0.2 us, five
# times faster than casting array.ctypes.data) and keeps the array alive while the call runs.
def fptr(array):
    """float* to the data of a C-contiguous float32 numpy array (no copy)."""
    return ffi.from_buffer("float[]", array)


FLOAT32 = np.dtype(np.float32)
INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
UINT8 = np.dtype(np.uint8)
_CTYPES = {FLOAT32: "float[]", INT32: "int32_t[]", INT64: "int64_t[]", UINT8: "uint8_t[]"}


def checked(op, name, array, shape=None, dtype=FLOAT32, writable=False):
    """Pointer to `array` after checking it is a C-contiguous numpy array of `dtype` (and `shape`,
    and writable when the kernel writes it); the ValueError / TypeError names the op, the
    argument and the shapes.

    The common case costs about 0.3 us: identity tests, then ffi.from_buffer, which itself
    refuses arrays that are not C-contiguous (or read-only, when asked)."""
    if array.__class__ is not np.ndarray or array.dtype is not dtype or (
            shape is not None and array.shape != shape):
        _check_slowly(op, name, array, shape, dtype)
    try:
        return ffi.from_buffer(_CTYPES[dtype], array, writable)
    except (ValueError, BufferError, TypeError):
        if writable and not array.flags.writeable:
            raise ValueError(f"{op}: {name} of shape {tuple(array.shape)} is read-only") from None
        raise ValueError(f"{op}: {name} of shape {tuple(array.shape)} must be C-contiguous") from None


def output(op, name, array, shape=None, dtype=FLOAT32):
    """`checked` for an array the kernel writes."""
    return checked(op, name, array, shape, dtype, True)


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


# ---------------------------------------------------------------- window geometry

@dataclass
class CpuPlanScratch:
    """What the cpu backend keeps on a Window2D plan (plan.scratch_for(CpuPlanScratch))."""

    window: Any = None   # the plan's struct minidl_window * (csrc/window.h): window_struct
    conv: Any = None     # the conv kernels' window and packed-weight buffer: linalg._ConvScratch


def window_struct(op, plan):
    """The plan's `struct minidl_window *` (csrc/window.h) for the conv and pooling kernels,
    built once and kept in the plan's CpuPlanScratch."""
    scratch = plan.scratch_for(CpuPlanScratch)
    win = scratch.window
    if win is None:
        for field in ("kh", "kw", "sh", "sw", "dh", "dw", "groups"):
            if getattr(plan, field) < 1:
                raise ValueError(f"{op}: plan.{field} must be >= 1, got {getattr(plan, field)}")
        win = scratch.window = ffi.new("struct minidl_window *", {
            "n": plan.n, "h": plan.h, "w": plan.w, "c": plan.c, "kh": plan.kh, "kw": plan.kw,
            "sh": plan.sh, "sw": plan.sw, "pad_top": plan.pad_top, "pad_left": plan.pad_left,
            "oh": plan.oh, "ow": plan.ow, "f": plan.oc, "dh": plan.dh, "dw": plan.dw,
            "groups": plan.groups})
    return win


# ---------------------------------------------------------------- errors

def raise_for_status(op, status, detail=""):
    """Raise for the nonzero status (csrc/status.h) kernel `op` returned: MemoryError when it
    could not allocate, ValueError for a sparse target out of range or an invalid size,
    RuntimeError for a scratch too small; `detail` ends the message. Call it only when status != 0."""
    if status == lib.MINIDL_OUT_OF_MEMORY:
        raise MemoryError(f"cpu backend: {op} could not allocate {lib.minidl_failed_alloc_bytes()} "
                          f"bytes of scratch{': ' + detail if detail else ''}")
    if status == lib.MINIDL_TARGET_OUT_OF_RANGE:
        raise ValueError(f"{op}: {detail or 'a sparse target lies outside [0, classes)'}")
    if status == lib.MINIDL_SCRATCH_TOO_SMALL:
        raise RuntimeError(f"{op}: the scratch buffer is too small{': ' + detail if detail else ''}")
    if status == lib.MINIDL_INVALID_SIZE:
        raise ValueError(f"{op}: {detail or 'a size the kernel reads within is < 1'}")
    raise RuntimeError(f"cpu backend: {op} returned the unknown status {status}")
