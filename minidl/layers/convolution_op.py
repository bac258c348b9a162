"""Keras's BaseConv.convolution_op(inputs, kernel) and the call built on it, for Conv2D and
Conv3D (Conv1D exposes convolution_op too, but its call, as Keras's Conv1D.call, does not go
through it).

A subclass may override convolution_op (keras-io's standardized-weight convolution): the
layer then computes, as Keras's BaseConv.call, convolution_op(inputs, self.kernel) + bias,
then the activation, with minidl.ops, and its gradients (through whatever the override does
to the kernel) come from the ops' tape like any layer written with call. A layer that keeps
the built-in convolution_op runs the fused conv kernels (forward / backward) as before: the
override is detected once per class, when the class is made."""

from .. import activations, ops
from .base import Layer


class ConvolutionOpMixin:
    """Mixed into Conv2D and Conv3D (first base): convolution_op, and the call a subclass
    that overrides it gets."""

    # whether an overridden convolution_op changes what the layer computes (not in Conv1D)
    _call_uses_convolution_op = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if ("convolution_op" in cls.__dict__ and cls._call_uses_convolution_op
                and cls.call is Layer.call):
            cls.call = _convolution_call   # now a layer written with call (uses_call())

    def convolution_op(self, inputs, kernel):
        """ops.conv(inputs, kernel) with the layer's strides, padding and dilation_rate."""
        return ops.conv(inputs, kernel, strides=list(self.strides), padding=self.padding,
                        dilation_rate=self.dilation_rate, data_format="channels_last")


def _convolution_call(self, inputs):
    """Keras's BaseConv.call: convolution_op(inputs, kernel), the bias, the activation."""
    outputs = self.convolution_op(inputs, self.kernel)
    if self.use_bias:
        rank = len(ops.shape(outputs)) - 2
        outputs = ops.add(outputs, ops.reshape(self.bias, (1,) * (rank + 1) + (self.filters,)))
    if self._activation is not None and self._activation != "linear":   # the name or a function
        outputs = activations.get(self._activation)(outputs)
    return outputs
