"""The tensor-ops section of the contract: the general-purpose ops behind minidl.ops (custom
layers, Lambda, losses and metrics) on float tensors of rank <= MAX_RANK, numpy broadcasting
where an op says so. Comparisons and logical ops write 1.0 for true and 0.0 for false; a
logical op treats nonzero as true. The public ops check the operation names, ranks, shapes and
dtypes once; a backend implements the underscore names (numpy_ops/tensor_ops.py,
cpu/tensor_ops.py, opencl/tensor_ops.py)."""

import numpy as np

from ..checks import check_shape
from ..checks import (check_broadcast, check_indices, check_name, check_rank, check_rows,
                             check_strided, check_take, reduced_axes)
from .checks import BINARY_OPS, PRECISIONS, REDUCE_OPS, UNARY_OPS

INT32 = np.dtype(np.int32)
ARG_REDUCE_OPS = ("argmax", "argmin")
SCAN_OPS = ("cumsum", "cumprod")


def _host_indices_in_range(op, indices, n):
    """The values of take's indices are checked where they are host memory (the numpy and cpu
    backends); a device backend's would have to be copied back at every call."""
    if isinstance(indices, np.ndarray):
        check_indices(op, indices, n)


class TensorOpsSection:
    """The contract's tensor ops; a backend implements the underscore names."""

    def unary(self, out, x, name):
        """out = f(x) elementwise, f one of UNARY_OPS (relu, sigmoid, tanh as activations;
        round to nearest even). out may alias x."""
        check_name("unary", name, UNARY_OPS)
        check_rank("unary", x)
        if out.shape != x.shape:
            check_shape(f"unary {name}", "out", out, x.shape)
        self._unary(out, x, name)

    def binary(self, out, a, b, name):
        """out = a (op) b, op one of BINARY_OPS, a and b broadcast (numpy rules) to out's shape.
        Either of a and b may be a Python float instead of a tensor. power follows C's powf."""
        check_name("binary", name, BINARY_OPS)
        check_rank("binary", out)
        check_broadcast(f"binary {name}", out.shape, a=a, b=b)
        self._binary(out, a, b, name)

    def where(self, out, condition, a, b):
        """out = a where condition is nonzero, else b; all three broadcast to out's shape."""
        check_rank("where", out)
        check_broadcast("where", out.shape, condition=condition, a=a, b=b)
        self._where(out, condition, a, b)

    def reduce(self, out, x, name):
        """out = the sum / max / min / prod (REDUCE_OPS) of x over the axes where out has size 1
        and x does not; out has x's rank (keepdims). NaN propagates through max and min. The
        implementation receives the reduced axes."""
        check_name("reduce", name, REDUCE_OPS)
        check_rank("reduce", x)
        self._reduce(out, x, name, reduced_axes("reduce", out.shape, x.shape))

    def strided_copy(self, out, x, offset, strides):
        """Gather: out[i_0, .., i_r] = x.flat[offset + sum_k i_k * strides[k]] (strides in
        elements, any sign, 0 to repeat; out and x of one dtype, float32 or int32). Slicing,
        transposes and broadcasts are this op. Every address lies inside x."""
        check_rank("strided_copy", out)
        check_strided("strided_copy", x, out.shape, offset, strides)
        if out.dtype != x.dtype:
            raise ValueError(f"strided_copy: out is {out.dtype}, x is {x.dtype}")
        self._strided_copy(out, x, int(offset), strides)

    def strided_add(self, out, x, offset, strides):
        """Scatter-add, the gradient of strided_copy: out.flat[offset + sum_k i_k * strides[k]]
        += x[i_0, .., i_r]. The addressed positions must be distinct (no zero stride)."""
        check_rank("strided_add", x)
        check_strided("strided_add", out, x.shape, offset, strides)
        self._strided_add(out, x, int(offset), strides)

    def take(self, out, x, indices, axis):
        """out = numpy.take(x, indices, axis): indices int32 (m,), each in [-n, n) for n =
        x.shape[axis] (negative ones count from the end); out is x's shape with m at axis."""
        check_take("take", x, indices, axis, out.shape)
        _host_indices_in_range("take", indices, x.shape[axis])
        self._take(out, x, indices, axis)

    def take_backward(self, dx, dout, indices, axis):
        """dx += the gradient of take: each dout slice added at its index (repeats add up)."""
        check_take("take_backward", dx, indices, axis, dout.shape)
        _host_indices_in_range("take_backward", indices, dx.shape[axis])
        self._take_backward(dx, dout, indices, axis)

    def arg_reduce(self, out, x, name):
        """out int32 (rows,) = the index of the largest ("argmax") or smallest ("argmin") value in
        each row of x (rows, k); ties go to the lowest index, a NaN wins at its first position."""
        check_name("arg_reduce", name, ARG_REDUCE_OPS)
        if len(x.shape) != 2 or out.shape != x.shape[:1] or out.dtype != INT32:
            raise ValueError(f"arg_reduce: x must be (rows, k) and out int32 (rows,), got x "
                             f"{tuple(x.shape)} and out {tuple(out.shape)} {out.dtype}")
        self._arg_reduce(out, x, name)

    def argsort_rows(self, out, x):
        """out int32 (rows, n): positions sorting each row of x ascending, stable, NaN last."""
        check_rows("argsort_rows", out, x, INT32)
        self._argsort_rows(out, x)

    def scan_rows(self, out, x, name):
        """out (rows, n) = running "cumsum" / "cumprod" of each row of x; out may alias x."""
        check_name("scan_rows", name, SCAN_OPS)
        check_rows("scan_rows", out, x, x.dtype)
        self._scan_rows(out, x, name)

    def cast(self, out, x):
        """out = x converted between float and int32 tensors of the same size (float to int
        truncates toward 0)."""
        if out.size != x.size:
            raise ValueError(f"cast: out {tuple(out.shape)} and x {tuple(x.shape)} differ in size")
        self._cast(out, x)

    def round_to_precision(self, out, x, precision):
        """out (may be x) = x rounded to the nearest "bfloat16" / "float16" value, to nearest even
        (float16: +-inf from 65520), in float: mixed-precision operands (minidl.mixed_precision)."""
        check_name("round_to_precision", precision, PRECISIONS)
        if out.shape != x.shape:
            check_shape("round_to_precision", "out", out, x.shape)
        self._round_to_precision(out, x, precision)

    def arange(self, out, start, step):
        """out[i] = start + i * step over the flat order of out (float or int32)."""
        self._arange(out, start, step)
