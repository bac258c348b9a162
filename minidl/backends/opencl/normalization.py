"""The normalization section on the opencl backend: batch normalization (kernels/batchnorm.cl,
the GPU profile's cooperative column partials of group_ops.py) and layer normalization
(kernels/layernorm.cl), a mixin of OpenCLBackend using its _run1d, _column_sums, _scratch_tensor,
profile (profiles.py: which kernel shape runs) and rt. The contract (minidl/backends/contract/normalization.py) checked every shape. Every
tensor stays on the device."""


class NormalizationOps:
    """batchnorm and layernorm of OpenCLBackend."""

    @staticmethod
    def _bn_geometry(x):
        """(m, c): x viewed as m rows of c channels."""
        c = x.shape[-1]
        return x.size // c, c

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
        m, c = self._bn_geometry(x)
        gamma = self._bn_vector(gamma, "batchnorm_ones", c, 1.0)
        beta = self._bn_vector(beta, "batchnorm_zeros", c, 0.0)
        self._column_sums(mean, x, 1.0 / m, accumulate=False)
        (partial,), parts = self.profile.column_partial_sums(
            "batchnorm.cl", "batchnorm_sqdev_partial", 1, (x, mean), m, c)
        self.rt.launch(self._kernel("batchnorm.cl", "batchnorm_forward_train_finish"), (c,), None,
                       invstd, moving_mean, moving_var, mean, partial, parts, c, m,
                       float(momentum), float(epsilon))
        self.profile.batchnorm_normalize(out, x, mean, invstd, gamma, beta, m, c)

    def _batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon):
        m, c = self._bn_geometry(x)
        gamma = self._bn_vector(gamma, "batchnorm_ones", c, 1.0)
        beta = self._bn_vector(beta, "batchnorm_zeros", c, 0.0)
        self.profile.batchnorm_forward_infer(out, x, gamma, beta, moving_mean, moving_var, epsilon,
                                             m, c)

    def _batchnorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma):
        m, c = self._bn_geometry(x)
        gamma = self._bn_vector(gamma, "batchnorm_ones", c, 1.0)
        dgamma = self._bn_vector(dgamma, "batchnorm_dgamma", c, None)
        dbeta = self._bn_vector(dbeta, "batchnorm_dbeta", c, None)
        (partial_dbeta, partial_dgamma), parts = self.profile.column_partial_sums(
            "batchnorm.cl", "batchnorm_backward_partial", 2, (dout, x, mean, invstd), m, c)
        self.rt.launch(self._kernel("batchnorm.cl", "batchnorm_backward_finish"), (c,), None,
                       dgamma, dbeta, partial_dgamma, partial_dbeta, parts, c)
        self.profile.batchnorm_backward_dx(dx, dout, x, mean, invstd, gamma, dgamma, dbeta, m, c)

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
