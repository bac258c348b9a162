"""The normalization section on the cpu backend: batch and layer normalization on csrc/batchnorm.c
and csrc/layernorm.c, a mixin of CpuBackend (its _lib and _column_scratch). The contract
(minidl/backends/contract/normalization.py) checked every shape; the pointers' checks here are
the cpu tensor's own (C-contiguous float32 numpy arrays)."""

from ._ffi import checked, ffi, output


def _optional(op, name, t, writable=False):
    return ffi.NULL if t is None else checked(op, name, t, writable=writable)


class CpuNormalizationOps:
    """batchnorm and layernorm of CpuBackend."""

    def _layernorm_forward(self, out, mean, invstd, x, gamma, beta, epsilon, centered):
        op = "layernorm_forward"
        rows, c = x.shape
        self._lib.minidl_layernorm_forward(
            output(op, "out", out), output(op, "mean", mean), output(op, "invstd", invstd),
            checked(op, "x", x), checked(op, "gamma", gamma), checked(op, "beta", beta), float(epsilon),
            int(centered), rows, c)

    def _layernorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma, centered):
        op = "layernorm_backward"
        rows, c = x.shape
        self._lib.minidl_layernorm_backward(
            output(op, "dx", dx), output(op, "dgamma", dgamma), output(op, "dbeta", dbeta),
            checked(op, "dout", dout), checked(op, "x", x), checked(op, "mean", mean),
            checked(op, "invstd", invstd), checked(op, "gamma", gamma), int(centered), rows, c,
            self._column_scratch(c))

    def _batchnorm_forward_train(self, out, mean, invstd, x, gamma, beta, moving_mean, moving_var,
                                 momentum, epsilon):
        op = "batchnorm_forward_train"
        c = x.shape[-1]
        self._lib.minidl_batchnorm_forward_train(
            output(op, "out", out), output(op, "mean", mean), output(op, "invstd", invstd),
            output(op, "moving_mean", moving_mean), output(op, "moving_var", moving_var), checked(op, "x", x),
            _optional(op, "gamma", gamma), _optional(op, "beta", beta), float(momentum), float(epsilon),
            x.size // c, c, self._column_scratch(c))

    def _batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon):
        op = "batchnorm_forward_infer"
        c = x.shape[-1]
        self._lib.minidl_batchnorm_forward_infer(
            output(op, "out", out), checked(op, "x", x), _optional(op, "gamma", gamma),
            _optional(op, "beta", beta), checked(op, "moving_mean", moving_mean),
            checked(op, "moving_var", moving_var), float(epsilon), x.size // c, c, self._column_scratch(c))

    def _batchnorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma):
        op = "batchnorm_backward"
        c = x.shape[-1]
        self._lib.minidl_batchnorm_backward(
            output(op, "dx", dx), _optional(op, "dgamma", dgamma, True), _optional(op, "dbeta", dbeta, True),
            checked(op, "dout", dout), checked(op, "x", x), checked(op, "mean", mean),
            checked(op, "invstd", invstd), _optional(op, "gamma", gamma), x.size // c, c,
            self._column_scratch(c))
