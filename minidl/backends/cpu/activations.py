"""The activations section of the contract (contract/activations.py) on the C kernels of
csrc/elementwise.c (softmax along the last axis). The contract checked
the name (and gives its kernels' code), the shapes and the forward input x of the activations
that need it."""

from ._ffi import checked, ffi, output
from .elementwise import rows_cols


class CpuActivationOps:
    """Mixin of CpuBackend: the activation ops."""

    def _activation_forward(self, out, x, name, code, alpha):
        op = "activation_forward"
        px = checked(op, "x", x)   # the input's errors before the output's
        rows, c = rows_cols(x.shape)
        self._lib.minidl_activation_forward(output(op, "out", out), px, code, alpha, rows, c)

    def _activation_backward(self, dx, dout, y, x, name, code, alpha):
        op = "activation_backward"
        py = checked(op, "y", y)
        px = ffi.NULL if x is None else checked(op, "x", x)
        rows, c = rows_cols(y.shape)
        self._lib.minidl_activation_backward(output(op, "dx", dx), checked(op, "dout", dout), py, px, code,
                                             alpha, rows, c)
