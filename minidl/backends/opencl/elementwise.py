"""The elementwise section of the contract (contract/elementwise.py) on kernels/elementwise.cl
and dropout.cl: a mixin of OpenCLBackend (backend.py), which provides _run1d, the kernel profile and
_column_sums. The contract checked every shape and dropout's arguments."""

import numpy as np


class ElementwiseOps:
    """Mixin of OpenCLBackend: the elementwise ops."""

    def _add(self, out, a, b):
        self._run1d("elementwise.cl", "add", out.size, out, a, b, out.size)

    def _axpby(self, out, alpha, x, beta, y):
        self._run1d("elementwise.cl", "axpby", out.size, out, alpha, x, beta, y, out.size)

    def _multiply(self, out, a, b):
        self._run1d("elementwise.cl", "multiply", out.size, out, a, b, out.size)

    def _bias_add(self, out, x, bias):
        self.profile.bias_add(out, x, bias)

    def _bias_grad(self, dbias, dout):
        self._column_sums(dbias, dout, 1.0, accumulate=False)

    def _concat_forward(self, out, xs):
        offset = 0
        for x in xs:
            c_in = x.shape[-1]
            rows = x.size // max(c_in, 1)
            self._run1d("elementwise.cl", "concat_piece_forward", rows, out, x, c_in,
                        out.shape[-1], offset, rows)
            offset += c_in

    def _concat_backward(self, dxs, dout):
        offset = 0
        for dx in dxs:
            c_in = dx.shape[-1]
            rows = dx.size // max(c_in, 1)
            self._run1d("elementwise.cl", "concat_piece_backward", rows, dx, dout, c_in,
                        dout.shape[-1], offset, rows)
            offset += c_in

    def _dropout_forward(self, out, mask, x, rate, seed):
        seed &= 0xFFFFFFFFFFFFFFFF
        blocks = -(-x.size // 4)
        self._run1d("dropout.cl", "dropout_forward", blocks, out, mask, x, rate,
                    1.0 / (1.0 - rate), np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32), x.size)
