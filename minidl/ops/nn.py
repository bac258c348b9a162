"""Neural-network ops: activations composed from elementwise ops, one_hot, and conv / pooling
on the backend's own conv and pooling kernels (the ones Conv2D and MaxPooling2D run)."""

import math

from ..arguments import int_tuple
from .core import (as_tensor, cast, clip, empty_like_shape, equal, erf, exp, greater, log, log1p, maximum,
                   record, relu, sigmoid, stop_gradient, tanh, where, abs as absolute)
from .creation import arange
from .reductions import max, sum
from .shapes import expand_dims, squeeze


def softmax(x, axis=-1):
    t = as_tensor(x)
    e = exp(t - stop_gradient(max(t, axis, keepdims=True)))
    return e / sum(e, axis, keepdims=True)


def log_softmax(x, axis=-1):
    t = as_tensor(x)
    shifted = t - stop_gradient(max(t, axis, keepdims=True))
    return shifted - log(sum(exp(shifted), axis, keepdims=True))


def gelu(x, approximate=True):
    """GELU: the tanh approximation (Keras's default) or, approximate=False, x * Phi(x)."""
    t = as_tensor(x)
    if not approximate:
        return 0.5 * t * (1.0 + erf(t / math.sqrt(2.0)))
    return 0.5 * t * (1.0 + tanh(math.sqrt(2.0 / math.pi) * (t + 0.044715 * t * t * t)))


def leaky_relu(x, negative_slope=0.2):
    t = as_tensor(x)
    return where(greater(t, 0.0), t, t * float(negative_slope))


def silu(x):
    t = as_tensor(x)
    return t * sigmoid(t)


def softplus(x):
    t = as_tensor(x)
    return log1p(exp(-absolute(t))) + maximum(t, 0.0)


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """1.0 at each integer label's position along a new last axis of size num_classes."""
    if axis != -1:
        raise ValueError("ops.one_hot: only axis=-1 is supported")
    if sparse:
        raise ValueError("ops.one_hot: sparse=True is not supported (minidl has no sparse tensors)")
    labels = cast(as_tensor(x), "float32")
    return equal(expand_dims(labels, -1), arange(num_classes, dtype="float32",
                                                 backend=labels.backend))


# --------------------------------------------------------------- cross-entropies
EPSILON = 1e-7   # Keras's clip of probabilities


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """-sum(target * log(output)) over axis; output probabilities are renormalized and
    clipped to [1e-7, 1 - 1e-7] as Keras does, or logits when from_logits."""
    t = as_tensor(target)
    if from_logits:
        return -sum(t * log_softmax(output, axis=axis), axis=axis)
    p = as_tensor(output) / sum(output, axis=axis, keepdims=True)
    return -sum(t * log(clip(p, EPSILON, 1.0 - EPSILON)), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """categorical_crossentropy of integer labels (target without the class axis)."""
    labels = cast(target, "int32")
    if len(as_tensor(labels).shape) == len(as_tensor(output).shape):
        labels = squeeze(labels, -1)
    return categorical_crossentropy(one_hot(labels, as_tensor(output).shape[-1]), output,
                                    from_logits, axis)


def binary_crossentropy(target, output, from_logits=False):
    """The elementwise logistic loss (Keras's ops.binary_crossentropy; the loss function takes
    its mean over the last axis)."""
    t = as_tensor(target)
    if from_logits:
        # the stable form max(z, 0) - z t + log(1 + exp(-|z|))
        z = as_tensor(output)
        return maximum(z, 0.0) - z * t + log1p(exp(-absolute(z)))
    p = clip(output, EPSILON, 1.0 - EPSILON)
    return -(t * log(p) + (1.0 - t) * log(1.0 - p))


# --------------------------------------------------------------- conv and pooling
def _pair(value, what, op):
    return int_tuple((value, value) if isinstance(value, int) else value, what, f"ops.{op}")


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Convolution, channels_last, of the inputs' rank as Keras's: 2-D inputs (N, H, W, C) with
    kernel (KH, KW, C / groups, F); 1-D (N, L, C) with (K, C / groups, F) and 3-D
    (N, D, H, W, C) with (KD, KH, KW, C / groups, F) are made of 2-D ones (conv_ranks.py). As
    in Keras, a kernel with fewer input channels than inputs makes a grouped convolution."""
    x, w = cast(as_tensor(inputs), "float32"), cast(as_tensor(kernel), "float32")
    if data_format not in (None, "channels_last"):
        raise ValueError(f"ops.conv: only data_format='channels_last' is supported, got {data_format!r}")
    padding = padding.lower() if isinstance(padding, str) else padding
    if padding not in ("valid", "same"):
        raise ValueError(f"ops.conv: padding must be 'valid' or 'same', got {padding!r}")
    if len(x.shape) in (3, 5) and len(w.shape) == len(x.shape):
        from . import conv_ranks
        lower = conv_ranks.conv1d if len(x.shape) == 3 else conv_ranks.conv3d
        return lower(conv, x, w, strides, padding, dilation_rate)
    if (len(x.shape) != 4 or len(w.shape) != 4 or w.shape[2] < 1 or x.shape[3] % w.shape[2]
            or w.shape[3] % (x.shape[3] // w.shape[2])):
        raise ValueError(f"ops.conv: inputs (N, H, W, C) and kernel (KH, KW, C / groups, F) with C "
                         f"and F divisible by groups needed, got {x.shape} and {w.shape}")
    b = x.backend
    plan = b.conv2d_plan(x.shape, w.shape, _pair(strides, "strides", "conv"), padding,
                         _pair(dilation_rate, "dilation_rate", "conv"), x.shape[3] // w.shape[2])
    out = empty_like_shape(b, plan.out_shape)
    b.conv2d_forward(out.value, x.value, w.value, None, plan)
    return _record_conv(out, x, w, plan, transposed=False)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    """2-D transposed convolution: inputs (N, H, W, C), kernel (KH, KW, F, C) -> (N, OH, OW, F),
    the output size and alignment of Keras's ops.conv_transpose; channels_last."""
    x, w = cast(as_tensor(inputs), "float32"), cast(as_tensor(kernel), "float32")
    if len(x.shape) != 4 or len(w.shape) != 4 or x.shape[3] != w.shape[3]:
        raise ValueError(f"ops.conv_transpose: inputs (N, H, W, C) and kernel (KH, KW, F, C) needed, "
                         f"got {x.shape} and {w.shape}")
    if data_format not in (None, "channels_last"):
        raise ValueError(f"ops.conv_transpose: only data_format='channels_last' is supported, got "
                         f"{data_format!r}")
    b = x.backend
    extra = None if output_padding is None else _non_negative_pair(output_padding)
    plan = b.conv2d_transpose_plan(x.shape, w.shape, _pair(strides, "strides", "conv_transpose"), padding,
                                   extra, _pair(dilation_rate, "dilation_rate", "conv_transpose"))
    out = empty_like_shape(b, plan.in_shape)
    b.conv2d_backward_data(out.value, x.value, w.value, plan)
    return _record_conv(out, x, w, plan, transposed=True)


def _non_negative_pair(value):
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in pair):
        raise ValueError(f"ops.conv_transpose: output_padding must be an int >= 0 or a pair of them, "
                         f"got {value!r}")
    return pair


