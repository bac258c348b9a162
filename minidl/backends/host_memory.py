"""Memory ops shared by the backends whose tensors are host numpy arrays (numpy and cpu)."""

import math

import numpy as np

from .checks import check_same_size


class HostMemory:
    """empty/zeros/from_numpy/copy_from_host/to_numpy/reshape/copy/fill on numpy arrays.

    `_float` is the backend's float dtype: any float dtype asked for means that one,
    and integer dtypes mean int32.
    """

    _float = np.dtype(np.float32)

    def _resolve_dtype(self, dtype, op):
        try:
            kind = np.dtype(dtype).kind
        except TypeError:
            raise ValueError(f"{op}: unknown dtype {dtype!r}") from None
        if kind == "f":
            return self._float
        if kind in "iu":
            return np.dtype(np.int32)
        raise ValueError(f"{op}: dtype must be a float or int32 type, got {dtype!r}")

    def empty(self, shape, dtype="float32"):
        return np.empty(shape, dtype=self._resolve_dtype(dtype, "empty"))

    def zeros(self, shape, dtype="float32"):
        return np.zeros(shape, dtype=self._resolve_dtype(dtype, "zeros"))

    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        if dtype is None:
            dtype = np.int32 if array.dtype.kind in "iub" else self._float
        return np.array(array, dtype=self._resolve_dtype(dtype, "from_numpy"), order="C", copy=True)

    def copy_from_host(self, out, array):
        array = np.asarray(array)
        check_same_size("copy_from_host", "out", out, "array", array)
        out[...] = array.reshape(out.shape)

    def to_numpy(self, x):
        return np.array(x, copy=True)

    def lends_host_arrays(self, array):
        """Whether the host numpy `array` can serve as this backend's tensor as it is (read-only
        inputs of an inference; Model._upload_inputs): C-contiguous, of the float dtype."""
        return (array.__class__ is np.ndarray and array.dtype == self._float
                and array.flags.c_contiguous)

    def reshape(self, x, shape):
        try:
            view = x.reshape(shape)
        except ValueError as exc:
            raise ValueError(f"reshape: cannot view x of shape {tuple(x.shape)} as {tuple(shape)}: "
                             f"{exc}") from None
        if view.size and not np.may_share_memory(view, x):  # numpy copied: not a view
            raise ValueError(f"reshape: x of shape {tuple(x.shape)} is not contiguous, so it "
                             f"cannot be viewed as {tuple(shape)}")
        return view

    def view(self, x, shape):
        size = math.prod(shape)
        if size > x.size:
            raise ValueError(f"view: x of shape {tuple(x.shape)} holds {x.size} elements, "
                             f"fewer than the {size} of {tuple(shape)}")
        return self.reshape(x, (x.size,))[:size].reshape(shape)

    def storage(self, x):
        while isinstance(x.base, np.ndarray):   # a view's base chain ends at the allocation
            x = x.base
        return x

    def copy(self, out, x):
        check_same_size("copy", "out", out, "x", x)
        out[...] = x.reshape(out.shape)

    def fill(self, out, value):
        out[...] = value
