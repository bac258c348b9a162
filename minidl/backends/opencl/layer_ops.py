"""The opencl ops of the layers added with the Keras image toolbox: layer normalization.

A mixin of OpenCLBackend (backend.py), which provides _run1d, _check, _check_same_size and
_column_sums. Everything runs on the device (kernels/layernorm.cl, reduce.cl's column sums).
"""


class LayerOps:
    """Layer normalization of OpenCLBackend."""

    def _layernorm_geometry(self, op, x, vectors):
        if len(x.shape) != 2:
            raise ValueError(f"opencl {op}: x must be 2-D (rows, channels), got shape {x.shape}")
        rows, c = x.shape
        for name, t in vectors.items():
            self._check(op, name, t, (rows,) if name in ("mean", "invstd") else (c,))
        return rows, c

    def layernorm_forward(self, out, mean, invstd, x, gamma, beta, epsilon):
        op = "layernorm_forward"
        self._check_same_size(op, ("out", "x"), (out, x))
        rows, c = self._layernorm_geometry(op, x, {"mean": mean, "invstd": invstd, "gamma": gamma,
                                                   "beta": beta})
        self._run1d("layernorm.cl", "layernorm_forward", rows, out, mean, invstd, x, gamma, beta,
                    float(epsilon), rows, c)

    def layernorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma):
        op = "layernorm_backward"
        self._check_same_size(op, ("dx", "dout", "x"), (dx, dout, x))
        rows, c = self._layernorm_geometry(op, x, {"mean": mean, "invstd": invstd, "gamma": gamma,
                                                   "dgamma": dgamma, "dbeta": dbeta})
        self._run1d("layernorm.cl", "layernorm_dout_xhat", rows, dx, dout, x, mean, invstd, rows, c)
        self._column_sums(dgamma, dx, 1.0, accumulate=False)
        self._column_sums(dbeta, dout, 1.0, accumulate=False)
        self._run1d("layernorm.cl", "layernorm_backward_dx", rows, dx, dout, x, mean, invstd, gamma,
                    rows, c)