def _record_conv(out, x, w, plan, transposed):
    """Record the gradient rule of conv (or conv_transpose, its adjoint) of x with kernel w."""
    b = x.backend

    def rule(g):
        dx, dw = empty_like_shape(b, x.shape), empty_like_shape(b, w.shape)
        if transposed:
            b.conv2d_forward(dx.value, g.value, w.value, None, plan)
            b.conv2d_backward_filter(dw.value, None, x.value, g.value, plan)
        else:
            b.conv2d_backward_data(dx.value, g.value, w.value, plan)
            b.conv2d_backward_filter(dw.value, None, g.value, x.value, plan)
        return (dx, dw)
    return record(out, (x, w), rule)


def _pool_plan(op, x, pool_size, strides, padding):
    if len(x.shape) != 4:
        raise ValueError(f"ops.{op}: inputs must be (N, H, W, C), got {x.shape}")
    pool = _pair(pool_size, "pool_size", op)
    return x.backend.pool2d_plan(x.shape, pool,
                                 pool if strides is None else _pair(strides, "strides", op), padding)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    x = cast(as_tensor(inputs), "float32")
    b = x.backend
    plan = _pool_plan("max_pool", x, pool_size, strides, padding)
    out = empty_like_shape(b, plan.out_shape)
    winners = b.empty(plan.out_shape, "int32")
    b.max_pool2d_forward(out.value, winners, x.value, plan)

    def rule(g):
        dx = empty_like_shape(b, x.shape)
        b.max_pool2d_backward(dx.value, g.value, winners, plan)
        return (dx,)
    return record(out, (x,), rule)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    x = cast(as_tensor(inputs), "float32")
    b = x.backend
    plan = _pool_plan("average_pool", x, pool_size, strides, padding)
    out = empty_like_shape(b, plan.out_shape)
    b.avg_pool2d_forward(out.value, x.value, plan)

    def rule(g):
        dx = empty_like_shape(b, x.shape)
        b.avg_pool2d_backward(dx.value, g.value, plan)
        return (dx,)
    return record(out, (x,), rule)


__all__ = ["average_pool", "binary_crossentropy", "categorical_crossentropy", "conv", "gelu", "leaky_relu", "log_softmax", "max_pool", "one_hot",
           "relu", "sigmoid", "silu", "softmax", "softplus", "sparse_categorical_crossentropy", "tanh"]


def __getattr__(name):
    """keras.ops.nn's names defined in other modules of minidl.ops (which import this one)."""
    from .namespaces import resolve
    return resolve(__name__, name)


def __dir__():
    from .namespaces import names
    return names(__name__, globals())
