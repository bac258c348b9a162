"""The optimizers section on the cpu backend (minidl/backends/contract/optimizers.py checks the
arguments and computes the bias corrections): gradient clipping, the Keras 3 optimizer updates and
the weights' moving average, a mixin of CpuBackend calling csrc/optim.c and csrc/optim_keras.c
(one pass per tensor, threaded). The pointers' checks here are the cpu tensor's own (a
C-contiguous float32 numpy array); shapes were checked by the contract."""

from ._ffi import checked, ffi, output


def _optional(op, name, t):
    return ffi.NULL if t is None else output(op, name, t)


class CpuOptimizerOps:
    """The optimizers section of CpuBackend."""

    def _clip_by_value(self, g, clipvalue):
        self._lib.minidl_clip_by_value(output("clip_by_value", "g", g), float(clipvalue), g.size)

    def _clip_by_norm(self, g, clipnorm):
        self._lib.minidl_clip_by_norm(output("clip_by_norm", "g", g), float(clipnorm), g.size)

    def _clip_by_global_norm(self, grads, clipnorm):
        pointers = [output("clip_by_global_norm", f"grads[{i}]", g) for i, g in enumerate(grads)]
        self._lib.minidl_clip_by_global_norm(ffi.new("float *[]", pointers), float(clipnorm),
                                             ffi.new("int64_t[]", [g.size for g in grads]), len(grads))

    def _sgd_update(self, w, g, velocity, lr, momentum, nesterov, weight_decay):
        op = "sgd_update"
        self._lib.minidl_sgd_update(output(op, "w", w), _optional(op, "velocity", velocity), checked(op, "g", g),
                                    float(lr), float(momentum), int(bool(nesterov)), float(weight_decay), w.size)

    def _adam_update(self, w, g, m, v, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        op = "adam_update"
        self._lib.minidl_adam_update(output(op, "w", w), output(op, "m", m), output(op, "v", v),
                                     checked(op, "g", g), float(lr), float(lr_t), float(beta_1), float(beta_2),
                                     float(epsilon), float(weight_decay), w.size)

    def _rmsprop_update(self, w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay):
        op = "rmsprop_update"
        self._lib.minidl_rmsprop_update(output(op, "w", w), output(op, "ms", ms), _optional(op, "mom", mom),
                                        checked(op, "g", g), float(lr), float(rho), float(momentum),
                                        float(epsilon), float(weight_decay), w.size)

    def _adagrad_update(self, w, g, acc, lr, epsilon, weight_decay):
        op = "adagrad_update"
        self._lib.minidl_adagrad_update(output(op, "w", w), output(op, "acc", acc), checked(op, "g", g),
                                        float(lr), float(epsilon), float(weight_decay), w.size)

    def _adadelta_update(self, w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
        op = "adadelta_update"
        self._lib.minidl_adadelta_update(output(op, "w", w), output(op, "acc_grad", acc_grad),
                                         output(op, "acc_delta", acc_delta), checked(op, "g", g),
                                         float(lr), float(rho), float(epsilon), float(weight_decay), w.size)

    def _adamax_update(self, w, g, m, u, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        op = "adamax_update"
        self._lib.minidl_adamax_update(output(op, "w", w), output(op, "m", m), output(op, "u", u),
                                       checked(op, "g", g), float(lr), float(lr_t), float(beta_1), float(beta_2),
                                       float(epsilon), float(weight_decay), w.size)

    def _amsgrad_update(self, w, g, m, v, v_hat, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        op = "amsgrad_update"
        self._lib.minidl_amsgrad_update(output(op, "w", w), output(op, "m", m), output(op, "v", v),
                                        output(op, "v_hat", v_hat), checked(op, "g", g), float(lr), float(lr_t),
                                        float(beta_1), float(beta_2), float(epsilon), float(weight_decay), w.size)

    def _nadam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale, weight_decay):
        op = "nadam_update"
        self._lib.minidl_nadam_update(output(op, "w", w), output(op, "m", m), output(op, "v", v),
                                      checked(op, "g", g), float(lr), float(beta_1), float(beta_2),
                                      float(epsilon), float(c_m), float(c_g), float(v_scale),
                                      float(weight_decay), w.size)

    def _lion_update(self, w, g, m, lr, beta_1, beta_2, weight_decay):
        op = "lion_update"
        self._lib.minidl_lion_update(output(op, "w", w), output(op, "m", m), checked(op, "g", g), float(lr),
                                     float(beta_1), float(beta_2), float(weight_decay), w.size)

    def _ftrl_update(self, w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
        op = "ftrl_update"
        self._lib.minidl_ftrl_update(output(op, "w", w), output(op, "acc", acc), output(op, "linear", linear),
                                     checked(op, "g", g), float(lr), float(lr_power), float(l1),
                                     float(l2), float(l2_shrinkage), float(weight_decay), w.size)

    def _bop_update(self, w, g, m, gamma, threshold):
        op = "bop_update"   # csrc/bop.c
        self._lib.minidl_bop_update(output(op, "w", w), output(op, "m", m), checked(op, "g", g), float(gamma),
                                    float(threshold), w.size)

    def _ema_update(self, average, w, momentum):
        op = "ema_update"
        self._lib.minidl_ema_update(output(op, "average", average), checked(op, "w", w), float(momentum),
                                    average.size)
