"""Gradient clipping and the Keras 3 optimizer update rules, applied in place.

Scalar coefficients are computed in Python (float64) and applied to the tensors in their own
dtype. weight_decay is decoupled: w -= lr * weight_decay * w before the step, as Keras 3 does.
"""

import math

import numpy as np

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


def adam_update(w, g, m, v, lr, beta_1, beta_2, epsilon, step, weight_decay):
    op = "adam_update"
    _check_state(op, w, g=g, m=m, v=v)
    if step < 1:
        raise ValueError(f"{op}: step is 1-based, got {step}")
    _decay(w, lr, weight_decay)
    m *= beta_1
    m += (1 - beta_1) * g
    v *= beta_2
    v += (1 - beta_2) * np.square(g)
    alpha = lr * math.sqrt(1 - beta_2 ** step) / (1 - beta_1 ** step)
    w -= alpha * m / (np.sqrt(v) + epsilon)


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
