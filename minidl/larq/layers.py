"""larq's quantized layers (larq.layers) on minidl's Dense, Conv2D, Conv1D, DepthwiseConv2D and
SeparableConv2D.

Each keeps latent float weights (what the optimizer updates, what get_weights returns, what
kernel_constraint clips) and, in every forward pass, computes with quantized copies: the input
through input_quantizer, the kernel through kernel_quantizer (depthwise_quantizer,
pointwise_quantizer). The backward pass runs the float layer's ops on those copies, then each
quantizer's straight-through gradient takes dL/dcopy back to dL/dlatent.

pad_values (the conv layers): with padding="same", larq pads the quantized input with this value
instead of 0 (a binary network has no 0; pad_values=1 keeps the padded input binary). Here the
input is padded by the backend (pad2d plus a constant border tensor) and the convolution runs
'valid' on it, as larq does. QuantConv1D is QuantConv2D on the (N, 1, L, C) view of its input,
as minidl's Conv1D is Conv2D's (layers/conv1d.py), so lq.convert runs it binary too.
"""

from ..backends.window import same_padding
from ..custom_objects import get_custom_objects
from ..layers.base import count_elements
from ..layers.conv import Conv2D
from ..layers.conv1d import LiftedWeight, Lifted1D, _config_1d, _conv_options
from ..layers.core import Dense
from ..layers.depthwise import DepthwiseConv2D, SeparableConv2D
from ..autodiff import Tensor
from ..mixed_precision import compute_precision
from . import constraints as lq_constraints
from . import pool_fusion, quantizers
from .binary_inference import binary_forward, binary_plan, unpacked_shape

import numpy as np


class QuantizerBase:
    """input_quantizer handling shared by every larq layer."""

    _binary_state = None     # set by lq.convert: this layer predicts on the binary ops

    def _binary_inference(self, training):
        """True when this forward runs the binary ops; a training step invalidates the packed
        kernel instead (its latent weights are about to change)."""
        if self._binary_state is None:
            return False
        if training:
            self._binary_state.invalidate()
            return False
        return True

    # (weight attribute, its quantizer's attribute) of every quantized kernel a larq layer has
    _QUANTIZED_WEIGHTS = (("kernel", "kernel_quantizer"), ("_depthwise_kernel", "depthwise_quantizer"),
                          ("pointwise_kernel", "pointwise_quantizer"))

    def build(self, input_shape):
        super().build(input_shape)
        # larq's QuantizedVariable.precision: what Bop.is_binary_variable and CaseOptimizer read
        for weight_name, quantizer_name in self._QUANTIZED_WEIGHTS:
            weight, quantizer = getattr(self, weight_name, None), getattr(self, quantizer_name, None)
            if isinstance(weight, LiftedWeight):    # a 1-D layer's kernel seen in 2-D
                weight = weight.weight
            if weight is not None and quantizer is not None:
                weight.precision = getattr(quantizer, "precision", None) or 32

    def _set_input_quantizer(self, input_quantizer, metrics):
        self.input_quantizer = quantizers.get(input_quantizer)
        self._layer_metrics = metrics     # larq's older layer argument: given to the kernel quantizers

    def _apply_layer_metrics(self):
        """metrics= of the layer (larq < 0.13): the quantizers of its kernels track them."""
        metrics = self.__dict__.pop("_layer_metrics", None)
        if metrics in (None, [], ()):
            return
        quantized = [q for _, name in self._QUANTIZED_WEIGHTS for q in [getattr(self, name, None)] if q is not None]
        if not quantized:
            raise ValueError(f"{self.describe()}: metrics={metrics!r} tracks the quantized kernels, and this "
                             "layer has no kernel quantizer")
        for quantizer in quantized:
            quantizer.set_metrics(metrics)

    def _quantize_input(self, call, x):
        if self.input_quantizer is None:
            call.input_state = None
            return x
        q, call.input_state = self.input_quantizer.quantize(call, "input_q", x)
        return q

    def _input_gradient(self, call, dx):
        if dx is None or self.input_quantizer is None:
            return dx
        return self.input_quantizer.quantize_gradient(call, dx, call.input_state)

    def _quantize_weight(self, call, quantizer, weight, role):
        """(tensor to compute with, state) of a latent weight; in training the quantizer's
        flip_ratio (if it has one) sees the quantized values."""
        if quantizer is None:
            return weight.value, None
        quantized = quantizer.quantize(call, role, weight.value)
        flips = getattr(quantizer, "flip_ratio", None)
        if flips is not None and call.training:
            flips.update_state(Tensor(quantized[0], call.backend))
        return quantized

    def _weight_gradient(self, call, quantizer, weight, state):
        """dL/dlatent from the call's dL/dcopy, in place (the straight-through estimator)."""
        if quantizer is not None and self.trainable:
            quantizer.quantize_gradient(call, call.grad(weight), state)

    def _quantizer_config(self, **named):
        return {"input_quantizer": quantizers.serialize(self.input_quantizer),
                **{name: quantizers.serialize(q) for name, q in named.items()}}


