"""Keras 3's Variable methods on minidl's weights: assign, assign_add, assign_sub, path,
dtype, constraint and regularizer.

A weight's `value` is its backend tensor once its model is built (Layer.attach). Before
that, an assignment replaces the weight's initializer with the given values, so the
model uploads them when it is built. After it, the new values are written into the same
backend tensor (the optimizer's slots and the layer's kernels keep pointing at it).

This module imports nothing from minidl's layers, so layers/base.py can mix it into Weight.
"""

import numpy as np


class _Constant:
    """An initializer that returns fixed values (what an assignment before the build leaves)."""

    def __init__(self, values):
        self.values = values

    def __call__(self, shape, dtype=None):
        return self.values.copy()


class VariableMethods:
    """Mixed into Weight; expects name, shape, initializer, value and backend attributes."""

    dtype = "float32"   # minidl computes in float32 only

    @property
    def path(self):
        """'layer_name/weight_name' as Keras 3 names a layer's variable (the weight's own
        name for a variable made outside a layer)."""
        return getattr(self, "_path", None) or self.name

    def assign(self, value):
        """Set the variable's values (same shape). Returns the variable."""
        self._write(self._host_or_tensor(value, "assign"), alpha=0.0)
        return self

    def assign_add(self, delta):
        """Add `delta` (the variable's shape, or one that broadcasts to it). Returns the variable."""
        self._write(self._host_or_tensor(delta, "assign_add"), alpha=1.0)
        return self

    def assign_sub(self, delta):
        """Subtract `delta` (the variable's shape, or one that broadcasts to it). Returns the variable."""
        self._write(self._host_or_tensor(delta, "assign_sub"), alpha=1.0, beta=-1.0)
        return self

    # ------------------------------------------------------------ helpers
    def _host_or_tensor(self, value, method):
        """The new values: a float32 numpy array of the variable's shape, or the backend
        tensor of a minidl Tensor / Variable living on this variable's backend."""
        backend_value = getattr(value, "value", None)
        if backend_value is not None and not isinstance(value, np.ndarray) \
                and getattr(value, "backend", None) is self.backend and self.backend is not None:
            shape = tuple(self.backend.shape(backend_value))
            if shape != tuple(self.shape):
                self._shape_error(method, shape)
            return backend_value
        if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
            value = value.numpy()
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"{type(self).__name__} {self.path!r}.{method}: the value must be "
                            f"numbers, got dtype {array.dtype}")
        if method == "assign" and array.shape != tuple(self.shape):
            self._shape_error(method, array.shape)
        try:
            array = np.broadcast_to(array, tuple(self.shape))
        except ValueError:
            self._shape_error(method, array.shape)
        return np.ascontiguousarray(array, dtype=np.float32)

    def _shape_error(self, method, got):
        raise ValueError(f"The shape of the target variable and the shape of the target value in "
                         f"`variable.{method}(value)` must match. variable.shape={tuple(self.shape)}, "
                         f"Received: value.shape={tuple(got)}. Target variable: {self.path!r}")

    def _write(self, new, alpha, beta=1.0):
        """value = alpha * value + beta * new, on the backend once the weight has a value."""
        if self.value is None:   # not built yet: the assignment becomes the initial value
            current = np.asarray(self.initializer(tuple(self.shape)), dtype=np.float32)
            if not isinstance(new, np.ndarray):
                raise ValueError(f"{type(self).__name__} {self.path!r}: cannot take a device "
                                 "tensor before its model is built")
            self.initializer = _Constant(alpha * current + beta * new)
            return
        backend = self.backend
        tensor = backend.from_numpy(new) if isinstance(new, np.ndarray) else new
        if alpha == 0.0 and beta == 1.0:
            backend.copy(self.value, tensor)
        else:
            backend.axpby(self.value, alpha, self.value, beta, tensor)
