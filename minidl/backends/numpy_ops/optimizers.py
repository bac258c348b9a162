"""Gradient clipping and the Keras 3 optimizer update rules, applied in place.

Scalar coefficients are computed in Python (float64) and applied to the tensors in their own
dtype. weight_decay is decoupled: w -= lr * weight_decay * w before the step, as Keras 3 does.
"""

import math

import numpy as np

from ..base import nadam_coefficients
from ..checks import check_shape


def _check_state(op, w, **tensors):
    for name, tensor in tensors.items():
        if tensor is not None:
            check_shape(op, name, tensor, w.shape)


def _decay(w, lr, weight_decay):
    if weight_decay:
        w -= (lr * weight_decay) * w


def clip_by_value(g, clipvalue):
    np.clip(g, -clipvalue, clipvalue, out=g)


def clip_by_norm(g, clipnorm):
    norm = math.sqrt(float(np.square(g, dtype=np.float64).sum()))
    g *= clipnorm / max(norm, clipnorm)


def sgd_update(w, g, velocity, lr, momentum, nesterov, weight_decay):
    op = "sgd_update"
    _check_state(op, w, g=g, velocity=velocity)
    if velocity is None and momentum:
        raise ValueError(f"{op}: momentum={momentum} needs a velocity tensor of shape "
                         f"{tuple(w.shape)}, got None")
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


def adam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, step, weight_decay, v_hat=None):
    """Keras Adam; with v_hat (AMSGrad) the step divides by the running maximum of v."""
    op = "adam_update" if v_hat is None else "amsgrad_update"
    _check_state(op, w, g=g, m=m, v=v, v_hat=v_hat)
    if step < 1:
        raise ValueError(f"{op}: step is 1-based, got {step}")
    _decay(w, lr, weight_decay)
    m *= beta_1
    m += (1 - beta_1) * g
    v *= beta_2
    v += (1 - beta_2) * np.square(g)
    if v_hat is not None:
        np.maximum(v_hat, v, out=v_hat)
    alpha = lr * math.sqrt(1 - beta_2 ** step) / (1 - beta_1 ** step)
    w -= alpha * m / (np.sqrt(v if v_hat is None else v_hat) + epsilon)


def amsgrad_update(w, g, m, v, v_hat, lr, beta_1, beta_2, epsilon, step, weight_decay):
    adam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, step, weight_decay, v_hat)


def rmsprop_update(w, g, ms, mom, lr, rho, momentum, epsilon, weight_decay):
    op = "rmsprop_update"
    _check_state(op, w, g=g, ms=ms, mom=mom)
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
    op = "adagrad_update"
    _check_state(op, w, g=g, acc=acc)
    _decay(w, lr, weight_decay)
    acc += np.square(g)
    w -= lr * g / np.sqrt(acc + epsilon)


def adadelta_update(w, g, acc_grad, acc_delta, lr, rho, epsilon, weight_decay):
    _check_state("adadelta_update", w, g=g, acc_grad=acc_grad, acc_delta=acc_delta)
    _decay(w, lr, weight_decay)
    acc_grad *= rho
    acc_grad += (1 - rho) * np.square(g)
    delta = -(np.sqrt(acc_delta + epsilon) * g) / np.sqrt(acc_grad + epsilon)
    acc_delta *= rho
    acc_delta += (1 - rho) * np.square(delta)
    w += lr * delta


def adamax_update(w, g, m, u, lr, beta_1, beta_2, epsilon, step, weight_decay):
    op = "adamax_update"
    _check_state(op, w, g=g, m=m, u=u)
    if step < 1:
        raise ValueError(f"{op}: step is 1-based, got {step}")
    _decay(w, lr, weight_decay)
    m += (g - m) * (1 - beta_1)
    np.maximum(beta_2 * u, np.abs(g), out=u)
    w -= (lr / (1 - beta_1 ** step)) * m / (u + epsilon)


def nadam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, step, u_product, weight_decay):
    op = "nadam_update"
    _check_state(op, w, g=g, m=m, v=v)
    if step < 1:
        raise ValueError(f"{op}: step is 1-based, got {step}")
    c_m, c_g, v_scale = nadam_coefficients(beta_1, beta_2, step, u_product)
    _decay(w, lr, weight_decay)
    m += (g - m) * (1 - beta_1)
    v += (np.square(g) - v) * (1 - beta_2)
    w -= lr * (c_m * m + c_g * g) / (np.sqrt(v * v_scale) + epsilon)


def lion_update(w, g, m, lr, beta_1, beta_2, weight_decay):
    _check_state("lion_update", w, g=g, m=m)
    _decay(w, lr, weight_decay)
    w -= lr * np.sign(beta_1 * m + (1 - beta_1) * g)
    m *= beta_2
    m += (1 - beta_2) * g


def ftrl_update(w, g, acc, linear, lr, lr_power, l1, l2, l2_shrinkage, weight_decay):
    """Keras Ftrl; l2 is l2_regularization_strength + beta / (2 lr)."""
    _check_state("ftrl_update", w, g=g, acc=acc, linear=linear)
    _decay(w, lr, weight_decay)
    new_acc = acc + np.square(g)
    p_new, p_old = np.power(new_acc, -lr_power), np.power(acc, -lr_power)
    linear += (g + 2 * l2_shrinkage * w) - (p_new - p_old) / lr * w
    quadratic = p_new / lr + 2 * l2
    w[...] = (np.clip(linear, -l1, l1) - linear) / quadratic
    acc[...] = new_acc


def ema_update(average, w, momentum):
    check_shape("ema_update", "w", w, average.shape)
    average *= momentum
    average += (1 - momentum) * w


def clip_by_global_norm(grads, clipnorm):
    norm = math.sqrt(sum(float(np.square(g, dtype=np.float64).sum()) for g in grads))
    factor = clipnorm / max(norm, clipnorm)
    for g in grads:
        g *= factor
