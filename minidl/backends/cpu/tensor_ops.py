"""The tensor ops of the contract (minidl/backends/base.py) on csrc/tensor_ops.c (and
csrc/row_order.c for the row sorts and scans).

Python computes the strides of each operand (0 on broadcast axes) and hands them to the C
loops with pointers; the C side does every element.
"""

import numpy as np

from ..base import BINARY_OPS, PRECISIONS, REDUCE_OPS, UNARY_OPS
from ..checks import (broadcast_strides, check_broadcast, check_indices, check_name,
                             check_rank, check_rows, check_strided, check_take, reduced_axes)
from ._ffi import FLOAT32, INT32, checked, ffi, output, raise_for_status


def _int64s(values):
    return ffi.new("int64_t[]", list(values) or [0])


class CpuTensorOps:
    """Mixin of CpuBackend: the tensor ops."""

    def _operand(self, op, name, t, out_shape):
        """(pointer, strides) of a tensor or a Python float (a one-element array, stride 0)."""
        if isinstance(t, float):
            return ffi.new("float[1]", [t]), [0] * len(out_shape)
        return checked(op, name, t), broadcast_strides(t.shape, out_shape)

    def unary(self, out, x, name):
        check_name("unary", name, UNARY_OPS)
        check_rank("unary", x)
        px = checked(f"unary {name}", "x", x)
        self._lib.minidl_tensor_unary(checked(f"unary {name}", "out", out, x.shape), px, x.size,
                                      UNARY_OPS.index(name))

    def binary(self, out, a, b, name):
        op = f"binary {name}"
        check_name("binary", name, BINARY_OPS)
        check_rank(op, out)
        check_broadcast(op, out.shape, a=a, b=b)
        pa, sa = self._operand(op, "a", a, out.shape)
        pb, sb = self._operand(op, "b", b, out.shape)
        self._lib.minidl_tensor_binary(checked(op, "out", out), pa, pb, out.ndim,
                                       _int64s(out.shape), _int64s(sa), _int64s(sb),
                                       BINARY_OPS.index(name))

    def where(self, out, condition, a, b):
        check_rank("where", out)
        check_broadcast("where", out.shape, condition=condition, a=a, b=b)
        ptrs = [self._operand("where", n, t, out.shape) for n, t in
                (("condition", condition), ("a", a), ("b", b))]
        self._lib.minidl_tensor_where(checked("where", "out", out), *(p for p, _ in ptrs),
                                      out.ndim, _int64s(out.shape),
                                      *(_int64s(s) for _, s in ptrs))

    def reduce(self, out, x, name):
        check_name("reduce", name, REDUCE_OPS)
        check_rank("reduce", x)
        reduced_axes("reduce", out.shape, x.shape)
        px = checked(f"reduce {name}", "x", x)
        status = self._lib.minidl_tensor_reduce(
            checked(f"reduce {name}", "out", out), px, x.ndim, _int64s(x.shape),
            _int64s(broadcast_strides(out.shape, x.shape)), out.size, REDUCE_OPS.index(name))
        if status:
            raise MemoryError(f"reduce {name}: out of memory for a scratch of {out.size} doubles")

    @staticmethod
    def _pointer4(op, name, t):
        """A pointer to a float32 or int32 tensor (the copies move 4-byte elements)."""
        return checked(op, name, t, dtype=INT32 if t.dtype == INT32 else FLOAT32)

    def strided_copy(self, out, x, offset, strides):
        check_rank("strided_copy", out)
        check_strided("strided_copy", x, out.shape, offset, strides)
        if out.dtype != x.dtype:
            raise ValueError(f"strided_copy: out is {out.dtype}, x is {x.dtype}")
        self._lib.minidl_tensor_strided_copy(self._pointer4("strided_copy", "out", out),
                                             self._pointer4("strided_copy", "x", x), out.ndim,
                                             _int64s(out.shape), int(offset), _int64s(strides))

    def strided_add(self, out, x, offset, strides):
        check_rank("strided_add", x)
        check_strided("strided_add", out, x.shape, offset, strides)
        px = checked("strided_add", "x", x)
        self._lib.minidl_tensor_strided_add(checked("strided_add", "out", out), px, x.ndim,
                                            _int64s(x.shape), int(offset), _int64s(strides))

    def _take_sizes(self, x, axis, m):
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        return outer, x.shape[axis], inner, m

    def take(self, out, x, indices, axis):
        check_take("take", x, indices, axis, out.shape)
        check_indices("take", indices, x.shape[axis])
        self._lib.minidl_tensor_take(self._pointer4("take", "out", out), self._pointer4("take", "x", x),
                                     checked("take", "indices", indices, dtype=INT32),
                                     *self._take_sizes(x, axis, indices.shape[0]))

    def take_backward(self, dx, dout, indices, axis):
        check_take("take_backward", dx, indices, axis, dout.shape)
        check_indices("take_backward", indices, dx.shape[axis])
        pd = checked("take_backward", "dout", dout)
        self._lib.minidl_tensor_take_backward(checked("take_backward", "dx", dx), pd,
                                              checked("take_backward", "indices", indices, dtype=INT32),
                                              *self._take_sizes(dx, axis, indices.shape[0]))

    def arg_reduce(self, out, x, name):
        check_name("arg_reduce", name, ("argmax", "argmin"))
        if x.ndim != 2:
            raise ValueError(f"arg_reduce: x must be (rows, k), got {tuple(x.shape)}")
        px = checked("arg_reduce", "x", x)
        self._lib.minidl_tensor_arg_reduce(checked("arg_reduce", "out", out, (x.shape[0],), INT32),
                                           px, x.shape[0], x.shape[1], name == "argmin")

    def argsort_rows(self, out, x):
        check_rows("argsort_rows", out, x, INT32)
        status = self._lib.minidl_rows_argsort(checked("argsort_rows", "out", out, dtype=INT32),
                                               checked("argsort_rows", "x", x), *x.shape)
        if status:
            raise_for_status("argsort_rows", status, f"(x of shape {tuple(x.shape)})")

    def scan_rows(self, out, x, name):
        check_name("scan_rows", name, ("cumsum", "cumprod"))
        check_rows("scan_rows", out, x, FLOAT32)
        self._lib.minidl_rows_scan(checked("scan_rows", "out", out), checked("scan_rows", "x", x),
                                   *x.shape, name == "cumprod")

    def round_to_precision(self, out, x, precision):
        op = "round_to_precision"
        check_name(op, precision, PRECISIONS)
        px = checked(op, "x", x)
        kernel = self._lib.minidl_round_bfloat16 if precision == "bfloat16" else self._lib.minidl_round_float16
        kernel(output(op, "out", out, x.shape), px, x.size)

    def cast(self, out, x):
        if out.size != x.size:
            raise ValueError(f"cast: out {tuple(out.shape)} and x {tuple(x.shape)} differ in size")
        if out.dtype == INT32 and x.dtype != INT32:
            self._lib.minidl_tensor_float_to_int(checked("cast", "out", out, dtype=INT32),
                                                 checked("cast", "x", x), x.size)
        elif out.dtype != INT32 and x.dtype == INT32:
            self._lib.minidl_tensor_int_to_float(checked("cast", "out", out),
                                                 checked("cast", "x", x, dtype=INT32), x.size)
        else:
            self.copy(out, x)

    def arange(self, out, start, step):
        if out.dtype == INT32:
            self._lib.minidl_tensor_arange_int(checked("arange", "out", out, dtype=INT32), out.size,
                                               float(start), float(step))
        else:
            self._lib.minidl_tensor_arange_float(checked("arange", "out", out), out.size,
                                                 float(start), float(step))
