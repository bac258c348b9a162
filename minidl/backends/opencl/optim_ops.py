"""The Keras 3 optimizer updates beyond SGD/Adam/RMSprop/Adagrad, the weights' moving average,
global-norm clipping (kernels/optim_keras.cl), the L1/L2 penalties and the norm constraints
(kernels/regularize.cl) on the opencl backend: a mixin of OpenCLBackend using its _run1d,
_reduce, _scratch_tensor and _check helpers. Only scalar coefficients are computed on the host;
every tensor stays on the device."""

from ..base import nadam_coefficients, norm_layout, orthogonal_layout
from .training_ops import REDUCE_MIN_CHUNK, REDUCE_PARTS


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

    def amsgrad_update(self, w, g, m, v, v_hat, lr, beta_1, beta_2, epsilon, step, weight_decay):
        _step_at_least_one("amsgrad_update", step)
        self._optim("amsgrad_update", (w, g, m, v, v_hat), ("w", "g", "m", "v", "v_hat"), float(lr),
                    float(lr * (1.0 - beta_2 ** step) ** 0.5 / (1.0 - beta_1 ** step)), float(beta_1),
                    float(beta_2), float(epsilon), float(weight_decay))

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

    # ------------------------------------------- regularizers, constraints (kernels/regularize.cl)
    def l1_l2_penalty(self, out, w, l1, l2, accumulate=False):
        self._check("l1_l2_penalty", "out", out, (1,))
        chunk = max(REDUCE_MIN_CHUNK, -(-w.size // REDUCE_PARTS))
        parts = max(1, -(-w.size // chunk))
        partial = self._scratch_tensor("l1_l2_partial", (parts,))
        self._run1d("regularize.cl", "l1_l2_partial", parts, partial, w, float(l1), float(l2), w.size, parts,
                    chunk)
        self.rt.launch(self._kernel("regularize.cl", "l1_l2_finish"), (1,), None, out, partial, parts,
                       int(bool(accumulate)))

    def l1_l2_gradient(self, g, w, l1, l2):
        self._check_same_size("l1_l2_gradient", ("g", "w"), (g, w))
        self._run1d("regularize.cl", "l1_l2_gradient", g.size, g, w, float(l1), float(l2), g.size)

    def norm_constraint(self, w, axis, min_value, max_value, rate):
        outer, reduce, inner = norm_layout(w.shape, axis, "opencl norm_constraint")
        self._run1d("regularize.cl", "norm_constraint", outer * inner, w, outer, reduce, inner,
                    float(min_value), float(max_value), float(rate))

    def _orthogonal_normalized(self, op, w, mode):
        m, k, sv, se = orthogonal_layout(w.shape, mode, f"opencl {op}")
        n = self._scratch_tensor("orthogonal_n", (m, k))
        inv = self._scratch_tensor("orthogonal_inv", (m,))
        self._run1d("regularize.cl", "orthogonal_normalize", m, n, inv, w, m, k, sv, se)
        return n, inv, (m, k, sv, se)

    def orthogonal_penalty(self, out, w, factor, mode, accumulate=False):
        self._check("orthogonal_penalty", "out", out, (1,))
        n, _, (m, k, _, _) = self._orthogonal_normalized("orthogonal_penalty", w, mode)
        partial = self._scratch_tensor("orthogonal_partial", (m,))
        scale = factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0
        self._run1d("regularize.cl", "orthogonal_partial", m, partial, n, m, k, float(scale))
        self.rt.launch(self._kernel("regularize.cl", "l1_l2_finish"), (1,), None, out, partial, m,
                       int(bool(accumulate)))

    def orthogonal_gradient(self, g, w, factor, mode):
        self._check("orthogonal_gradient", "g", g, w.shape)
        n, inv, (m, k, sv, se) = self._orthogonal_normalized("orthogonal_gradient", w, mode)
        d = self._scratch_tensor("orthogonal_d", (m, k))
        c2 = 2.0 * factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0
        self._run1d("regularize.cl", "orthogonal_gradient", m, g, d, n, inv, m, k, sv, se, float(c2))
