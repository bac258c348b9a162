"""DepthwiseConv2D and SeparableConv2D (channels_last), with Keras 3's arguments and weights.

DepthwiseConv2D: kernel (kh, kw, in, depth_multiplier), bias (in * depth_multiplier,); output
channel c * depth_multiplier + m is input channel c convolved with kernel[:, :, c, m].
SeparableConv2D: that depthwise step without a bias (depthwise_kernel), then a 1x1 convolution
(pointwise_kernel (1, 1, in * depth_multiplier, filters), one gemm) and bias (filters,).
"""

from .. import activations, constraints, regularizers
from .base import Layer
from .conv import (WindowPlanMixin, check_window_fits, normalize_pair, normalize_padding,
                   window_output_shape)
from .core import ActivationMixin


def _check_channels_last(data_format, owner):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{owner}: data_format must be 'channels_last' (or None), the one layout "
                         f"minidl supports; got {data_format!r}")
    return "channels_last"


def _check_no_dilation(dilation_rate, owner):
    if normalize_pair(dilation_rate, "dilation_rate", owner) != (1, 1):
        raise ValueError(f"{owner}: dilation_rate must be 1 or (1, 1); minidl's depthwise "
                         f"convolution has no dilation, got {dilation_rate!r}")
    return (1, 1)


def _check_multiplier(depth_multiplier, owner):
    if not isinstance(depth_multiplier, int) or isinstance(depth_multiplier, bool) or depth_multiplier < 1:
        raise ValueError(f"{owner}: depth_multiplier must be a positive int, got {depth_multiplier!r}")
    return depth_multiplier


