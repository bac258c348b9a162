"""The optimizers section of the contract: gradient clipping, the Keras 3 optimizer updates and
the weights' moving average. The bias corrections and learning-rate terms are computed here, in
float64 on the host, once for every backend; the implementations apply them to the tensors.

Each update changes w and its state tensors in place, in one pass over the tensor. The state
tensors and g have w's shape. weight_decay is decoupled (AdamW-style): w -= lr * weight_decay * w
before the step, so every implementation still receives lr beside the corrected step size.
"""

import math

from .checks import optional_shape, same_shape, step_at_least_one


def nadam_coefficients(beta_1, beta_2, step, u_product):
    """(c_m, c_g, v_scale) of Keras's Nadam at 1-based `step`: c_m = u_{t+1} / (1 - u_product
    u_{t+1}), c_g = (1 - u_t) / (1 - u_product), v_scale = 1 / (1 - b2^t), u_s = b1 (1 - 0.5 * 0.96^s)."""
    u_t = beta_1 * (1.0 - 0.5 * 0.96 ** step)
    u_t_1 = beta_1 * (1.0 - 0.5 * 0.96 ** (step + 1))
    return (u_t_1 / (1.0 - u_product * u_t_1), (1.0 - u_t) / (1.0 - u_product),
            1.0 / (1.0 - beta_2 ** step))


def adam_step_size(lr, beta_1, beta_2, step):
    """Keras Adam's bias-corrected step size at 1-based `step`: lr sqrt(1 - b2^t) / (1 - b1^t)."""
    return lr * math.sqrt(1.0 - beta_2 ** step) / (1.0 - beta_1 ** step)


def _states(op, w, **tensors):
    """Every state tensor (and g) has w's shape; None is an absent optional state."""
    shape = w.shape
    for name, t in tensors.items():
        optional_shape(op, name, t, shape)


