"""The normalization section on the opencl backend: batch normalization (kernels/batchnorm.cl,
the GPU profile's cooperative column partials of group_ops.py) and layer normalization
(kernels/layernorm.cl), a mixin of OpenCLBackend using its _run1d, _column_sums, _scratch_tensor
and rt. The contract (minidl/backends/contract/normalization.py) checked every shape. Every
tensor stays on the device."""

from .metrics import COLUMN_PARTS


class NormalizationOps:
    """batchnorm and layernorm of OpenCLBackend."""

    def _bn_geometry(self, x):
        c = x.shape[-1]
        m = x.size // c
        parts = max(1, min(COLUMN_PARTS, m))
        return m, c, parts, -(-m // parts)

    def _bn_vector(self, t, name, c, value):
        """t, or for None (scale / center off) a device vector of c `value`s: the kernels always
        read gamma and beta and always write dgamma and dbeta (then into this scratch)."""
        if t is not None:
            return t
        held = self._scratch_tensor(name, (c,))
        if value is not None:
            self.fill(held, value)
        return held

    def _batchnorm_forward_train(self, out, mean, invstd, x, gamma, beta, moving_mean, moving_var,
                                 momentum, epsilon):
        m, c, parts, rows_per_part = self._bn_geometry(x)
        gamma = self._bn_vector(gamma, "batchnorm_ones", c, 1.0)
        beta = self._bn_vector(beta, "batchnorm_zeros", c, 0.0)
        self._column_sums(mean, x, 1.0 / m, accumulate=False)
        if self.gpu:
            (partial,), parts = self.column_partials("batchnorm_sqdev_partial_wg", 1, (x, mean), m, c)
        else:
            partial = self._scratch_tensor("column_partial", (parts, c))
            self._run1d("batchnorm.cl", "batchnorm_sqdev_partial", parts, partial, x, mean, m, c,
                        rows_per_part, parts)
        self.rt.launch(self._kernel("batchnorm.cl", "batchnorm_forward_train_finish"), (c,), None,
                       invstd, moving_mean, moving_var, mean, partial, parts, c, m,
                       float(momentum), float(epsilon))
        if self.gpu:
            self.per_element("batchnorm_normalize_elements", x.size, out, x, mean, invstd, gamma,
                             beta, c)
            return
        self._run1d("batchnorm.cl", "batchnorm_normalize", m, out, x, mean, invstd, gamma, beta, m, c)

    def _batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon):
        m, c, _, _ = self._bn_geometry(x)
        gamma = self._bn_vector(gamma, "batchnorm_ones", c, 1.0)
        beta = self._bn_vector(beta, "batchnorm_zeros", c, 0.0)
        if self.gpu:
            self.per_element("batchnorm_forward_infer_elements", x.size, out, x, gamma, beta,
                             moving_mean, moving_var, float(epsilon), c)
            return
        self._run1d("batchnorm.cl", "batchnorm_forward_infer", m, out, x, gamma, beta, moving_mean,
                    moving_var, float(epsilon), m, c)

    def _batchnorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma):
        m, c, parts, rows_per_part = self._bn_geometry(x)
        gamma = self._bn_vector(gamma, "batchnorm_ones", c, 1.0)
        dgamma = self._bn_vector(dgamma, "batchnorm_dgamma", c, None)
        dbeta = self._bn_vector(dbeta, "batchnorm_dbeta", c, None)
        if self.gpu:
            (partial_dbeta, partial_dgamma), parts = self.column_partials(
                "batchnorm_backward_partial_wg", 2, (dout, x, mean, invstd), m, c)
        else:
            partial_dbeta = self._scratch_tensor("column_partial", (parts, c))
            partial_dgamma = self._scratch_tensor("column_partial_2", (parts, c))
            self._run1d("batchnorm.cl", "batchnorm_backward_partial", parts, partial_dbeta,
                        partial_dgamma, dout, x, mean, invstd, m, c, rows_per_part, parts)
        self.rt.launch(self._kernel("batchnorm.cl", "batchnorm_backward_finish"), (c,), None,
                       dgamma, dbeta, partial_dgamma, partial_dbeta, parts, c)
        if self.gpu:
            self.per_element("batchnorm_backward_dx_elements", x.size, dx, dout, x, mean, invstd,
                             gamma, dgamma, dbeta, m, c)
            return
        self._run1d("batchnorm.cl", "batchnorm_backward_dx", m, dx, dout, x, mean, invstd, gamma,
                    dgamma, dbeta, m, c)

    def _layernorm_forward(self, out, mean, invstd, x, gamma, beta, epsilon, centered):
        rows, c = x.shape
        self._run1d("layernorm.cl", "layernorm_forward", rows, out, mean, invstd, x, gamma, beta,
                    float(epsilon), int(centered), rows, c)

    def _layernorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma, centered):
        rows, c = x.shape
        self._run1d("layernorm.cl", "layernorm_dout_xhat", rows, dx, dout, x, mean, invstd,
                    int(centered), rows, c)
        self._column_sums(dgamma, dx, 1.0, accumulate=False)
        self._column_sums(dbeta, dout, 1.0, accumulate=False)
        self._run1d("layernorm.cl", "layernorm_backward_dx", rows, dx, dout, x, mean, invstd, gamma,
                    int(centered), rows, c)