class PadValuesMixin:
    """larq's pad_values for padding="same": the plan is built 'valid' for the padded input."""

    def _set_pad_values(self, pad_values):
        if isinstance(pad_values, bool) or not isinstance(pad_values, (int, float)):
            raise TypeError(f"{self.describe()}: pad_values must be a number, got {pad_values!r}")
        self.pad_values = float(pad_values)
        self._native_padding = self.padding != "same" or self.pad_values == 0.0
        self._borders = {}

    def _pads(self, h, w):
        dilation = getattr(self, "dilation_rate", (1, 1))
        top, bottom = same_padding(h, self.kernel_size[0], self.strides[0], dilation[0])
        left, right = same_padding(w, self.kernel_size[1], self.strides[1], dilation[1])
        return top, bottom, left, right

    def _padded_shape(self, in_shape):
        n, h, w, c = in_shape
        top, bottom, left, right = self._pads(h, w)
        return (n, h + top + bottom, w + left + right, c)

    def _pad_input(self, call, xq):
        """xq padded with pad_values (a buffer of the padded shape)."""
        b = self.backend
        shape = b.shape(xq)
        call.unpadded_shape = shape
        pads = self._pads(shape[1], shape[2])
        padded_shape = self._padded_shape(shape)
        xpad = call.buffer("input_padded", padded_shape)
        b.pad2d_forward(xpad, xq, pads)
        border = self._borders.get((padded_shape, id(b)))
        if border is None:      # pad_values on the border, 0 inside: a constant made once per shape
            if len(self._borders) >= 8:
                self._borders.clear()
            host = np.full(padded_shape, self.pad_values, np.float32)
            host[:, pads[0]:pads[0] + shape[1], pads[2]:pads[2] + shape[2], :] = 0
            border = self._borders[(padded_shape, id(b))] = b.from_numpy(host)
        b.add(xpad, xpad, border)
        return xpad

    def _unpad_gradient(self, call, dx_padded):
        shape = call.unpadded_shape
        dx = call.buffer("dx_unpadded", shape)
        self.backend.pad2d_backward(dx, dx_padded, self._pads(shape[1], shape[2]))
        return dx


def _weight_constraint(value):
    return lq_constraints.get(value)


class QuantDense(QuantizerBase, Dense):
    """Dense with input_quantizer and kernel_quantizer (larq.layers.QuantDense)."""

    supports_binary_inference = True     # lq.convert may run it on the binary ops

    def __init__(self, units, activation=None, use_bias=True, input_quantizer=None, kernel_quantizer=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, metrics=None, name=None, trainable=True):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=_weight_constraint(kernel_constraint),
                         bias_constraint=bias_constraint, name=name, trainable=trainable)
        self._set_input_quantizer(input_quantizer, metrics)
        self.kernel_quantizer = quantizers.get_kernel_quantizer(kernel_quantizer)
        self._apply_layer_metrics()

    def get_config(self):
        return dict(super().get_config(), **self._quantizer_config(kernel_quantizer=self.kernel_quantizer))

    def forward(self, call, x, training):
        b = self.backend
        shape = b.shape(x)
        rows = count_elements(shape[:-1])
        if self._binary_inference(training):     # a 1 x 1 convolution of a 1 x 1 image
            k = self.kernel.shape[0]
            plan = binary_plan(self, (rows, 1, 1, k), (1, 1, k, self.units), (1, 1), "valid", (1, 1))
            z = binary_forward(self, call, b.reshape(x, (rows, 1, 1, shape[-1])),
                               b.reshape(self.kernel.value, (1, 1, k, self.units)), plan, 0)
            return b.reshape(self._activate(call, b.reshape(z, (rows, self.units))),
                             shape[:-1] + (self.units,))
        return super().forward(call, self._quantize_input(call, x), training)

    def _kernel_for(self, call):
        kq, call.kernel_state = self._quantize_weight(call, self.kernel_quantizer, self.kernel,
                                                      "kernel_q")
        return kq

    def backward_preactivation(self, call, dz):
        dx = super().backward_preactivation(call, dz)
        self._weight_gradient(call, self.kernel_quantizer, self.kernel, call.kernel_state)
        return self._input_gradient(call, dx)


