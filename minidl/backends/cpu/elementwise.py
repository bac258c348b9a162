"""The elementwise section of the contract (contract/elementwise.py) on the C kernels of
csrc/elementwise.c. The contract checked every shape and dropout's arguments; `checked` and
`output` only turn each array into a pointer (a C-contiguous float32 array, outputs writable)."""

import math

from ._ffi import checked, output


def rows_cols(shape):
    """(rows, last-axis length) of a tensor shape; a 0-d shape is one row of one element."""
    if not shape:
        return 1, 1
    return math.prod(shape[:-1]), shape[-1]


class CpuElementwiseOps:
    """Mixin of CpuBackend: the elementwise ops."""

    def _add(self, out, a, b):
        pa = checked("add", "a", a)   # the inputs' pointers first: their errors come first
        self._lib.minidl_add(output("add", "out", out), pa, checked("add", "b", b), a.size)

    def _axpby(self, out, alpha, x, beta, y):
        op = "axpby"
        px = checked(op, "x", x)
        self._lib.minidl_axpby(output(op, "out", out), alpha, px, beta, checked(op, "y", y), x.size)

    def _multiply(self, out, a, b):
        op = "multiply"
        pa = checked(op, "a", a)
        self._lib.minidl_multiply(output(op, "out", out), pa, checked(op, "b", b), a.size)

    def _bias_add(self, out, x, bias):
        op = "bias_add"
        px = checked(op, "x", x)
        rows, c = rows_cols(x.shape)
        self._lib.minidl_bias_add(output(op, "out", out), px, checked(op, "bias", bias), rows, c)

    def _bias_grad(self, dbias, dout):
        op = "bias_grad"
        pd = checked(op, "dout", dout)
        rows, c = rows_cols(dout.shape)
        self._lib.minidl_bias_grad(output(op, "dbias", dbias), pd, rows, c, self._column_scratch(c))

    def _concat_forward(self, out, xs):
        op = "concat_forward"
        rows, total = rows_cols(out.shape)
        pout = output(op, "out", out)
        offset = 0
        for index, x in enumerate(xs):
            width = x.shape[-1]
            self._lib.minidl_copy_columns(pout, checked(op, f"xs[{index}]", x), total, offset, width, 0,
                                          width, rows)
            offset += width

    def _concat_backward(self, dxs, dout):
        op = "concat_backward"
        rows, total = rows_cols(dout.shape)
        pdout = checked(op, "dout", dout)
        offset = 0
        for index, dx in enumerate(dxs):
            width = dx.shape[-1]
            self._lib.minidl_copy_columns(output(op, f"dxs[{index}]", dx), pdout, width, 0, total, offset,
                                          width, rows)
            offset += width

    def _dropout_forward(self, out, mask, x, rate, seed):
        op = "dropout_forward"
        px = checked(op, "x", x)
        self._lib.minidl_dropout_forward(output(op, "out", out), output(op, "mask", mask), px, rate,
                                         seed % 2 ** 64, x.size)
