"""Conv3D (channels_last, (N, D, H, W, C)) on the backend's 2-D convolution ops.

A 3-D convolution is a sum over the kernel's depth taps kd of 2-D convolutions: output depth od
reads input depth od * sd + kd * dd - pad_front through kernel[kd] (kh, kw, in, out). For each
tap the layer gathers those input depths into one (N * OD, H, W, C) block (strided_copy from the
depth-padded input; one copy of the input per tap), runs conv2d on it with kernel[kd], and adds
the result up. Backward runs the same taps: conv2d_backward_filter per tap into kernel[kd]'s
gradient, conv2d_backward_data per tap scatter-added (strided_add) back to the input depths.
The 2-D plan (height and width: padding, strides, dilation, groups) is built once per batch shape.
"""

from .. import activations
from ..backends.window import conv_output_length, same_padding
from .base import Layer, format_shape
from .convolution_op import ConvolutionOpMixin
from .conv1d import check_channels_last
from .core import ActivationMixin
from .pooling3d import normalize_triple


def _strides(shape):
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


class Conv3D(ConvolutionOpMixin, ActivationMixin, Layer):
    """3-D convolution; kernel (kd, kh, kw, in_channels / groups, filters), bias (filters,).
    padding "same" pads as TensorFlow does (the odd voxel after)."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        owner = self.describe()
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        check_channels_last(data_format, owner)
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"{owner}: filters must be a positive int, got {filters!r}")
        self.filters = filters
        self.kernel_size = normalize_triple(kernel_size, "kernel_size", owner)
        self.strides = normalize_triple(strides, "strides", owner)
        if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
            raise ValueError(f"{owner}: padding must be 'same' or 'valid', got {padding!r}")
        self.padding = padding.lower()
        self.dilation_rate = normalize_triple(dilation_rate, "dilation_rate", owner)
        if max(self.dilation_rate) > 1 and max(self.strides) > 1:
            raise ValueError(f"{owner}: strides > 1 is not supported together with dilation_rate > 1, "
                             f"got strides={self.strides} and dilation_rate={self.dilation_rate}")
        if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0 or filters % groups:
            raise ValueError(f"{owner}: groups must be a positive int that divides "
                             f"filters={filters}, got {groups!r}")
        self.groups = groups
        self.activation = activations.resolve(activation, owner)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def get_config(self):
        return dict(super().get_config(), filters=self.filters, kernel_size=tuple(self.kernel_size),
                    strides=tuple(self.strides), padding=self.padding, data_format="channels_last",
                    dilation_rate=tuple(self.dilation_rate), groups=self.groups,
                    activation=activations.config_name(self._activation), use_bias=self.use_bias,
                    kernel_initializer=str(self.kernel_initializer),
                    bias_initializer=str(self.bias_initializer), **self._weight_options_config())

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")
        c = input_shape[3]
        self.compute_output_shape(input_shape)
        if c is not None and c % self.groups:
            raise ValueError(f"{self.describe()}: the input's {c} channels (input shape "
                             f"{format_shape(input_shape)}) are not divisible by groups={self.groups}")
        self.kernel = self.add_weight("kernel", self.kernel_size + (
            None if c is None else c // self.groups, self.filters), self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def compute_output_shape(self, input_shape):
        out = []
        for size, k, s, d in zip(input_shape[:3], self.kernel_size, self.strides, self.dilation_rate):
            extent = (k - 1) * d + 1
            if size is not None and self.padding == "valid" and size < extent:
                raise ValueError(f"{self.describe()}: kernel {self.kernel_size} (dilation "
                                 f"{self.dilation_rate}) is larger than its input "
                                 f"{format_shape(input_shape)} with padding 'valid'")
            out.append(None if size is None else conv_output_length(size, k, s, self.padding, d))
        return tuple(out) + (self.filters,)

    def _geometry(self, call, shape):
        """(2-D plan, depth geometry) for a batch of `shape` (N, D, H, W, C), kept on the call
        for its latest shape (call.geometry)."""
        g = getattr(call, "geometry", None)
        if g is not None and g["shape"] == shape and g["backend"] is self.backend:
            return g
        n, d, h, w, c = shape
        kd, kh, kw = self.kernel_size
        sd, dd = self.strides[0], self.dilation_rate[0]
        od = conv_output_length(d, kd, sd, self.padding, dd)
        front, back = same_padding(d, kd, sd, dd) if self.padding == "same" else (0, 0)
        plan = self.backend.conv2d_plan((n * od, h, w, c), (kh, kw, c // self.groups, self.filters),
                                        self.strides[1:], self.padding, self.dilation_rate[1:],
                                        self.groups)
        padded = (n, d + front + back, h, w, c)
        hwc = h * w * c
        call.geometry = g = dict(shape=shape, backend=self.backend, plan=plan, od=od, front=front,
                                 padded=padded, tap_strides=(padded[1] * hwc, sd * hwc, 1), hwc=hwc,
                                 tap_shape=(n, od, hwc),
                                 kernel_tap=(kh, kw, c // self.groups, self.filters),
                                 kernel_tap_size=kh * kw * (c // self.groups) * self.filters)
        return g

    def _tap_input(self, call, g, xp, kd):
        """The input depths tap kd reads, as a (N * OD, H, W, C) block."""
        b = self.backend
        taps = call.buffer("taps", g["tap_shape"])
        b.strided_copy(taps, xp, kd * self.dilation_rate[0] * g["hwc"], g["tap_strides"])
        return b.reshape(taps, g["plan"].in_shape)

    def _kernel_tap(self, call, g, kd):
        """kernel[kd] (kh, kw, in, out) copied out of the 5-D kernel."""
        b = self.backend
        tap = call.buffer("kernel_tap", g["kernel_tap"])
        b.strided_copy(tap, self.kernel.value, kd * g["kernel_tap_size"], _strides(g["kernel_tap"]))
        return tap

    def forward(self, call, x, training):
        b = self.backend
        shape = call.x_shape = b.shape(x)
        g = self._geometry(call, shape)
        plan = g["plan"]
        xp = x
        if g["padded"] != shape:   # zeros before and after along depth ("same")
            xp = call.buffer("padded", g["padded"])
            b.fill(xp, 0.0)
            b.strided_add(xp, x, g["front"] * g["hwc"], _strides(g["padded"]))
        call.xp = xp
        z = call.buffer("z", plan.out_shape)
        part = call.buffer("part", plan.out_shape) if self.kernel_size[0] > 1 else None
        for kd in range(self.kernel_size[0]):
            bias = self.bias.value if self.use_bias and kd == 0 else None
            b.conv2d_forward(z if kd == 0 else part, self._tap_input(call, g, xp, kd),
                             self._kernel_tap(call, g, kd), bias, plan)
            if kd:
                b.add(z, z, part)
        n = shape[0]
        return self._activate(call, b.reshape(z, (n, g["od"], plan.oh, plan.ow, plan.oc)))

    def backward_preactivation(self, call, dz):
        b = self.backend
        g = self._geometry(call, call.x_shape)
        plan = g["plan"]
        dz4 = b.reshape(dz, plan.out_shape)
        kd_count = self.kernel_size[0]
        if self.trainable:
            tap_grad = call.buffer("kernel_tap_grad", g["kernel_tap"])
            tap_size = g["kernel_tap_size"]
            dkernel = call.grad(self.kernel)
            b.fill(dkernel, 0.0)
            for kd in range(kd_count):
                dbias = call.grad(self.bias) if self.use_bias and kd == 0 else None
                b.conv2d_backward_filter(tap_grad, dbias, dz4, self._tap_input(call, g, call.xp, kd),
                                         plan)
                b.strided_add(dkernel, tap_grad, kd * tap_size, _strides(g["kernel_tap"]))
        if not call.input_grad_needed:
            return None
        padded = g["padded"] != call.x_shape
        dxp = call.buffer("dpadded", g["padded"]) if padded else call.buffer("dx", call.x_shape)
        b.fill(dxp, 0.0)
        dtap = call.buffer("dtaps", plan.in_shape)
        for kd in range(kd_count):
            b.conv2d_backward_data(dtap, dz4, self._kernel_tap(call, g, kd), plan)
            b.strided_add(dxp, b.reshape(dtap, g["tap_shape"]), kd * self.dilation_rate[0] * g["hwc"],
                          g["tap_strides"])
        if not padded:
            return dxp
        dx = call.buffer("dx", call.x_shape)
        b.strided_copy(dx, dxp, g["front"] * g["hwc"], _strides(g["padded"]))
        return dx

Convolution3D = Conv3D

__all__ = ["Conv3D", "Convolution3D"]
