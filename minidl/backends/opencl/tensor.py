"""CLTensor: a dense, C-contiguous array stored in an OpenCL buffer."""

import math

import numpy as np

# uint8 and int8 hold the activations and weights of int8 inference (minidl.quantization)
DTYPES = {"float32": np.dtype(np.float32), "int32": np.dtype(np.int32),
          "uint8": np.dtype(np.uint8), "int8": np.dtype(np.int8)}


def as_dtype(dtype):
    """The numpy dtype for a minidl dtype name (float32, int32, uint8, int8) or a numpy dtype."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in DTYPES:
        raise TypeError(f"opencl backend: dtype must be float32, int32, uint8 or int8, got {dtype!r}")
    return DTYPES[name]


class CLTensor:
    """A view of `shape` elements of `dtype` starting `offset` elements into `buffer`.

    Tensors made by the backend start at offset 0; reshape returns another
    CLTensor on the same buffer. The buffer is an opaque pyopencl.Buffer that
    only the runtime reads or writes.
    """

    __slots__ = ("buffer", "shape", "dtype", "offset", "_sub_buffer")

    def __init__(self, buffer, shape, dtype, offset=0):
        self.buffer = buffer
        self.shape = tuple(int(s) for s in shape)
        self.dtype = as_dtype(dtype)
        self.offset = int(offset)
        self._sub_buffer = None

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def kernel_arg(self):
        """The cl.Buffer a kernel receives: the buffer itself, or a sub-buffer when offset > 0."""
        if self.offset == 0:
            return self.buffer
        if self._sub_buffer is None:
            start = self.offset * self.dtype.itemsize
            self._sub_buffer = self.buffer.get_sub_region(start, max(self.nbytes, 1))
        return self._sub_buffer

    def __repr__(self):
        return f"CLTensor(shape={self.shape}, dtype={self.dtype.name}, offset={self.offset})"
