"""Tensors made on the device: ones, zeros, full, arange, eye and the *_like forms (no upload)."""

from .core import as_tensor, default_backend, empty_like_shape, equal, full
from .shapes import expand_dims


def zeros(shape, dtype="float32", backend=None):
    return full(shape, 0, dtype, backend)


def ones(shape, dtype="float32", backend=None):
    return full(shape, 1, dtype, backend)


def full_like(x, fill_value, dtype=None):
    t = as_tensor(x)
    return full(t.shape, fill_value, dtype or t.dtype, t.backend)


def zeros_like(x, dtype=None):
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None):
    return full_like(x, 1, dtype)


def arange(start, stop=None, step=1, dtype=None, backend=None):
    """start, start + step, ... up to (not including) stop, as numpy.arange."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("ops.arange: step must not be 0")
    n = max(0, -(-(stop - start) // step)) if all(isinstance(v, int) for v in (start, stop, step)) \
        else max(0, int(-(-(stop - start) // step)))
    if dtype is None:
        dtype = "int32" if all(isinstance(v, int) for v in (start, stop, step)) else "float32"
    backend = backend or default_backend()
    out = empty_like_shape(backend, (n,), "int32" if str(dtype).startswith("int") else "float32")
    backend.arange(out.value, start, step)
    return out


def eye(N, M=None, k=0, dtype="float32", backend=None):
    """The N x M matrix with ones on diagonal k."""
    M = N if M is None else M
    rows = arange(N, dtype="float32", backend=backend)
    cols = arange(M, dtype="float32", backend=rows.backend)
    return equal(expand_dims(rows, -1) + float(k), cols)


def identity(n, dtype="float32"):
    return eye(n, dtype=dtype)

