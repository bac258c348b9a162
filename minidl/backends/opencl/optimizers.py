"""The optimizers section on the opencl backend (minidl/backends/contract/optimizers.py checks the
arguments and computes the bias corrections on the host): gradient clipping (kernels/reduce.cl,
elementwise.cl), the Keras 3 optimizer updates (kernels/optim.cl, optim_keras.cl) and the weights'
moving average, a mixin of OpenCLBackend using its _run1d, _scalar_reduce and _scratch_tensor
helpers. Only scalar coefficients come from the host; every tensor stays on the device."""


class OptimizerOps:
    """The optimizers section of OpenCLBackend."""

    def _optim(self, name, w, *tensors_and_scalars):
        self._run1d("optim_keras.cl", name, w.size, w, *tensors_and_scalars, w.size)

    def _clip_by_value(self, g, clipvalue):
        self._run1d("elementwise.cl", "clip_by_value", g.size, g, float(clipvalue), g.size)

    def _clip_by_norm(self, g, clipnorm):
        sumsq = self._scratch_tensor("clip_sumsq", (1,))
        self._scalar_reduce(sumsq, "sumsq_partial", "sum_finish", (g,), g.size, (1.0, 0))
        self._run1d("reduce.cl", "clip_by_norm_scale", g.size, g, sumsq, float(clipnorm), g.size)

    def _clip_by_global_norm(self, grads, clipnorm):
        # The squares of every tensor add up in one device scalar; each tensor is then scaled
        # by the kernel clip_by_norm uses, which reads the norm from that scalar.
        sumsq = self._scratch_tensor("clip_sumsq", (1,))
        self.fill(sumsq, 0.0)
        for g in grads:
            self._scalar_reduce(sumsq, "sumsq_partial", "sum_finish", (g,), g.size, (1.0, 1))
        for g in grads:
            self._run1d("reduce.cl", "clip_by_norm_scale", g.size, g, sumsq, float(clipnorm), g.size)

    def _sgd_update(self, w, g, velocity, lr, momentum, nesterov, weight_decay):
        if velocity is None:
            self._run1d("optim.cl", "sgd_update", w.size, w, g, float(lr), float(weight_decay), w.size)
            return
        self._run1d("optim.cl", "sgd_momentum_update", w.size, w, g, velocity, float(lr),
                    float(momentum), int(bool(nesterov)), float(weight_decay), w.size)

    def _adam_update(self, w, g, m, v, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        self._run1d("optim.cl", "adam_update", w.size, w, g, m, v, float(lr), float(lr_t),
                    float(beta_1), float(beta_2), float(epsilon), float(weight_decay), w.size)

    def _rmsprop_update(self, w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay):
        use_momentum = mom is not None
        self._run1d("optim.cl", "rmsprop_update", w.size, w, g, ms, mom if use_momentum else ms,
                    int(use_momentum), float(lr), float(rho), float(momentum), float(epsilon),
                    float(weight_decay), w.size)

    def _adagrad_update(self, w, g, acc, lr, epsilon, weight_decay):
        self._run1d("optim.cl", "adagrad_update", w.size, w, g, acc, float(lr), float(epsilon),
                    float(weight_decay), w.size)

    def _adadelta_update(self, w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
        self._optim("adadelta_update", w, g, acc_grad, acc_delta, float(lr), float(rho), float(epsilon),
                    float(weight_decay))

    def _adamax_update(self, w, g, m, u, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        self._optim("adamax_update", w, g, m, u, float(lr), float(lr_t), float(beta_1), float(beta_2),
                    float(epsilon), float(weight_decay))

    def _amsgrad_update(self, w, g, m, v, v_hat, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        self._optim("amsgrad_update", w, g, m, v, v_hat, float(lr), float(lr_t), float(beta_1),
                    float(beta_2), float(epsilon), float(weight_decay))

    def _nadam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale, weight_decay):
        self._optim("nadam_update", w, g, m, v, float(lr), float(beta_1), float(beta_2), float(epsilon),
                    float(c_m), float(c_g), float(v_scale), float(weight_decay))

    def _lion_update(self, w, g, m, lr, beta_1, beta_2, weight_decay):
        self._optim("lion_update", w, g, m, float(lr), float(beta_1), float(beta_2), float(weight_decay))

    def _ftrl_update(self, w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
        self._optim("ftrl_update", w, g, acc, linear, float(lr), float(-lr_power), float(l1), float(l2),
                    float(l2_shrinkage), float(weight_decay))

    def _bop_update(self, w, g, m, gamma, threshold):
        self._run1d("bop.cl", "bop_update", w.size, w, g, m, float(gamma), float(threshold), w.size)

    def _ema_update(self, average, w, momentum):
        self._optim("ema_update", average, w, float(momentum))