class OptimizersSection:
    """The contract's optimizer ops; a backend implements the underscore names."""

    def clip_by_value(self, g, clipvalue):
        """g = clip(g, -clipvalue, clipvalue) in place."""
        self._clip_by_value(g, clipvalue)

    def clip_by_norm(self, g, clipnorm):
        """g *= clipnorm / max(||g||_2, clipnorm) in place (computed without leaving the device)."""
        self._clip_by_norm(g, clipnorm)

    def clip_by_global_norm(self, grads, clipnorm):
        """Keras's global_clipnorm: every tensor of the list grads *= clipnorm / max(norm, clipnorm),
        norm the 2-norm of all of them together (computed without leaving the device)."""
        self._clip_by_global_norm(list(grads), clipnorm)

    def sgd_update(self, w, g, velocity, lr, momentum, nesterov, weight_decay):
        """Keras SGD: velocity = momentum * velocity - lr * g; w += velocity
        (nesterov: w += momentum * velocity - lr * g). velocity is None when momentum == 0."""
        op = "sgd_update"
        if velocity is None and momentum:
            raise ValueError(f"{op}: momentum={momentum} needs a velocity tensor of shape "
                             f"{tuple(w.shape)}, got None")
        _states(op, w, g=g, velocity=velocity)
        self._sgd_update(w, g, velocity, lr, momentum, nesterov, weight_decay)

    def adam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, step, weight_decay):
        """Keras Adam at 1-based step t: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
        w -= lr_t * m / (sqrt(v) + epsilon), lr_t = lr * sqrt(1-b2^t) / (1-b1^t)."""
        op = "adam_update"
        step_at_least_one(op, step)
        _states(op, w, g=g, m=m, v=v)
        self._adam_update(w, g, m, v, lr, adam_step_size(lr, beta_1, beta_2, step), beta_1, beta_2,
                          epsilon, weight_decay)

    def amsgrad_update(self, w, g, m, v, v_hat, lr, beta_1, beta_2, epsilon, step, weight_decay):
        """Keras Adam(amsgrad=True) at 1-based step t: m and v as adam_update; v_hat = max(v_hat, v);
        w -= lr_t * m / (sqrt(v_hat) + eps), lr_t as adam_update's."""
        op = "amsgrad_update"
        step_at_least_one(op, step)
        _states(op, w, g=g, m=m, v=v, v_hat=v_hat)
        self._amsgrad_update(w, g, m, v, v_hat, lr, adam_step_size(lr, beta_1, beta_2, step), beta_1,
                             beta_2, epsilon, weight_decay)

    def adamax_update(self, w, g, m, u, lr, beta_1, beta_2, epsilon, step, weight_decay):
        """Keras Adamax at 1-based step t: m += (g - m)(1-b1); u = max(b2 u, |g|);
        w -= lr_t * m / (u + eps), lr_t = lr / (1 - b1^t)."""
        op = "adamax_update"
        step_at_least_one(op, step)
        _states(op, w, g=g, m=m, u=u)
        self._adamax_update(w, g, m, u, lr, lr / (1.0 - beta_1 ** step), beta_1, beta_2, epsilon,
                            weight_decay)

    def nadam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, step, u_product, weight_decay):
        """Keras Nadam at 1-based step t, u_product = prod over s <= t of b1 (1 - 0.5 * 0.96^s):
        m += (g - m)(1-b1); v += (g^2 - v)(1-b2);
        w -= lr (c_m m + c_g g) / (sqrt(v v_scale) + eps), (c_m, c_g, v_scale) = nadam_coefficients()."""
        op = "nadam_update"
        step_at_least_one(op, step)
        _states(op, w, g=g, m=m, v=v)
        c_m, c_g, v_scale = nadam_coefficients(beta_1, beta_2, step, u_product)
        self._nadam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale, weight_decay)

    def rmsprop_update(self, w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay):
        """Keras RMSprop: ms = rho ms + (1-rho) g^2; inc = lr g / sqrt(ms + eps);
        with momentum (mom not None): mom = momentum mom + inc, w -= mom; else w -= inc."""
        _states("rmsprop_update", w, g=g, ms=ms, mom=mom)
        self._rmsprop_update(w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay)

    def adagrad_update(self, w, g, acc, lr, epsilon, weight_decay):
        """Keras Adagrad: acc += g^2; w -= lr g / sqrt(acc + eps)."""
        _states("adagrad_update", w, g=g, acc=acc)
        self._adagrad_update(w, g, acc, lr, epsilon, weight_decay)

    def adadelta_update(self, w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
        """Keras Adadelta: acc_grad = rho acc_grad + (1-rho) g^2;
        delta = -sqrt(acc_delta + eps) g / sqrt(acc_grad + eps);
        acc_delta = rho acc_delta + (1-rho) delta^2; w += lr delta."""
        _states("adadelta_update", w, g=g, acc_grad=acc_grad, acc_delta=acc_delta)
        self._adadelta_update(w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay)

    def lion_update(self, w, g, m, lr, beta_1, beta_2, weight_decay):
        """Keras Lion: w -= lr sign(b1 m + (1-b1) g); then m = b2 m + (1-b2) g."""
        _states("lion_update", w, g=g, m=m)
        self._lion_update(w, g, m, lr, beta_1, beta_2, weight_decay)

    def ftrl_update(self, w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
        """Keras Ftrl (l2 = l2_regularization_strength + beta / (2 lr)): new = acc + g^2;
        linear += g + 2 l2_shrinkage w - (new^-p - acc^-p) / lr * w (p = lr_power);
        w = (clip(linear, -l1, l1) - linear) / (new^-p / lr + 2 l2); acc = new."""
        _states("ftrl_update", w, g=g, acc=acc, linear=linear)
        self._ftrl_update(w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay)

    def bop_update(self, w, g, m, gamma, threshold):
        """larq's Bop on binary weights: m += gamma (g - m); w = sign(-sign(w m - threshold) w) with
        sign(0) = +1, so w flips where w m > threshold and becomes sign(w) elsewhere."""
        _states("bop_update", w, g=g, m=m)
        self._bop_update(w, g, m, gamma, threshold)

    def ema_update(self, average, w, momentum):
        """Keras use_ema: average = momentum * average + (1 - momentum) * w (momentum 0 copies)."""
        same_shape("ema_update", "w", w, average.shape)
        self._ema_update(average, w, momentum)