class QuantConv2D(QuantizerBase, PadValuesMixin, Conv2D):
    """Conv2D with input_quantizer, kernel_quantizer and pad_values (larq.layers.QuantConv2D)."""

    supports_binary_inference = True
    supports_pool_fusion = True    # its binary forward can take a MaxPooling2D's maxima (pool_fusion.py)

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", pad_values=0.0,
                 data_format=None, dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 input_quantizer=None, kernel_quantizer=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, metrics=None,
                 name=None, trainable=True):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         dilation_rate=dilation_rate, groups=groups, activation=activation,
                         use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=_weight_constraint(kernel_constraint),
                         bias_constraint=bias_constraint, name=name, trainable=trainable)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{self.describe()}: data_format must be 'channels_last' (or None), "
                             f"got {data_format!r}")
        self._set_input_quantizer(input_quantizer, metrics)
        self.kernel_quantizer = quantizers.get_kernel_quantizer(kernel_quantizer)
        self._apply_layer_metrics()
        self._set_pad_values(pad_values)

    def get_config(self):
        return dict(super().get_config(), pad_values=self.pad_values, data_format="channels_last",
                    **self._quantizer_config(kernel_quantizer=self.kernel_quantizer))

    def _make_plan(self, in_shape):
        if self._native_padding:
            return super()._make_plan(in_shape)
        return self.backend.conv2d_plan(self._padded_shape(in_shape), self.kernel.shape, self.strides,
                                        "valid", self.dilation_rate, self.groups)

    def forward(self, call, x, training):
        if self._binary_inference(training):
            plan = binary_plan(self, unpacked_shape(self, x), self.kernel.shape, self.strides, self.padding,
                               self.dilation_rate)
            pool = pool_fusion.pool_plan(self, call, plan)
            z = binary_forward(self, call, x, self.kernel.value, plan, int(self.pad_values), pool)
            self._binary_state.pooled = z if pool is not None else None
            return self._activate(call, z)
        xq = self._quantize_input(call, x)
        plan = self.batch_plan(call, xq)   # of the unpadded input (see _make_plan)
        if not self._native_padding:
            xq = self._pad_input(call, xq)
        call.precision = compute_precision(self)   # the dtype policy's
        call.x, call.kernel = xq, self._kernel_for(call)
        z = call.buffer("z", plan.out_shape)
        self.backend.conv2d_forward(z, call.x, call.kernel,
                                    self.bias.value if self.use_bias else None, plan, call.precision)
        return self._activate(call, z)

    def _kernel_for(self, call):
        kq, call.kernel_state = self._quantize_weight(call, self.kernel_quantizer, self.kernel,
                                                      "kernel_q")
        return kq

    def backward_preactivation(self, call, dz):
        dx = super().backward_preactivation(call, dz)
        self._weight_gradient(call, self.kernel_quantizer, self.kernel, call.kernel_state)
        if dx is not None and not self._native_padding:
            dx = self._unpad_gradient(call, dx)
        return self._input_gradient(call, dx)


class QuantConv1D(Lifted1D, QuantConv2D):
    """Conv1D with input_quantizer, kernel_quantizer and pad_values (larq.layers.QuantConv1D);
    kernel (kernel_size, in_channels / groups, filters). padding "valid", "same" or "causal"
    (causal only with pad_values=0, as larq)."""

    supports_pool_fusion = False   # a 1-D layer is followed by 1-D poolings

    def __init__(self, filters, kernel_size, strides=1, padding="valid", pad_values=0.0, data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True, input_quantizer=None,
                 kernel_quantizer=None, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, metrics=None, name=None, trainable=True):
        self.name = name or "quant_conv1d"   # for messages before Layer.__init__ names the layer
        kernel, stride, dilation = _conv_options(self, kernel_size, strides, dilation_rate, data_format)
        causal = isinstance(padding, str) and padding.lower() == "causal"
        if causal and pad_values != 0.0:
            raise ValueError(f"{self.describe()}: causal padding with `pad_values != 0` is not supported "
                             f"(got pad_values={pad_values!r})")
        super().__init__(filters, kernel, stride, "valid" if causal else padding, pad_values,
                         dilation_rate=dilation, groups=groups, activation=activation, use_bias=use_bias,
                         input_quantizer=input_quantizer, kernel_quantizer=kernel_quantizer,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, metrics=metrics, name=name, trainable=trainable)
        if causal:
            self.padding = "causal"

    def get_config(self):
        return _config_1d(super().get_config(), "kernel_size", "strides", "dilation_rate")


