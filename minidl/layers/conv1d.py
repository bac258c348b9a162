"""The 1-D convolutions (channels_last): Conv1D, Conv1DTranspose, SeparableConv1D, DepthwiseConv1D.

Each runs as its 2-D parent on a (N, 1, L, C) view of its (N, L, C) input (a reshape, no copy),
so the fast 2-D kernels of every backend serve sequences too: Lifted1D does the viewing. The
weights keep Keras's 1-D layouts (Conv1D kernel (k, in, out), Conv1DTranspose (k, out, in),
DepthwiseConv1D (k, in, multiplier), SeparableConv1D pointwise (1, in * multiplier, filters));
the 2-D code reads them through views with a leading axis of 1 (LiftedWeight).
padding="causal" (Conv1D) is a window padded by (kernel - 1) * dilation before the sequence
and nothing after (backends/window.py), so output t sees inputs up to t.
"""

from .. import ops
from ..autodiff import Variable
from .base import Layer, format_shape
from .conv import Conv2D
from .conv_transpose import Conv2DTranspose
from .core import ActivationMixin
from .depthwise import DepthwiseConv2D, SeparableConv2D


def normalize_single(value, what, owner, minimum=1, allow_none=False):
    """An int or a 1-tuple of ints -> the int (Keras's 1-D kernel_size, strides, pool_size)."""
    if value is None and allow_none:
        return None
    item = value[0] if isinstance(value, (tuple, list)) and len(value) == 1 else value
    if not isinstance(item, int) or isinstance(item, bool) or item < minimum:
        raise ValueError(f"{owner}: {what} must be an int >= {minimum} or a tuple of one, "
                         f"got {value!r}")
    return item


def check_channels_last(data_format, owner):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{owner}: data_format must be 'channels_last' (or None), the one layout "
                         f"minidl supports; got {data_format!r}")


class LiftedWeight(Variable):
    """A 1-D weight as the 2-D code reads it: value and grad viewed with a leading axis of 1.
    In minidl.ops (a subclass's call or convolution_op using self.kernel) it is the weight
    itself, with Keras's 1-D shape."""

    def __init__(self, weight, shape):
        self.weight = weight
        self.shape = tuple(shape)   # the 2-D layout (1, ...)

    def _view(self, tensor):
        return None if tensor is None else self.weight.backend.reshape(tensor, self.shape)

    @property
    def value(self):
        return self._view(self.weight.value)

    @property
    def grad(self):
        return self._view(self.weight.grad)

    def as_tensor(self):
        return self.weight.as_tensor()

    def __getattr__(self, name):   # name, trainable, regularizer ... are the weight's
        if name == "weight":   # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.weight, name)


class Lifted1D(Layer):
    """Mixin (first base) that runs a 2-D layer on sequences: shapes (L, C) are its (1, L, C),
    tensors (N, L, C) its (N, 1, L, C) views, and its 4-D weights with a leading 1 are stored
    without it."""

    def _lifted(self, shape):
        return (1,) + tuple(shape)

    def add_weight(self, name=None, shape=None, *args, **kwargs):
        if self._building and isinstance(shape, tuple) and len(shape) == 4 and shape[0] == 1:
            return LiftedWeight(super().add_weight(name, shape[1:], *args, **kwargs), shape)
        return super().add_weight(name, shape, *args, **kwargs)

    def build(self, input_shape):
        self.expect_rank(input_shape, 2, "(steps, channels)")
        super().build(self._lifted(input_shape))

    def compute_output_shape(self, input_shape):
        if len(input_shape) == 3:   # the 2-D code asking for its own (1, L, C)
            return super().compute_output_shape(input_shape)
        return tuple(super().compute_output_shape(self._lifted(input_shape)))[1:]

    # the 2-D code asks for its plans and buffers with 4-D shapes
    def plan(self, call, batch=None, in_shape=None):
        if in_shape is None:
            in_shape = (batch,) + self._lifted(self.input_shape)
        return super().plan(call, batch, in_shape)

    def batch_output_shape(self, call, x):
        shape = self.backend.shape(x)
        call.x_shape = shape
        if not self._unknown_dims:
            return (shape[0],) + self._lifted(self.output_shape)
        return (shape[0],) + self._lifted(self.compute_output_shape(shape[2:]))

    def batch_input_shape(self, call, dout):
        if self._unknown_dims:
            return call.x_shape
        return (self.backend.shape(dout)[0],) + self._lifted(self.input_shape)

    @staticmethod
    def _drop_axis(b, t):
        """(N, 1, L, C) -> (N, L, C) (any rank: the axis after the batch goes)."""
        shape = b.shape(t)
        return b.reshape(t, (shape[0],) + shape[2:])

    def forward(self, call, x, training):
        b = self.backend
        n, *rest = b.shape(x)
        y = super().forward(call, b.reshape(x, (n, 1) + tuple(rest)), training)
        out_shape = (n,) + (tuple(self.compute_output_shape(tuple(rest))) if self._unknown_dims
                            else self.output_shape)
        if isinstance(self, ActivationMixin):
            # the fused-loss path and backward see the pre-activation in the layer's own shape
            call.z_shape = b.shape(call.preactivation)
            call.preactivation = b.reshape(call.preactivation, out_shape)
            call.activated = b.reshape(call.activated, out_shape)
        return b.reshape(y, out_shape)

    def backward(self, call, dout):
        b = self.backend
        if isinstance(self, ActivationMixin):
            return self.backward_preactivation(call, ActivationMixin._deactivate(self, call, dout))
        shape = b.shape(dout)
        dx = super().backward(call, b.reshape(dout, (shape[0], 1) + shape[1:]))
        return None if dx is None else self._drop_axis(b, dx)

    def backward_preactivation(self, call, dz):
        b = self.backend
        dx = super().backward_preactivation(call, b.reshape(dz, call.z_shape))
        return None if dx is None else self._drop_axis(b, dx)


