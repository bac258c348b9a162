"""The Keras 3 optimizer updates beyond SGD/Adam/RMSprop/Adagrad, the weights' moving average
and global-norm clipping on the opencl backend (kernels/optim_keras.cl): a mixin of
OpenCLBackend using its _run1d, _reduce, _scratch_tensor and _check_same_size. Only scalar
coefficients are computed on the host; every tensor stays on the device."""

from ..base import nadam_coefficients


def _step_at_least_one(op, step):
    if step < 1:
        raise ValueError(f"opencl {op}: step is 1-based, got {step}")


class OptimOps:
    """Adadelta, Adamax, Nadam, Lion, Ftrl, EMA and clip_by_global_norm of OpenCLBackend."""

    def _optim(self, name, tensors, names, *scalars):
        self._check_same_size(name, names, tensors)
        w = tensors[0]
        self._run1d("optim_keras.cl", name, w.size, *tensors, *scalars, w.size)

    def adadelta_update(self, w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
        self._optim("adadelta_update", (w, g, acc_grad, acc_delta), ("w", "g", "acc_grad", "acc_delta"),
                    float(lr), float(rho), float(epsilon), float(weight_decay))

    def adamax_update(self, w, g, m, u, lr, beta_1, beta_2, epsilon, step, weight_decay):
        _step_at_least_one("adamax_update", step)
        self._optim("adamax_update", (w, g, m, u), ("w", "g", "m", "u"), float(lr),
                    float(lr / (1.0 - beta_1 ** step)), float(beta_1), float(beta_2), float(epsilon),
                    float(weight_decay))

    def nadam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, step, u_product, weight_decay):
        _step_at_least_one("nadam_update", step)
        c_m, c_g, v_scale = nadam_coefficients(beta_1, beta_2, step, u_product)
        self._optim("nadam_update", (w, g, m, v), ("w", "g", "m", "v"), float(lr), float(beta_1),
                    float(beta_2), float(epsilon), float(c_m), float(c_g), float(v_scale),
                    float(weight_decay))

    def lion_update(self, w, g, m, lr, beta_1, beta_2, weight_decay):
        self._optim("lion_update", (w, g, m), ("w", "g", "m"), float(lr), float(beta_1), float(beta_2),
                    float(weight_decay))

    def ftrl_update(self, w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
        self._optim("ftrl_update", (w, g, acc, linear), ("w", "g", "acc", "linear"), float(lr),
                    float(-lr_power), float(l1), float(l2), float(l2_shrinkage), float(weight_decay))

    def ema_update(self, average, w, momentum):
        self._optim("ema_update", (average, w), ("average", "w"), float(momentum))

    def clip_by_global_norm(self, grads, clipnorm):
        # The squares of every tensor add up in one device scalar; each tensor is then scaled
        # by the kernel clip_by_norm uses, which reads the norm from that scalar.
        sumsq = self._scratch_tensor("clip_sumsq", (1,))
        self.fill(sumsq, 0.0)
        for g in grads:
            self._reduce(sumsq, "sumsq_partial", "sum_finish", (g,), g.size, (1.0, 1))
        for g in grads:
            self._run1d("reduce.cl", "clip_by_norm_scale", g.size, g, sumsq, float(clipnorm), g.size)
