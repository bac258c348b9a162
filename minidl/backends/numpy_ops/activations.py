"""The activations of minidl/activations.py in plain numpy: the reference the C and OpenCL
kernels are tested against. Each derivative is written in the forward input x, the output
y = f(x), or both; the backends take whichever is cheaper and exact."""

import math

import numpy as np

from .losses import softmax, stable_sigmoid

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
GELU_C = math.sqrt(2.0 / math.pi)        # the tanh form's sqrt(2 / pi)
_erf = np.frompyfunc(math.erf, 1, 1)     # numpy has no erf; math.erf is exact to the ulp


def erf(x):
    return _erf(x).astype(x.dtype)


def softplus(x):
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow, exact for large |x|."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _gelu_tanh_sigmoids(x):
    """(s, 1 - s) with s = sigmoid(2u) = (1 + tanh(u)) / 2, u = sqrt(2/pi) (x + 0.044715 x^3):
    the tanh form without the cancellation of 1 + tanh and 1 - tanh^2 near saturation."""
    two_u = 2 * GELU_C * (x + 0.044715 * x ** 3)
    return stable_sigmoid(two_u), stable_sigmoid(-two_u)


def forward(name, x, alpha):
    if name == "linear":
        return x
    if name == "relu":
        return np.maximum(x, 0)
    if name == "leaky_relu":
        return np.where(x > 0, x, alpha * x)
    if name == "sigmoid":
        return stable_sigmoid(x)
    if name == "tanh":
        return np.tanh(x)
    if name == "softmax":
        return softmax(x)
    if name == "gelu":
        return 0.5 * x * (1 + erf(x / math.sqrt(2.0)))
    if name == "gelu_approximate":
        return x * _gelu_tanh_sigmoids(x)[0]
    if name == "silu":
        return x * stable_sigmoid(x)
    if name == "elu":
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))
    if name == "selu":
        return SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))
    if name == "softplus":
        return softplus(x)
    if name == "softsign":
        return x / (1 + np.abs(x))
    if name == "hard_sigmoid":
        return np.clip(x / 6 + 0.5, 0, 1)
    if name == "hard_silu":
        return x * np.clip(x / 6 + 0.5, 0, 1)
    if name == "mish":
        return x * np.tanh(softplus(x))
    if name == "exponential":
        return np.exp(x)
    if name == "relu6":
        return np.clip(x, 0, 6)
    raise ValueError(f"activation_forward: unknown activation {name!r}")


def derivative(name, x, y, alpha):
    """f'(x) elementwise (softmax excepted: see backward)."""
    if name == "linear":
        return np.ones_like(y)
    if name == "relu":
        return (y > 0).astype(y.dtype)
    if name == "leaky_relu":
        # y > 0 exactly where x > 0 for a non-negative slope
        return np.where(y > 0, 1, alpha).astype(y.dtype)
    if name == "sigmoid":
        return y * (1 - y)
    if name == "tanh":
        return 1 - y * y
    if name == "gelu":
        cdf = 0.5 * (1 + erf(x / math.sqrt(2.0)))
        return cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    if name == "gelu_approximate":
        s, sn = _gelu_tanh_sigmoids(x)
        return s + 2 * x * s * sn * GELU_C * (1 + 3 * 0.044715 * x * x)
    if name == "silu":
        s = stable_sigmoid(x)
        return s * (1 + x * (1 - s))
    if name == "elu":
        return np.where(x > 0, 1, y + alpha)
    if name == "selu":
        return np.where(y > 0, SELU_SCALE, y + SELU_SCALE * SELU_ALPHA)
    if name == "softplus":
        return stable_sigmoid(x)
    if name == "softsign":
        return (1 - np.abs(y)) ** 2
    if name == "hard_sigmoid":
        return np.where((y > 0) & (y < 1), 1 / 6, 0).astype(y.dtype)
    if name == "hard_silu":
        return np.where(x < -3, 0, np.where(x > 3, 1, (2 * x + 3) / 6)).astype(y.dtype)
    if name == "mish":
        t = np.tanh(softplus(x))
        return t + x * (1 - t * t) * stable_sigmoid(x)
    if name == "exponential":
        return y
    if name == "relu6":
        return ((y > 0) & (y < 6)).astype(y.dtype)
    raise ValueError(f"activation_backward: unknown activation {name!r}")


def backward(name, dout, y, x, alpha):
    if name == "linear":
        return dout
    if name == "softmax":
        return y * (dout - (dout * y).sum(axis=-1, keepdims=True))
    if name in ("relu", "leaky_relu"):
        # a select, not a product: 0 * inf must not turn a masked gradient into NaN
        return np.where(y > 0, dout, 0 if name == "relu" else alpha * dout)
    return dout * derivative(name, x, y, alpha)


class NumpyActivationOps:
    """Mixin of NumpyBackend: the activations section (contract/activations.py checked the
    name and the shapes)."""

    def _activation_forward(self, out, x, name, code, alpha):
        out[...] = forward(name, x, alpha)

    def _activation_backward(self, dx, dout, y, x, name, code, alpha):
        dx[...] = backward(name, dout, y, x, alpha)