class _DepthwiseBase(WindowPlanMixin, ActivationMixin, Layer):
    """The depthwise step shared by both layers: arguments, the plan, and the depthwise ops."""

    def _set_depthwise_options(self, kernel_size, strides, padding, depth_multiplier, data_format,
                               dilation_rate, activation, use_bias, depthwise_initializer,
                               bias_initializer, depthwise_regularizer, bias_regularizer,
                               depthwise_constraint, bias_constraint):
        owner = self.describe()
        self.kernel_size = normalize_pair(kernel_size, "kernel_size", owner)
        self.strides = normalize_pair(strides, "strides", owner)
        self.padding = normalize_padding(padding, owner)
        self.depth_multiplier = _check_multiplier(depth_multiplier, owner)
        self.data_format = _check_channels_last(data_format, owner)
        self.dilation_rate = _check_no_dilation(dilation_rate, owner)
        self.activation = activations.resolve(activation, owner)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = depthwise_initializer
        self.bias_initializer = bias_initializer
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _depthwise_config(self):
        return dict(super().get_config(), kernel_size=tuple(self.kernel_size), strides=tuple(self.strides),
                    padding=self.padding, depth_multiplier=self.depth_multiplier,
                    data_format=self.data_format, dilation_rate=tuple(self.dilation_rate),
                    activation=activations.config_name(self._activation), use_bias=self.use_bias,
                    depthwise_initializer=str(self.depthwise_initializer),
                    bias_initializer=str(self.bias_initializer),
                    depthwise_regularizer=regularizers.serialize(self.depthwise_regularizer),
                    bias_regularizer=regularizers.serialize(self.bias_regularizer),
                    activity_regularizer=regularizers.serialize(self.activity_regularizer),
                    depthwise_constraint=constraints.serialize(self.depthwise_constraint),
                    bias_constraint=constraints.serialize(self.bias_constraint))

    def _add_depthwise_kernel(self, name, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")
        check_window_fits(self, input_shape, self.kernel_size, "kernel")
        return self.add_weight(name, self.kernel_size + (input_shape[2], self.depth_multiplier),
                               self.depthwise_initializer, regularizer=self.depthwise_regularizer,
                               constraint=self.depthwise_constraint)

    def _add_bias(self, size):
        if self.use_bias:
            self.bias = self.add_weight("bias", (size,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _depthwise_shape(self, input_shape):
        """(OH, OW, C * M) of the depthwise step; an unknown (None) height or width stays unknown."""
        check_window_fits(self, input_shape, self.kernel_size, "kernel")   # a batch's shape
        return window_output_shape(input_shape, self.kernel_size, self.strides, self.padding,
                                   input_shape[2] * self.depth_multiplier)

    def _make_plan(self, in_shape):
        return self.backend.depthwise_conv2d_plan(in_shape, self._depthwise_kernel.shape, self.strides,
                                                  self.padding)

    def _depthwise_weights(self, call):
        """The depthwise kernel this call computes with (larq's quantized layers give theirs)."""
        return self._depthwise_kernel.value

    def _depthwise_forward(self, call, out, x, bias):
        """The depthwise step of forward's input x into out, on the call's plan."""
        call.x = x
        call.depthwise = self._depthwise_weights(call)
        self.backend.depthwise_conv2d_forward(out, x, call.depthwise, bias, call.plan)

    def _depthwise_backward(self, call, dd, dbias):
        """The depthwise step's weight gradients and, when needed, its input gradient."""
        b, plan = self.backend, call.plan
        if self.trainable:
            b.depthwise_conv2d_backward_filter(call.grad(self._depthwise_kernel), dbias, dd, call.x, plan)
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", plan.in_shape)
        b.depthwise_conv2d_backward_data(dx, dd, call.depthwise, plan)
        return dx


class DepthwiseConv2D(_DepthwiseBase):
    """Depthwise 2-D convolution: each input channel convolved with its own depth_multiplier filters.

    padding "same" pads as TensorFlow does (the odd pixel at the bottom/right).
    """

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, name=None,
                 trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        self._set_depthwise_options(kernel_size, strides, padding, depth_multiplier, data_format,
                                    dilation_rate, activation, use_bias, depthwise_initializer,
                                    bias_initializer, depthwise_regularizer, bias_regularizer,
                                    depthwise_constraint, bias_constraint)

    def get_config(self):
        return self._depthwise_config()

    def build(self, input_shape):
        self.kernel = self._depthwise_kernel = self._add_depthwise_kernel("kernel", input_shape)
        self._add_bias(input_shape[2] * self.depth_multiplier)

    def compute_output_shape(self, input_shape):
        return self._depthwise_shape(input_shape)

    def forward(self, call, x, training):
        plan = self.batch_plan(call, x)
        z = call.buffer("z", plan.out_shape)
        self._depthwise_forward(call, z, x, self.bias.value if self.use_bias else None)
        return self._activate(call, z)

    def backward_preactivation(self, call, dz):
        dbias = call.grad(self.bias) if self.use_bias and self.trainable else None
        return self._depthwise_backward(call, dz, dbias)


class SeparableConv2D(_DepthwiseBase):
    """Depthwise convolution (no bias) followed by a 1x1 convolution to `filters` channels."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"{self.describe()}: filters must be a positive int, got {filters!r}")
        self.filters = filters
        self._set_depthwise_options(kernel_size, strides, padding, depth_multiplier, data_format,
                                    dilation_rate, activation, use_bias, depthwise_initializer,
                                    bias_initializer, depthwise_regularizer, bias_regularizer,
                                    depthwise_constraint, bias_constraint)
        self.pointwise_initializer = pointwise_initializer
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def get_config(self):
        return dict(self._depthwise_config(), filters=self.filters,
                    pointwise_initializer=str(self.pointwise_initializer),
                    pointwise_regularizer=regularizers.serialize(self.pointwise_regularizer),
                    pointwise_constraint=constraints.serialize(self.pointwise_constraint))

    def build(self, input_shape):
        self.depthwise_kernel = self._depthwise_kernel = self._add_depthwise_kernel("depthwise_kernel",
                                                                                   input_shape)
        mid = input_shape[2] * self.depth_multiplier
        self.pointwise_kernel = self.add_weight("pointwise_kernel", (1, 1, mid, self.filters),
                                                self.pointwise_initializer,
                                                regularizer=self.pointwise_regularizer,
                                                constraint=self.pointwise_constraint)
        self._add_bias(self.filters)

    def compute_output_shape(self, input_shape):
        oh, ow, _ = self._depthwise_shape(input_shape)
        return (oh, ow, self.filters)

    def _pointwise_weights(self, call):
        """The pointwise kernel this call's gemms compute with (larq's quantized layers give theirs)."""
        return self.pointwise_kernel.value

    def _pointwise_matrix(self, tensor):
        """The (1, 1, C * M, filters) pointwise kernel (or its gradient) as a (C * M, filters) matrix."""
        return self.backend.reshape(tensor, (self.pointwise_kernel.shape[2], self.filters))

    def forward(self, call, x, training):
        return self._separable_forward(call, x, self.batch_plan(call, x))

    def _separable_forward(self, call, x, plan):
        """The depthwise then pointwise steps of x on `plan` (larq's quantized layer gives the
        plan of its unpadded input with an input it padded itself)."""
        b = self.backend
        d = call.buffer("depthwise", plan.out_shape)
        self._depthwise_forward(call, d, x, None)
        rows = plan.n * plan.oh * plan.ow
        call.d2 = b.reshape(d, (rows, plan.oc))
        call.pointwise = self._pointwise_matrix(self._pointwise_weights(call))
        z = call.buffer("z", (rows, self.filters))
        b.gemm(z, call.d2, call.pointwise)
        if self.use_bias:
            b.bias_add(z, z, self.bias.value)
        return b.reshape(self._activate(call, z), (plan.n, plan.oh, plan.ow, self.filters))

    def _deactivate(self, call, dout):
        plan = call.plan
        rows = plan.n * plan.oh * plan.ow
        return super()._deactivate(call, self.backend.reshape(dout, (rows, self.filters)))

    def backward_preactivation(self, call, dz):
        b = self.backend
        if self.trainable:
            b.gemm(self._pointwise_matrix(call.grad(self.pointwise_kernel)), call.d2, dz, trans_a=True)
            if self.use_bias:
                b.bias_grad(call.grad(self.bias), dz)
        if not (self.trainable or call.input_grad_needed):
            return None
        dd = call.buffer("ddepthwise", b.shape(call.d2))
        b.gemm(dd, dz, call.pointwise, trans_b=True)
        return self._depthwise_backward(call, b.reshape(dd, call.plan.out_shape), None)
