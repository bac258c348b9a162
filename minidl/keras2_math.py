"""Keras 2's tensor functions of `keras.backend` (`K.sqrt`, `K.sum`, `K.maximum`, ...).

Keras 3 moved them to `keras.ops`, but classic scripts (mnist_siamese's euclidean distance and
contrastive loss, many custom metrics) still write `from keras import backend as K` and call
them. Each one here is the minidl.ops function under Keras 2's name and signature, so it runs
on the active backend and records itself for automatic differentiation like any op; only the
spellings that differ from keras.ops (argument names, defaults) are adapted.
"""

from . import ops

_SAME = ("abs", "sqrt", "square", "exp", "log", "sign", "round", "sin", "cos", "tanh", "sigmoid",
         "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "less",
         "less_equal", "dot", "reshape", "ones_like", "zeros_like", "stop_gradient", "cast",
         "expand_dims", "squeeze", "shape", "stack")
for _name in _SAME:
    globals()[_name] = getattr(ops, _name)


def _reduction(op):
    def reduce(x, axis=None, keepdims=False):
        return op(x, axis=axis, keepdims=keepdims)
    reduce.__name__ = op.__name__
    reduce.__doc__ = f"Keras 2's K.{op.__name__}(x, axis=None, keepdims=False)."
    return reduce


sum = _reduction(ops.sum)          # noqa: A001  (Keras 2's name)
mean = _reduction(ops.mean)
max = _reduction(ops.max)          # noqa: A001
min = _reduction(ops.min)          # noqa: A001
prod = _reduction(ops.prod)
std = _reduction(ops.std)
var = _reduction(ops.var)


def argmax(x, axis=-1):
    """Keras 2's default axis is the last one (keras.ops flattens by default)."""
    return ops.argmax(x, axis=axis)


def argmin(x, axis=-1):
    return ops.argmin(x, axis=axis)


def pow(x, a):                     # noqa: A001
    return ops.power(x, a)


def clip(x, min_value, max_value):
    return ops.clip(x, min_value, max_value)


def concatenate(tensors, axis=-1):
    """Keras 2 joins on the last axis by default (keras.ops on the first)."""
    return ops.concatenate(tensors, axis=axis)


def transpose(x):
    return ops.transpose(x)


def softmax(x, axis=-1):
    return ops.softmax(x, axis=axis)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """x where x >= threshold, else alpha * (x - threshold); then at most max_value."""
    if alpha == 0.0 and threshold == 0.0:
        y = ops.relu(x)
    else:
        y = ops.where(ops.greater_equal(x, threshold), x, alpha * (x - threshold))
    return y if max_value is None else ops.minimum(y, max_value)


def int_shape(x):
    """The shape as a tuple of ints (None for an unknown dimension of a symbolic tensor)."""
    return tuple(ops.shape(x))


def flatten(x):
    return ops.reshape(x, (-1,))


def batch_flatten(x):
    """(batch, ...) -> (batch, everything else)."""
    return ops.reshape(x, (ops.shape(x)[0], -1))


__all__ = list(_SAME) + ["sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin",
                         "pow", "clip", "concatenate", "transpose", "softmax", "relu",
                         "int_shape", "flatten", "batch_flatten"]
