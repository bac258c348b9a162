"""The `precision` argument of gemm and the conv ops (minidl/backends/base.py) where a backend
has no native kernel for it: the operands are rounded into buffers (round_to_precision), then
the float32 op runs. The numpy backend, the reference, always works this way.

A mixin: every backend class inherits it. Buffers are kept per (role, shape) and reused by every
call, so a training loop allocates nothing after its first step."""

from .contract.checks import check_precision


class RoundedOperands:
    """_rounded(op, role, t, precision): t rounded to precision in a kept buffer, or t itself
    when precision is None."""

    def _rounded(self, op, role, t, precision):
        if check_precision(op, precision) is None:
            return t
        buffers = getattr(self, "_rounded_operand_buffers", None)
        if buffers is None:
            buffers = self._rounded_operand_buffers = {}
        key = (role, tuple(self.shape(t)))
        buffer = buffers.get(key)
        if buffer is None:
            buffer = buffers[key] = self.empty(key[1])
        self.round_to_precision(buffer, t, precision)
        return buffer

    def _rounded_conv2d_forward(self, out, x, weight, bias, plan, precision):
        op = "conv2d_forward"
        self._conv2d_forward(out, self._rounded(op, "x", x, precision),
                             self._rounded(op, "weight", weight, precision), bias, plan, None)

    def _rounded_conv2d_backward_data(self, dx, dout, weight, plan, precision):
        op = "conv2d_backward_data"
        self._conv2d_backward_data(dx, self._rounded(op, "dout", dout, precision),
                                   self._rounded(op, "weight", weight, precision), plan, None)

    def _rounded_conv2d_backward_filter(self, dweight, dbias, dout, x, plan, precision):
        """dbias comes from the float32 dout (a sum, as Keras keeps it in float32)."""
        op = "conv2d_backward_filter"
        self._conv2d_backward_filter(dweight, None, self._rounded(op, "dout", dout, precision),
                                     self._rounded(op, "x", x, precision), plan, None)
        if dbias is not None:
            shape = self.shape(dout)
            rows = 1
            for extent in shape[:-1]:
                rows *= extent
            self.bias_grad(dbias, self.reshape(dout, (rows, shape[-1])))
