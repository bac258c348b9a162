"""The optimizers section on the numpy backend: gradient clipping and the Keras 3 optimizer update
rules, applied in place. The contract (minidl/backends/contract/optimizers.py) checked the
arguments and computed the bias corrections (float64) that are applied here to the tensors in
their own dtype. weight_decay is decoupled: w -= lr * weight_decay * w before the step, as Keras 3.
"""

import math

import numpy as np


def _decay(w, lr, weight_decay):
    if weight_decay:
        w -= (lr * weight_decay) * w


def clip_by_value(g, clipvalue):
    np.clip(g, -clipvalue, clipvalue, out=g)


def clip_by_norm(g, clipnorm):
    norm = math.sqrt(float(np.square(g, dtype=np.float64).sum()))
    g *= clipnorm / max(norm, clipnorm)


def sgd_update(w, g, velocity, lr, momentum, nesterov, weight_decay):
    _decay(w, lr, weight_decay)
    if velocity is None:
        w -= lr * g
        return
    velocity *= momentum
    velocity -= lr * g
    if nesterov:
        w += momentum * velocity - lr * g
    else:
        w += velocity


def adam_update(w, g, m, v, lr, lr_t, beta_1, beta_2, epsilon, weight_decay, v_hat=None):
    """Keras Adam at the bias-corrected step size lr_t; with v_hat (AMSGrad) the step divides by
    the running maximum of v."""
    _decay(w, lr, weight_decay)
    m *= beta_1
    m += (1 - beta_1) * g
    v *= beta_2
    v += (1 - beta_2) * np.square(g)
    if v_hat is not None:
        np.maximum(v_hat, v, out=v_hat)
    w -= lr_t * m / (np.sqrt(v if v_hat is None else v_hat) + epsilon)


def amsgrad_update(w, g, m, v, v_hat, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
    adam_update(w, g, m, v, lr, lr_t, beta_1, beta_2, epsilon, weight_decay, v_hat)


def rmsprop_update(w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay):
    _decay(w, lr, weight_decay)
    ms *= rho
    ms += (1 - rho) * np.square(g)
    increment = lr * g / np.sqrt(ms + epsilon)
    if mom is None:
        w -= increment
    else:
        mom *= momentum
        mom += increment
        w -= mom


def adagrad_update(w, g, acc, lr, epsilon, weight_decay):
    _decay(w, lr, weight_decay)
    acc += np.square(g)
    w -= lr * g / np.sqrt(acc + epsilon)


def adadelta_update(w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
    _decay(w, lr, weight_decay)
    acc_grad *= rho
    acc_grad += (1 - rho) * np.square(g)
    delta = -(np.sqrt(acc_delta + epsilon) * g) / np.sqrt(acc_grad + epsilon)
    acc_delta *= rho
    acc_delta += (1 - rho) * np.square(delta)
    w += lr * delta


def adamax_update(w, g, m, u, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
    _decay(w, lr, weight_decay)
    m += (g - m) * (1 - beta_1)
    np.maximum(beta_2 * u, np.abs(g), out=u)
    w -= lr_t * m / (u + epsilon)


def nadam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale, weight_decay):
    _decay(w, lr, weight_decay)
    m += (g - m) * (1 - beta_1)
    v += (np.square(g) - v) * (1 - beta_2)
    w -= lr * (c_m * m + c_g * g) / (np.sqrt(v * v_scale) + epsilon)


def lion_update(w, g, m, lr, beta_1, beta_2, weight_decay):
    _decay(w, lr, weight_decay)
    w -= lr * np.sign(beta_1 * m + (1 - beta_1) * g)
    m *= beta_2
    m += (1 - beta_2) * g


def ftrl_update(w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
    """Keras Ftrl; l2 is l2_regularization_strength + beta / (2 lr)."""
    _decay(w, lr, weight_decay)
    new_acc = acc + np.square(g)
    p_new, p_old = np.power(new_acc, -lr_power), np.power(acc, -lr_power)
    linear += (g + 2 * l2_shrinkage * w) - (p_new - p_old) / lr * w
    quadratic = p_new / lr + 2 * l2
    w[...] = (np.clip(linear, -l1, l1) - linear) / quadratic
    acc[...] = new_acc


def ema_update(average, w, momentum):
    average *= momentum
    average += (1 - momentum) * w


def bop_update(w, g, m, gamma, threshold):
    """larq's Bop, written as larq writes it (lq.math.sign(x) = sign(sign(x) + 0.1): 0 -> +1)."""
    m += gamma * (g - m)
    w[...] = np.sign(np.sign(-np.sign(w * m - threshold) * w) + 0.1)


def clip_by_global_norm(grads, clipnorm):
    norm = math.sqrt(sum(float(np.square(g, dtype=np.float64).sum()) for g in grads))
    factor = clipnorm / max(norm, clipnorm)
    for g in grads:
        g *= factor


class NumpyOptimizerOps:
    """The optimizers section of NumpyBackend: the functions above as its implementation names."""

    def _clip_by_value(self, g, clipvalue):
        clip_by_value(g, clipvalue)

    def _clip_by_norm(self, g, clipnorm):
        clip_by_norm(g, clipnorm)

    def _clip_by_global_norm(self, grads, clipnorm):
        clip_by_global_norm(grads, clipnorm)

    def _sgd_update(self, w, g, velocity, lr, momentum, nesterov, weight_decay):
        sgd_update(w, g, velocity, lr, momentum, nesterov, weight_decay)

    def _adam_update(self, w, g, m, v, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        adam_update(w, g, m, v, lr, lr_t, beta_1, beta_2, epsilon, weight_decay)

    def _amsgrad_update(self, w, g, m, v, v_hat, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        amsgrad_update(w, g, m, v, v_hat, lr, lr_t, beta_1, beta_2, epsilon, weight_decay)

    def _adamax_update(self, w, g, m, u, lr, lr_t, beta_1, beta_2, epsilon, weight_decay):
        adamax_update(w, g, m, u, lr, lr_t, beta_1, beta_2, epsilon, weight_decay)

    def _nadam_update(self, w, g, m, v, lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale, weight_decay):
        nadam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale, weight_decay)

    def _rmsprop_update(self, w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay):
        rmsprop_update(w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay)

    def _adagrad_update(self, w, g, acc, lr, epsilon, weight_decay):
        adagrad_update(w, g, acc, lr, epsilon, weight_decay)

    def _adadelta_update(self, w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
        adadelta_update(w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay)

    def _lion_update(self, w, g, m, lr, beta_1, beta_2, weight_decay):
        lion_update(w, g, m, lr, beta_1, beta_2, weight_decay)

    def _ftrl_update(self, w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
        ftrl_update(w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay)

    def _bop_update(self, w, g, m, gamma, threshold):
        bop_update(w, g, m, gamma, threshold)

    def _ema_update(self, average, w, momentum):
        ema_update(average, w, momentum)