def _conv_options(layer, kernel_size, strides, dilation_rate, data_format):
    owner = layer.describe()
    check_channels_last(data_format, owner)
    return ((1, normalize_single(kernel_size, "kernel_size", owner)),
            (1, normalize_single(strides, "strides", owner)),
            (1, normalize_single(dilation_rate, "dilation_rate", owner)))


def _config_1d(config, *keys):
    """A 2-D config's pairs (1, k) as Keras's 1-D tuples (k,)."""
    for key in keys:
        if key in config and config[key] is not None:
            config[key] = [config[key][1]]
    config["data_format"] = "channels_last"
    return config


class Conv1D(Lifted1D, Conv2D):
    """1-D convolution; kernel (kernel_size, in_channels / groups, filters), bias (filters,).
    padding "valid", "same" (TensorFlow's: the odd step after) or "causal"."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, name=None,
                 trainable=True):
        self.name = name or "conv1d"   # for messages before Layer.__init__ names the layer
        kernel, stride, dilation = _conv_options(self, kernel_size, strides, dilation_rate, data_format)
        causal = isinstance(padding, str) and padding.lower() == "causal"
        super().__init__(filters, kernel, stride, "valid" if causal else padding, dilation, groups,
                         activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint,
                         name, trainable)
        if causal:
            self.padding = "causal"

    # as Keras's Conv1D.call, which convolves with ops.conv itself: an overridden
    # convolution_op serves the subclass's own call only
    _call_uses_convolution_op = False

    def get_config(self):
        return _config_1d(super().get_config(), "kernel_size", "strides", "dilation_rate")

    def convolution_op(self, inputs, kernel):
        """Keras's convolution_op: ops.conv with the layer's strides, padding and dilation."""
        if isinstance(kernel, LiftedWeight):   # self.kernel, as the 2-D code reads it
            kernel = kernel.weight
        return ops.conv(inputs, kernel, strides=list(self.strides[1:]), padding=self.padding,
                        dilation_rate=self.dilation_rate[1:], data_format="channels_last")


class Conv1DTranspose(Lifted1D, Conv2DTranspose):
    """Transposed 1-D convolution; kernel (kernel_size, filters, in_channels), bias (filters,);
    Keras's output length (Conv2DTranspose's rules along the steps)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, name=None, trainable=True):
        self.name = name or "conv1d_transpose"
        kernel, stride, dilation = _conv_options(self, kernel_size, strides, dilation_rate, data_format)
        pad = None if output_padding is None else (
            0, normalize_single(output_padding, "output_padding", self.name, minimum=0))
        super().__init__(filters, kernel, stride, padding, pad, dilation, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, name, trainable)

    def get_config(self):
        return _config_1d(super().get_config(), "kernel_size", "strides", "dilation_rate",
                          "output_padding")


class DepthwiseConv1D(Lifted1D, DepthwiseConv2D):
    """Depthwise 1-D convolution; kernel (kernel_size, in_channels, depth_multiplier), bias
    (in_channels * depth_multiplier,). dilation_rate must be 1 (as DepthwiseConv2D in minidl)."""

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, name=None,
                 trainable=True):
        self.name = name or "depthwise_conv1d"
        kernel, stride, dilation = _conv_options(self, kernel_size, strides, dilation_rate, data_format)
        super().__init__(kernel, stride, padding, depth_multiplier, None, dilation, activation, use_bias,
                         depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, name, trainable)

    def get_config(self):
        return _config_1d(super().get_config(), "kernel_size", "strides", "dilation_rate")


class SeparableConv1D(Lifted1D, SeparableConv2D):
    """Depthwise 1-D convolution (depthwise_kernel (k, in, multiplier), no bias), then a pointwise
    one (pointwise_kernel (1, in * multiplier, filters)) and bias (filters,)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                 bias_constraint=None, name=None, trainable=True):
        self.name = name or "separable_conv1d"
        kernel, stride, dilation = _conv_options(self, kernel_size, strides, dilation_rate, data_format)
        super().__init__(filters, kernel, stride, padding, None, dilation, depth_multiplier, activation,
                         use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, pointwise_constraint,
                         bias_constraint, name, trainable)

    def get_config(self):
        return _config_1d(super().get_config(), "kernel_size", "strides", "dilation_rate")


Convolution1D = Conv1D

__all__ = ["Conv1D", "Conv1DTranspose", "DepthwiseConv1D", "SeparableConv1D", "Convolution1D",
           "Lifted1D", "normalize_single"]
