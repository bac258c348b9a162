"""Conv2DTranspose (channels_last): the adjoint of a convolution, on the backend's conv ops.

A transposed convolution of x (N, H, W, Cin) with kernel (kh, kw, filters, Cin) is the
backward-data of the convolution that maps its output (N, OH, OW, filters) back to x's shape,
with that very kernel (Keras's layout is the convolution's (kh, kw, in, out)). So the forward
pass is conv2d_backward_data, the input gradient conv2d_forward, and the kernel gradient
conv2d_backward_filter with the roles of x and dout swapped; the bias is a bias_add on the
output. backend.conv2d_transpose_plan builds that convolution's geometry (Keras's output size
and alignment, output_padding included) once per batch size.
"""

from ..backends.window import transpose_window
from .base import format_shape
from .conv import Conv2D, normalize_pair


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution; kernel (kh, kw, filters, in_channels), bias (filters,).

    The output size is Keras's: with output_padding None, H * stride for "same" and
    (H - 1) * stride + max(kernel, stride) for "valid"; otherwise
    (H - 1) * stride + kernel - 2 * (kernel // 2 if "same" else 0) + output_padding, with
    output_padding < stride. The kernel extent is (kernel - 1) * dilation_rate + 1. Conv2D's
    arguments and checks, without groups (Keras's Conv2DTranspose has none).
    """

    # Keras's transposed convolutions have no convolution_op (Conv2D's would be the wrong op)
    _call_uses_convolution_op = False

    @property
    def convolution_op(self):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'convolution_op'")

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, name=None, trainable=True):
        super().__init__(filters, kernel_size, strides, padding, dilation_rate, 1, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, name, trainable)
        self.output_padding = None if output_padding is None else normalize_pair(
            output_padding, "output_padding", self.describe(), minimum=0)
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(f"{self.describe()}: output_padding must be strictly less than strides "
                             f"in every dimension, got output_padding={self.output_padding} and "
                             f"strides={self.strides}")

    def get_config(self):
        config = dict(super().get_config(), output_padding=None if self.output_padding is None
                      else tuple(self.output_padding))
        del config["groups"]
        return config

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")
        kh, kw = self.kernel_size
        out_shape = self.compute_output_shape(input_shape)
        known = [d for d in out_shape[:2] if d is not None]
        if known and min(known) < 1:
            raise ValueError(f"{self.describe()}: input {format_shape(input_shape)} gives the empty "
                             f"output {format_shape(out_shape)}")
        self._add_kernel_and_bias((kh, kw, self.filters, input_shape[2]))

    def compute_output_shape(self, input_shape):
        """Keras's output size; an unknown (None) height or width stays unknown."""
        h, w, c = input_shape
        plan = transpose_window((1, h or 1, w or 1, c), self.kernel_size + (self.filters, c), self.strides,
                                self.padding, self.output_padding, self.dilation_rate)
        return (None if h is None else plan.h, None if w is None else plan.w, self.filters)

    def _make_plan(self, in_shape):
        return self.backend.conv2d_transpose_plan(in_shape, self.kernel.shape, self.strides, self.padding,
                                                  self.output_padding, self.dilation_rate)

    def forward(self, call, x, training):
        call.x = x
        call.kernel = self._kernel_for(call)
        plan = self.batch_plan(call, x)
        z = call.buffer("z", plan.in_shape)
        self.backend.conv2d_backward_data(z, x, call.kernel, plan)
        if self.use_bias:
            self.backend.bias_add(z, z, self.bias.value)
        return self._activate(call, z)

    def backward_preactivation(self, call, dz):
        b = self.backend
        plan = call.plan
        if self.trainable:
            # the convolution's filter gradient with its input (here dz) and output (here x) swapped
            b.conv2d_backward_filter(call.grad(self.kernel), None, call.x, dz, plan)
            if self.use_bias:
                b.bias_grad(call.grad(self.bias), dz)
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", plan.out_shape)
        b.conv2d_forward(dx, dz, call.kernel, None, plan)
        return dx
