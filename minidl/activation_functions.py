"""Keras 3's activation functions (keras.activations.relu, gelu, softmax, ...) on minidl
tensors, weights, numpy arrays and numbers; each returns a minidl Tensor.

The activations the backends have a kernel for (activations.ACTIVATIONS) run as one
activation_forward call and record activation_backward as their gradient: one pass over
the data each way on every backend, as a layer's activation= runs. The others are composed
from minidl.ops (elementwise backend ops with automatic gradients). Formulas, arguments and
defaults are Keras 3.15.1's (keras/src/activations/activations.py).
"""

import numbers
import sys

from . import ops
from .ops.core import as_tensor, cast, empty_like_shape, record
from .ops.symbolic_dispatch import install


def _float_tensor(x):
    return cast(as_tensor(x), "float32")


def _kernel(x, name, alpha=0.0):
    """f(x) by the backend's activation kernel `name` (one of activations.ACTIVATIONS), with
    its gradient by activation_backward. The input is kept for the activations whose
    derivative needs it (activations.NEEDS_INPUT)."""
    t = _float_tensor(x)
    b = t.backend
    out = empty_like_shape(b, t.shape)
    b.activation_forward(out.value, t.value, name, alpha)

    def rule(g):
        dx = empty_like_shape(b, t.shape)
        b.activation_backward(dx.value, cast(g, "float32").value, out.value, name, alpha, t.value)
        return (dx,)
    return record(out, (t,), rule)


def _real(value, argument, function):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"activations.{function}: {argument} must be a number, got {value!r}")
    return float(value)


def _axis(x, axis, function):
    rank = len(x.shape)
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < max(rank, 1):
        raise ValueError(f"activations.{function}: axis must be an int in [-{rank}, {rank}) for an "
                         f"input of shape {x.shape}, got {axis!r}")
    return axis % max(rank, 1)


