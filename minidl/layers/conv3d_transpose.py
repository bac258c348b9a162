"""Conv3DTranspose (channels_last): the adjoint of a 3-D convolution, per depth tap on the
backend's 2-D ops (as Conv3D, conv3d.py).

With kernel (kd, kh, kw, filters, in) and the 2-D transposed plan of height and width
(conv2d_transpose_plan: the convolution mapping the output's (H', W') to the input's), tap kd
adds conv2d_backward_data(x, kernel[kd]) to the output depths od * sd + kd * dd - front, for
every input depth od: a scatter-add (strided_add) into a depth-padded output, cropped to Keras's
output length (backends/window.py transpose_alignment). Backward gathers the same depths of
dL/doutput per tap: conv2d_forward gives dL/dx, conv2d_backward_filter (input and output
swapped) the kernel's gradient, bias_grad the bias's.
"""

from ..backends.window import transpose_alignment
from .base import format_shape
from .conv1d import check_channels_last
from .conv3d import Conv3D, _strides
from .pooling3d import normalize_triple


class Conv3DTranspose(Conv3D):
    """Transposed 3-D convolution; kernel (kd, kh, kw, filters, in_channels), bias (filters,).
    Keras's output size (Conv2DTranspose's rules on each axis); no groups, as Keras."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 output_padding=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, name=None, trainable=True):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint,
                         name, trainable)
        self.output_padding = None if output_padding is None else normalize_triple(
            output_padding, "output_padding", self.describe(), minimum=0)
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(f"{self.describe()}: output_padding must be strictly less than strides "
                             f"in every dimension, got output_padding={self.output_padding} and "
                             f"strides={self.strides}")

    def get_config(self):
        config = dict(super().get_config(), output_padding=None if self.output_padding is None
                      else list(self.output_padding))
        del config["groups"]
        return config

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")
        check_channels_last(None, self.describe())
        out = self.compute_output_shape(input_shape)
        if any(d is not None and d < 1 for d in out[:3]):
            raise ValueError(f"{self.describe()}: input {format_shape(input_shape)} gives the empty "
                             f"output {format_shape(out)}")
        self.kernel = self.add_weight("kernel", self.kernel_size + (self.filters, input_shape[3]),
                                      self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _alignment(self, axis, size):
        pad = None if self.output_padding is None else self.output_padding[axis]
        return transpose_alignment(size, self.kernel_size[axis], self.strides[axis], self.padding, pad,
                                   self.dilation_rate[axis])

    def compute_output_shape(self, input_shape):
        return tuple(None if s is None else self._alignment(i, s)[0]
                     for i, s in enumerate(input_shape[:3])) + (self.filters,)

    def _geometry(self, call, shape):
        g = getattr(call, "geometry", None)
        if g is not None and g["shape"] == shape and g["backend"] is self.backend:
            return g
        n, d, h, w, c = shape
        kd, kh, kw = self.kernel_size
        sd, dd = self.strides[0], self.dilation_rate[0]
        out_d, front = self._alignment(0, d)
        pads = None if self.output_padding is None else self.output_padding[1:]
        plan = self.backend.conv2d_transpose_plan((n * d, h, w, c), (kh, kw, self.filters, c),
                                                  self.strides[1:], self.padding, pads,
                                                  self.dilation_rate[1:])
        step = plan.h * plan.w * self.filters          # one output depth slice (H' * W' * filters)
        # the depth-padded output: every tap's rows fit, and so does the cropped output
        length = max(out_d + front, (d - 1) * sd + (kd - 1) * dd + 1)
        padded = (n, length, plan.h, plan.w, self.filters)
        call.geometry = g = dict(shape=shape, backend=self.backend, plan=plan, out_d=out_d,
                                 front=front, step=step, padded=padded, tap_shape=(n, d, step),
                                 tap_strides=(length * step, sd * step, 1),
                                 kernel_tap=(kh, kw, self.filters, c),
                                 kernel_tap_size=kh * kw * self.filters * c,
                                 out_shape=(n, out_d, plan.h, plan.w, self.filters))
        return g

    def forward(self, call, x, training):
        b = self.backend
        shape = call.x_shape = b.shape(x)
        g = self._geometry(call, shape)
        plan = g["plan"]
        call.x4 = x4 = b.reshape(x, plan.out_shape)
        padded = call.buffer("padded", g["padded"])
        b.fill(padded, 0.0)
        tap = call.buffer("tap", plan.in_shape)
        for kd in range(self.kernel_size[0]):
            b.conv2d_backward_data(tap, x4, self._kernel_tap(call, g, kd), plan)
            b.strided_add(padded, b.reshape(tap, g["tap_shape"]), kd * self.dilation_rate[0] * g["step"],
                          g["tap_strides"])
        z = call.buffer("z", g["out_shape"])
        b.strided_copy(z, padded, g["front"] * g["step"], _strides(g["padded"]))
        if self.use_bias:
            b.bias_add(z, z, self.bias.value)
        return self._activate(call, z)

    def _tap_of(self, call, g, dpadded, kd):
        """dL/d(the output rows tap kd wrote), as a (N * D, H', W', filters) block."""
        b = self.backend
        taps = call.buffer("dtaps", g["tap_shape"])
        b.strided_copy(taps, dpadded, kd * self.dilation_rate[0] * g["step"], g["tap_strides"])
        return b.reshape(taps, g["plan"].in_shape)

    def backward_preactivation(self, call, dz):
        b = self.backend
        g = self._geometry(call, call.x_shape)
        plan = g["plan"]
        dpadded = call.buffer("dpadded", g["padded"])
        b.fill(dpadded, 0.0)
        b.strided_add(dpadded, dz, g["front"] * g["step"], _strides(g["padded"]))
        if self.trainable:
            if self.use_bias:
                b.bias_grad(call.grad(self.bias), dz)
            tap_grad = call.buffer("kernel_tap_grad", g["kernel_tap"])
            dkernel = call.grad(self.kernel)
            b.fill(dkernel, 0.0)
        dx = part = None
        if call.input_grad_needed:
            dx = call.buffer("dx", plan.out_shape)
            part = call.buffer("dx_part", plan.out_shape) if self.kernel_size[0] > 1 else None
        for kd in range(self.kernel_size[0]):
            dtap = self._tap_of(call, g, dpadded, kd)
            if self.trainable:   # the convolution's filter gradient, its input and output swapped
                b.conv2d_backward_filter(tap_grad, None, call.x4, dtap, plan)
                b.strided_add(dkernel, tap_grad, kd * g["kernel_tap_size"], _strides(g["kernel_tap"]))
            if dx is not None:
                b.conv2d_forward(dx if kd == 0 else part, dtap, self._kernel_tap(call, g, kd), None, plan)
                if kd:
                    b.add(dx, dx, part)
        return None if dx is None else b.reshape(dx, call.x_shape)

Convolution3DTranspose = Conv3DTranspose

__all__ = ["Conv3DTranspose", "Convolution3DTranspose"]
