"""The tensor ops of the contract (contract/tensor_ops.py, which checked their arguments) on
csrc/tensor_ops.c (and csrc/row_order.c for the row sorts and scans).

Python computes the strides of each operand (0 on broadcast axes) and hands them to the C
loops with pointers; the C side does every element.
"""

import numpy as np

from ..contract.checks import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from ..checks import broadcast_strides
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

    def _unary(self, out, x, name):
        op = f"unary {name}"
        px = checked(op, "x", x)
        self._lib.minidl_tensor_unary(output(op, "out", out), px, x.size, UNARY_OPS.index(name))

    def _binary(self, out, a, b, name):
        op = f"binary {name}"
        pa, sa = self._operand(op, "a", a, out.shape)
        pb, sb = self._operand(op, "b", b, out.shape)
        self._lib.minidl_tensor_binary(output(op, "out", out), pa, pb, out.ndim,
                                       _int64s(out.shape), _int64s(sa), _int64s(sb),
                                       BINARY_OPS.index(name))

    def _where(self, out, condition, a, b):
        ptrs = [self._operand("where", n, t, out.shape) for n, t in
                (("condition", condition), ("a", a), ("b", b))]
        self._lib.minidl_tensor_where(output("where", "out", out), *(p for p, _ in ptrs),
                                      out.ndim, _int64s(out.shape),
                                      *(_int64s(s) for _, s in ptrs))

    def _reduce(self, out, x, name, axes):
        px = checked(f"reduce {name}", "x", x)
        status = self._lib.minidl_tensor_reduce(
            output(f"reduce {name}", "out", out), px, x.ndim, _int64s(x.shape),
            _int64s(broadcast_strides(out.shape, x.shape)), out.size, REDUCE_OPS.index(name))
        if status:
            raise MemoryError(f"reduce {name}: out of memory for a scratch of {out.size} doubles")

    @staticmethod
    def _pointer4(op, name, t, writable=False):
        """A pointer to a float32 or int32 tensor (the copies move 4-byte elements)."""
        return checked(op, name, t, dtype=INT32 if t.dtype == INT32 else FLOAT32, writable=writable)

    def _strided_copy(self, out, x, offset, strides):
        self._lib.minidl_tensor_strided_copy(self._pointer4("strided_copy", "out", out, True),
                                             self._pointer4("strided_copy", "x", x), out.ndim,
                                             _int64s(out.shape), offset, _int64s(strides))

    def _strided_add(self, out, x, offset, strides):
        px = checked("strided_add", "x", x)
        self._lib.minidl_tensor_strided_add(output("strided_add", "out", out), px, x.ndim,
                                            _int64s(x.shape), offset, _int64s(strides))

    def _take_sizes(self, x, axis, m):
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        return outer, x.shape[axis], inner, m

    def _take(self, out, x, indices, axis):
        self._lib.minidl_tensor_take(self._pointer4("take", "out", out, True), self._pointer4("take", "x", x),
                                     checked("take", "indices", indices, dtype=INT32),
                                     *self._take_sizes(x, axis, indices.shape[0]))

    def _take_backward(self, dx, dout, indices, axis):
        pd = checked("take_backward", "dout", dout)
        self._lib.minidl_tensor_take_backward(output("take_backward", "dx", dx), pd,
                                              checked("take_backward", "indices", indices, dtype=INT32),
                                              *self._take_sizes(dx, axis, indices.shape[0]))

    def _arg_reduce(self, out, x, name):
        px = checked("arg_reduce", "x", x)
        self._lib.minidl_tensor_arg_reduce(output("arg_reduce", "out", out, dtype=INT32),
                                           px, x.shape[0], x.shape[1], name == "argmin")

    def _argsort_rows(self, out, x):
        status = self._lib.minidl_rows_argsort(output("argsort_rows", "out", out, dtype=INT32),
                                               checked("argsort_rows", "x", x), *x.shape)
        if status:
            raise_for_status("argsort_rows", status, f"(x of shape {tuple(x.shape)})")

    def _scan_rows(self, out, x, name):
        self._lib.minidl_rows_scan(output("scan_rows", "out", out), checked("scan_rows", "x", x),
                                   *x.shape, name == "cumprod")

    def _round_to_precision(self, out, x, precision):
        op = "round_to_precision"
        px = checked(op, "x", x)
        kernel = self._lib.minidl_round_bfloat16 if precision == "bfloat16" else self._lib.minidl_round_float16
        kernel(output(op, "out", out), px, x.size)

    def _cast(self, out, x):
        if out.dtype == INT32 and x.dtype != INT32:
            self._lib.minidl_tensor_float_to_int(output("cast", "out", out, dtype=INT32),
                                                 checked("cast", "x", x), x.size)
        elif out.dtype != INT32 and x.dtype == INT32:
            self._lib.minidl_tensor_int_to_float(output("cast", "out", out),
                                                 checked("cast", "x", x, dtype=INT32), x.size)
        else:
            self.copy(out, x)

    def _arange(self, out, start, step):
        if out.dtype == INT32:
            self._lib.minidl_tensor_arange_int(output("arange", "out", out, dtype=INT32), out.size,
                                               float(start), float(step))
        else:
            self._lib.minidl_tensor_arange_float(output("arange", "out", out), out.size,
                                                 float(start), float(step))
