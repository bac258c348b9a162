"""The Keras 3 optimizer updates beyond SGD/Adam/RMSprop/Adagrad, the weights' moving average,
global-norm clipping, the L1/L2 penalties and the norm constraints on the cpu backend: a mixin
of CpuBackend calling csrc/optim_keras.c and csrc/regularize.c (one pass per tensor, threaded)."""

import numpy as np

from ..base import nadam_coefficients, norm_layout, orthogonal_layout
from ._ffi import checked, ffi, fptr, output, raise_for_status


def _step_at_least_one(op, step):
    if step < 1:
        raise ValueError(f"{op}: step is 1-based, got {step}")


class OptimOps:
    """Adadelta, Adamax, Nadam, Lion, Ftrl, EMA, clip_by_global_norm, the L1/L2 and orthogonal
    penalties and the norm constraints of CpuBackend."""

    def adadelta_update(self, w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
        op = "adadelta_update"
        pw = output(op, "w", w)
        self._lib.minidl_adadelta_update(pw, output(op, "acc_grad", acc_grad, w.shape),
                                         output(op, "acc_delta", acc_delta, w.shape), checked(op, "g", g, w.shape),
                                         float(lr), float(rho), float(epsilon), float(weight_decay), w.size)

    def adamax_update(self, w, g, m, u, lr, beta_1, beta_2, epsilon, step, weight_decay):
        op = "adamax_update"
        _step_at_least_one(op, step)
        pw = output(op, "w", w)
        self._lib.minidl_adamax_update(pw, output(op, "m", m, w.shape), output(op, "u", u, w.shape),
                                       checked(op, "g", g, w.shape), float(lr), float(lr / (1.0 - beta_1 ** step)),
                                       float(beta_1), float(beta_2), float(epsilon), float(weight_decay), w.size)

    def amsgrad_update(self, w, g, m, v, v_hat, lr, beta_1, beta_2, epsilon, step, weight_decay):
        op = "amsgrad_update"
        _step_at_least_one(op, step)
        pw = output(op, "w", w)
        lr_t = lr * (1.0 - beta_2 ** step) ** 0.5 / (1.0 - beta_1 ** step)
        self._lib.minidl_amsgrad_update(pw, output(op, "m", m, w.shape), output(op, "v", v, w.shape),
                                        output(op, "v_hat", v_hat, w.shape), checked(op, "g", g, w.shape),
                                        float(lr), float(lr_t), float(beta_1), float(beta_2), float(epsilon),
                                        float(weight_decay), w.size)

    def nadam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, step, u_product, weight_decay):
        op = "nadam_update"
        _step_at_least_one(op, step)
        c_m, c_g, v_scale = nadam_coefficients(beta_1, beta_2, step, u_product)
        pw = output(op, "w", w)
        self._lib.minidl_nadam_update(pw, output(op, "m", m, w.shape), output(op, "v", v, w.shape),
                                      checked(op, "g", g, w.shape), float(lr), float(beta_1), float(beta_2),
                                      float(epsilon), c_m, c_g, v_scale, float(weight_decay), w.size)

    def lion_update(self, w, g, m, lr, beta_1, beta_2, weight_decay):
        op = "lion_update"
        pw = output(op, "w", w)
        self._lib.minidl_lion_update(pw, output(op, "m", m, w.shape), checked(op, "g", g, w.shape), float(lr),
                                     float(beta_1), float(beta_2), float(weight_decay), w.size)

    def ftrl_update(self, w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
        op = "ftrl_update"
        pw = output(op, "w", w)
        self._lib.minidl_ftrl_update(pw, output(op, "acc", acc, w.shape), output(op, "linear", linear, w.shape),
                                     checked(op, "g", g, w.shape), float(lr), float(lr_power), float(l1),
                                     float(l2), float(l2_shrinkage), float(weight_decay), w.size)

    def ema_update(self, average, w, momentum):
        op = "ema_update"
        pa = output(op, "average", average)
        self._lib.minidl_ema_update(pa, checked(op, "w", w, average.shape), float(momentum), average.size)

    def clip_by_global_norm(self, grads, clipnorm):
        pointers = [output("clip_by_global_norm", f"grads[{i}]", g) for i, g in enumerate(grads)]
        self._lib.minidl_clip_by_global_norm(ffi.new("float *[]", pointers), float(clipnorm),
                                             ffi.new("int64_t[]", [g.size for g in grads]), len(grads))

    # ------------------------------------------- regularizers, constraints (csrc/regularize.c)
    def l1_l2_penalty(self, out, w, l1, l2, accumulate=False):
        op = "l1_l2_penalty"
        self._lib.minidl_l1_l2_penalty(output(op, "out", out, (1,)), checked(op, "w", w), float(l1), float(l2),
                                       int(bool(accumulate)), w.size)

    def l1_l2_gradient(self, g, w, l1, l2):
        op = "l1_l2_gradient"
        pg = output(op, "g", g)
        self._lib.minidl_l1_l2_gradient(pg, checked(op, "w", w, g.shape), float(l1), float(l2), g.size)

    def norm_constraint(self, w, axis, min_value, max_value, rate):
        outer, reduce, inner = norm_layout(w.shape, axis)
        self._lib.minidl_norm_constraint(output("norm_constraint", "w", w), float(min_value), float(max_value),
                                         float(rate), outer, reduce, inner)

    def _orthogonal_scratch(self, floats):
        """(float*, length) of scratch for the orthogonal regularizer; it grows once."""
        held = getattr(self, "_orthogonal_held", None)
        if held is None or held.size < floats:
            held = self._orthogonal_held = np.empty(floats, dtype=np.float32)
        return fptr(held), held.size

    def orthogonal_penalty(self, out, w, factor, mode, accumulate=False):
        op = "orthogonal_penalty"
        m, k, sv, se = orthogonal_layout(w.shape, mode, op)
        status = self._lib.minidl_orthogonal_penalty(output(op, "out", out, (1,)), checked(op, "w", w), float(factor),
                                                     int(bool(accumulate)), m, k, sv, se,
                                                     *self._orthogonal_scratch(m * k + m))
        if status:
            raise_for_status(op, status)

    def orthogonal_gradient(self, g, w, factor, mode):
        op = "orthogonal_gradient"
        m, k, sv, se = orthogonal_layout(w.shape, mode, op)
        pg = output(op, "g", g, w.shape)
        status = self._lib.minidl_orthogonal_gradient(pg, checked(op, "w", w), float(factor), m, k, sv, se,
                                                      *self._orthogonal_scratch(2 * m * k + m))
        if status:
            raise_for_status(op, status)