class _QuantDepthwiseSteps(QuantizerBase, PadValuesMixin):
    """The quantized depthwise step shared by QuantDepthwiseConv2D and QuantSeparableConv2D."""

    def _make_plan(self, in_shape):
        if self._native_padding:
            return super()._make_plan(in_shape)
        return self.backend.depthwise_conv2d_plan(self._padded_shape(in_shape), self._depthwise_kernel.shape,
                                                  self.strides, "valid")

    def _depthwise_weights(self, call):
        kq, call.depthwise_state = self._quantize_weight(call, self.depthwise_quantizer,
                                                         self._depthwise_kernel, "depthwise_q")
        return kq

    def _quantized_input_and_plan(self, call, x):
        """The quantized (and pad_values-padded) input, and the plan of the unpadded one."""
        xq = self._quantize_input(call, x)
        plan = self.batch_plan(call, xq)
        if not self._native_padding:
            xq = self._pad_input(call, xq)
        return xq, plan

    def _quantized_gradients(self, call, dx):
        self._weight_gradient(call, self.depthwise_quantizer, self._depthwise_kernel,
                              call.depthwise_state)
        if dx is not None and not self._native_padding:
            dx = self._unpad_gradient(call, dx)
        return self._input_gradient(call, dx)


class QuantDepthwiseConv2D(_QuantDepthwiseSteps, DepthwiseConv2D):
    """DepthwiseConv2D with input_quantizer, depthwise_quantizer and pad_values."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", pad_values=0.0, depth_multiplier=1,
                 data_format=None, activation=None, use_bias=True, input_quantizer=None,
                 depthwise_quantizer=None, depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, metrics=None, name=None, trainable=True,
                 dilation_rate=(1, 1)):
        super().__init__(kernel_size, strides=strides, padding=padding, depth_multiplier=depth_multiplier,
                         data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                         use_bias=use_bias, depthwise_initializer=depthwise_initializer,
                         bias_initializer=bias_initializer, depthwise_regularizer=depthwise_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         depthwise_constraint=_weight_constraint(depthwise_constraint),
                         bias_constraint=bias_constraint, name=name, trainable=trainable)
        self._set_input_quantizer(input_quantizer, metrics)
        self.depthwise_quantizer = quantizers.get_kernel_quantizer(depthwise_quantizer)
        self._apply_layer_metrics()
        self._set_pad_values(pad_values)

    def get_config(self):
        return dict(super().get_config(), pad_values=self.pad_values,
                    **self._quantizer_config(depthwise_quantizer=self.depthwise_quantizer))

    def forward(self, call, x, training):
        xq, plan = self._quantized_input_and_plan(call, x)
        z = call.buffer("z", plan.out_shape)
        self._depthwise_forward(call, z, xq, self.bias.value if self.use_bias else None)
        return self._activate(call, z)

    def backward_preactivation(self, call, dz):
        return self._quantized_gradients(call, super().backward_preactivation(call, dz))


class QuantSeparableConv2D(_QuantDepthwiseSteps, SeparableConv2D):
    """SeparableConv2D with input_quantizer, depthwise_quantizer, pointwise_quantizer and pad_values."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", pad_values=0.0,
                 data_format=None, dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 input_quantizer=None, depthwise_quantizer=None, pointwise_quantizer=None,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, metrics=None, name=None, trainable=True):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, depth_multiplier=depth_multiplier,
                         activation=activation, use_bias=use_bias,
                         depthwise_initializer=depthwise_initializer,
                         pointwise_initializer=pointwise_initializer, bias_initializer=bias_initializer,
                         depthwise_regularizer=depthwise_regularizer,
                         pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         depthwise_constraint=_weight_constraint(depthwise_constraint),
                         pointwise_constraint=_weight_constraint(pointwise_constraint),
                         bias_constraint=bias_constraint, name=name, trainable=trainable)
        self._set_input_quantizer(input_quantizer, metrics)
        self.depthwise_quantizer = quantizers.get_kernel_quantizer(depthwise_quantizer)
        self.pointwise_quantizer = quantizers.get_kernel_quantizer(pointwise_quantizer)
        self._apply_layer_metrics()
        self._set_pad_values(pad_values)

    def get_config(self):
        return dict(super().get_config(), pad_values=self.pad_values,
                    **self._quantizer_config(depthwise_quantizer=self.depthwise_quantizer,
                                             pointwise_quantizer=self.pointwise_quantizer))

    def _pointwise_weights(self, call):
        kq, call.pointwise_state = self._quantize_weight(call, self.pointwise_quantizer,
                                                         self.pointwise_kernel, "pointwise_q")
        return kq

    def forward(self, call, x, training):
        xq, plan = self._quantized_input_and_plan(call, x)
        return self._separable_forward(call, xq, plan)

    def backward_preactivation(self, call, dz):
        dx = super().backward_preactivation(call, dz)
        self._weight_gradient(call, self.pointwise_quantizer, self.pointwise_kernel,
                              call.pointwise_state)
        return self._quantized_gradients(call, dx)


get_custom_objects().update({cls.__name__: cls for cls in (QuantDense, QuantConv1D, QuantConv2D,
                                                           QuantDepthwiseConv2D, QuantSeparableConv2D)})

__all__ = ["QuantConv1D", "QuantConv2D", "QuantDense", "QuantDepthwiseConv2D", "QuantSeparableConv2D"]
