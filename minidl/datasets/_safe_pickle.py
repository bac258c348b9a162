"""A restricted unpickler for data files that only hold numpy arrays and plain Python values.

Unpickling runs whatever callable a pickle names (`os.system` through `__reduce__`, say), so
a downloaded pickle is code, not data. This unpickler resolves only the few globals a pickled
numpy array needs; plain lists, dicts, ints, floats, strings and bytes use no globals at all.
Every other global is refused with UnsafePickleError before anything is called.
"""

import io
import pickle

import numpy as np

try:  # numpy >= 2 keeps the implementation in numpy._core; numpy.core is a deprecated alias
    from numpy._core.multiarray import _reconstruct
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import _reconstruct

# (module, name) as written in the pickle -> the object it stands for. Both spellings of the
# array reconstructor are accepted: numpy 1 (and Python 2 era pickles such as the CIFAR-10
# batches) write numpy.core.multiarray, numpy 2 writes numpy._core.multiarray.
ALLOWED_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle names a global outside ALLOWED_GLOBALS."""


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            allowed = ", ".join(f"{m}.{n}" for m, n in ALLOWED_GLOBALS)
            raise UnsafePickleError(
                f"refusing to unpickle global '{module}.{name}': only numpy arrays and plain "
                f"Python values may be loaded (allowed globals: {allowed})") from None

    def persistent_load(self, pid):
        raise UnsafePickleError(f"refusing to unpickle persistent id {pid!r}")


def loads(data, encoding="bytes"):
    """Unpickle `data` (bytes) with the restricted unpickler.

    encoding="bytes" keeps Python 2 `str` objects as bytes, as the CIFAR-10 batches need.
    """
    return RestrictedUnpickler(io.BytesIO(data), encoding=encoding).load()


def load(file, encoding="bytes"):
    """Unpickle one object from the binary file object `file` with the restricted unpickler."""
    return RestrictedUnpickler(file, encoding=encoding).load()