# ---------------------------------------------------------------- the ReLU family
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), or with Keras's options: x below `threshold` becomes
    negative_slope * (x - threshold), the result is capped at max_value."""
    negative_slope = _real(negative_slope, "negative_slope", "relu")
    threshold = _real(threshold, "threshold", "relu")
    if max_value is not None:
        max_value = _real(max_value, "max_value", "relu")
    if negative_slope < 0:
        raise ValueError(f"activations.relu: negative_slope must be >= 0, got {negative_slope}")
    t = _float_tensor(x)
    if threshold == 0.0 and max_value is None:
        return _kernel(t, "leaky_relu", negative_slope) if negative_slope else _kernel(t, "relu")
    if threshold == 0.0 and max_value == 6.0 and not negative_slope:
        return _kernel(t, "relu6")
    # Keras: y = x where x > threshold else 0, clipped to [0, max_value], minus
    # negative_slope * relu(threshold - x)
    y = ops.where(ops.greater(t, threshold), t, 0.0) if threshold else _kernel(t, "relu")
    if max_value is not None:
        y = ops.clip(y, 0.0, max_value)
    if negative_slope:
        y = y - negative_slope * _kernel(threshold - t, "relu")
    return y


def leaky_relu(x, negative_slope=0.2):
    return _kernel(x, "leaky_relu", _real(negative_slope, "negative_slope", "leaky_relu"))


def relu6(x):
    return _kernel(x, "relu6")


def elu(x, alpha=1.0):
    return _kernel(x, "elu", _real(alpha, "alpha", "elu"))


def selu(x):
    return _kernel(x, "selu")


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    alpha = _real(alpha, "alpha", "celu")
    if alpha == 0:
        raise ValueError("activations.celu: alpha must not be 0")
    # alpha * elu(x / alpha): the elu kernel's one pass each way (plus the two scalings)
    if alpha == 1.0:
        return _kernel(x, "elu", 1.0)
    return alpha * _kernel(_float_tensor(x) * (1.0 / alpha), "elu", 1.0)


def threshold(x, threshold, default_value):
    """x where x > threshold, else default_value."""
    t = _float_tensor(x)
    return ops.where(ops.greater(t, _real(threshold, "threshold", "threshold")), t,
                     _real(default_value, "default_value", "threshold"))


# ---------------------------------------------------------------- smooth
def gelu(x, approximate=False):
    """x * Phi(x) (the erf form, Keras's default) or, approximate=True, the tanh form."""
    if not isinstance(approximate, bool):
        raise TypeError(f"activations.gelu: approximate must be a bool, got {approximate!r}")
    return _kernel(x, "gelu_approximate" if approximate else "gelu")


def silu(x):
    return _kernel(x, "silu")


swish = silu


def mish(x):
    return _kernel(x, "mish")


def softplus(x):
    return _kernel(x, "softplus")


def softsign(x):
    return _kernel(x, "softsign")


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2."""
    b = _real(b, "b", "squareplus")
    if b < 0:
        raise ValueError(f"activations.squareplus: b must be >= 0, got {b}")
    t = _float_tensor(x)
    return (t + ops.sqrt(t * t + b)) * 0.5


def exponential(x):
    return _kernel(x, "exponential")


def linear(x):
    """x unchanged (a Tensor)."""
    return as_tensor(x)


# ---------------------------------------------------------------- sigmoid and tanh
def sigmoid(x):
    return _kernel(x, "sigmoid")


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return _kernel(x, "hard_sigmoid")


def sparse_sigmoid(x):
    """0 for x <= -1, 1 for x >= 1, (x + 1) / 2 between."""
    t = _float_tensor(x)
    # Keras's branches: at -1 and 1 the derivative is that of the flat parts
    return ops.where(ops.greater_equal(t, 1.0), 1.0, ops.where(ops.less_equal(t, -1.0), 0.0, 0.5 * (t + 1.0)))


def log_sigmoid(x):
    """-softplus(-x), computed without overflow."""
    return -_kernel(-_float_tensor(x), "softplus")


def hard_silu(x):
    """x * hard_sigmoid(x), with Keras's derivative at -3 and 3 (that of x * the flat parts;
    the fused hard_silu kernel's derivative there is (2x + 3) / 6)."""
    t = _float_tensor(x)
    return t * _kernel(t, "hard_sigmoid")


hard_swish = hard_silu


def tanh(x):
    return _kernel(x, "tanh")


def hard_tanh(x):
    t = _float_tensor(x)
    # no gradient at -1 and 1, as Keras's (torch's hardtanh)
    return ops.where(ops.less(ops.abs(t), 1.0), t, ops.stop_gradient(ops.clip(t, -1.0, 1.0)))


def tanh_shrink(x):
    t = _float_tensor(x)
    return t - _kernel(t, "tanh")


# ---------------------------------------------------------------- shrinkage
def _threshold_argument(value, function):
    value = _real(value, "threshold", function)
    if value < 0:
        raise ValueError(f"activations.{function}: threshold must be >= 0, got {value}")
    return value


def hard_shrink(x, threshold=0.5):
    """x where |x| > threshold, else 0."""
    threshold = _threshold_argument(threshold, "hard_shrink")
    t = _float_tensor(x)
    return ops.where(ops.greater(ops.abs(t), threshold), t, 0.0)


def soft_shrink(x, threshold=0.5):
    """x - threshold above threshold, x + threshold below -threshold, else 0."""
    threshold = _threshold_argument(threshold, "soft_shrink")
    t = _float_tensor(x)
    return t - ops.clip(t, -threshold, threshold)


def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between."""
    t = _float_tensor(x)
    inner = ops.clip(t, -1.0, 1.0) + 1.0
    return ops.where(ops.greater_equal(t, 1.0), t, 0.25 * inner * inner)


# ---------------------------------------------------------------- along an axis
def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along axis (the last axis by the fused kernel)."""
    t = _float_tensor(x)
    axis = _axis(t, axis, "softmax")
    if axis == len(t.shape) - 1:
        return _kernel(t, "softmax")
    return ops.softmax(t, axis=axis)


def log_softmax(x, axis=-1):
    t = _float_tensor(x)
    return ops.log_softmax(t, axis=_axis(t, axis, "log_softmax"))


def glu(x, axis=-1):
    """a * sigmoid(b), a and b the two halves of x along axis."""
    t = _float_tensor(x)
    axis = _axis(t, axis, "glu")
    if t.shape[axis] % 2:
        raise ValueError(f"activations.glu: axis size must be divisible by 2. Received: "
                         f"x.shape={t.shape} with axis={axis}")
    first, second = ops.split(t, 2, axis=axis)
    return first * _kernel(second, "sigmoid")


def sparsemax(x, axis=-1):
    """The Euclidean projection of x onto the probability simplex along axis (Martins and
    Astudillo, 2016): max(x - tau, 0), tau = (sum of the k largest - 1) / k over the support
    of size k, so that each result sums to 1. (Keras 3.15.1 sums the running sums instead of
    the values in tau; its outputs then do not sum to 1: minidl follows the paper.)"""
    t = _float_tensor(x)
    axis = _axis(t, axis, "sparsemax")
    size = t.shape[axis]
    ranks_shape = [1] * len(t.shape)
    ranks_shape[axis] = size
    ranks = ops.reshape(ops.arange(1, size + 1, dtype="float32", backend=t.backend), ranks_shape)
    ordered = -ops.sort(-t, axis=axis)       # descending; the gradient flows back through the sort
    cumulative = ops.cumsum(ops.stop_gradient(ordered), axis=axis)
    support = ops.cast(ops.greater(ops.stop_gradient(ordered) - (cumulative - 1.0) / ranks, 0.0), "float32")
    k = ops.sum(support, axis=axis, keepdims=True)
    tau = (ops.sum(ordered * support, axis=axis, keepdims=True) - 1.0) / k
    return ops.maximum(t - tau, 0.0)


FUNCTIONS = {fn.__name__: fn for fn in (
    relu, leaky_relu, relu6, softmax, celu, elu, selu, softplus, softsign, squareplus, soft_shrink,
    sparse_plus, silu, gelu, glu, tanh, tanh_shrink, threshold, sigmoid, sparse_sigmoid, exponential,
    hard_sigmoid, hard_silu, hard_tanh, hard_shrink, linear, mish, log_softmax, log_sigmoid, sparsemax)}
# On a functional model's symbolic tensors each records an op node, as Keras's do
# (`keras.activations.sigmoid(logits) * 5`): the module's functions become their
# symbolic-aware wrappers (ops/symbolic_dispatch.py), here and in FUNCTIONS alike.
install(sys.modules[__name__], list(FUNCTIONS))
FUNCTIONS = {name: globals()[name] for name in FUNCTIONS}
swish, hard_swish = silu, hard_silu
# Keras's aliases: looked up by these names too, serialized by the canonical one
FUNCTIONS["swish"] = silu
FUNCTIONS["hard_swish"] = hard_silu
