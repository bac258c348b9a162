"""Conv2D and ZeroPadding2D (channels_last)."""

from .. import activations
from ..mixed_precision import backward_precision, compute_precision
from .base import Layer, format_shape
from .convolution_op import ConvolutionOpMixin
from .core import ActivationMixin


def normalize_pair(value, what, owner, minimum=1):
    """An int or a pair of ints -> a pair of ints >= minimum."""
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        pair = tuple(pair)
    except TypeError:
        pair = ()
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum
                                 for v in pair):
        raise ValueError(f"{owner}: {what} must be an int >= {minimum} or a pair of them, "
                         f"got {value!r}")
    return pair


def normalize_padding(padding, owner):
    if not isinstance(padding, str) or padding.lower() not in ("same", "valid"):
        raise ValueError(f"{owner}: padding must be 'same' or 'valid', got {padding!r}")
    return padding.lower()


def normalize_dilation(dilation_rate, strides, owner):
    """dilation_rate as a pair; Keras refuses it > 1 together with strides > 1."""
    pair = normalize_pair(dilation_rate, "dilation_rate", owner)
    if max(pair) > 1 and max(strides) > 1:
        raise ValueError(f"{owner}: strides > 1 is not supported together with dilation_rate > 1, "
                         f"got strides={strides} and dilation_rate={pair}")
    return pair


class WindowPlanMixin:
    """For layers whose backend ops take a Window2D plan (Conv2D, the poolings): the plan of
    the latest input shape, rebuilt when it changes. A plan may hold scratch sized for its
    batch (the numpy backend's padded input), so keeping one per batch size (or, with unknown
    (None) dims, per image size) ever used would let memory grow with the number of shapes.

    The plan lives on the call's context (call.plan): each call of a shared layer keeps the
    plan (and scratch) of its own batch. plan(call, batch) plans for the built input shape;
    plan(call, batch, shape) for a batch of that full shape (the layers with unknown dims
    pass theirs)."""

    def plan(self, call, batch, in_shape=None):
        plan = call.plan
        key = batch if in_shape is None else in_shape
        if plan is None or call.plan_key != key or call.plan_backend is not self.backend:
            plan = self._make_plan((batch,) + tuple(self.input_shape) if in_shape is None
                                   else in_shape)
            call.plan, call.plan_key, call.plan_backend = plan, key, self.backend
        return plan

    def batch_plan(self, call, x):
        """The plan for forward's input x."""
        shape = self.backend.shape(x)
        return self.plan(call, shape[0], shape if self._unknown_dims else None)

    def _make_plan(self, in_shape):
        raise NotImplementedError


def window_output_shape(input_shape, kernel, strides, padding, out_channels, dilation=(1, 1)):
    """The (height, width, channels) a sliding window makes of `input_shape` (one sample);
    an unknown (None) height or width stays unknown."""
    h, w, _ = input_shape
    known = (1, (kernel[0] - 1) * dilation[0] + 1 if h is None else h,
             (kernel[1] - 1) * dilation[1] + 1 if w is None else w, input_shape[2])
    out = _window(known, kernel, strides, padding, out_channels, dilation).out_shape[1:]
    return (None if h is None else out[0], None if w is None else out[1], out[2])


def check_window_fits(layer, input_shape, window, what):
    """A 'valid' window larger than a known input leaves no output: said at build time."""
    h, w = input_shape[:2]
    if layer.padding == "valid" and ((h is not None and h < window[0])
                                     or (w is not None and w < window[1])):
        raise ValueError(f"{layer.describe()}: {what} {window} is larger than its "
                         f"input {format_shape(input_shape)} with padding 'valid'")


class Conv2D(ConvolutionOpMixin, WindowPlanMixin, ActivationMixin, Layer):
    """2-D convolution; kernel (kh, kw, in_channels / groups, filters), bias (filters,).

    padding "same" pads as TensorFlow does (the odd pixel at the bottom/right). dilation_rate
    spaces the kernel taps; groups > 1 splits channels and filters into that many independent
    convolutions (Keras's grouped Conv2D).
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", dilation_rate=(1, 1),
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"{self.describe()}: filters must be a positive int, got {filters!r}")
        self.filters = filters
        self.kernel_size = normalize_pair(kernel_size, "kernel_size", self.describe())
        self.strides = normalize_pair(strides, "strides", self.describe())
        self.padding = normalize_padding(padding, self.describe())
        self.dilation_rate = normalize_dilation(dilation_rate, self.strides, self.describe())
        if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0 or filters % groups:
            raise ValueError(f"{self.describe()}: groups must be a positive int that divides "
                             f"filters={filters}, got {groups!r}")
        self.groups = groups
        self.activation = activations.resolve(activation, self.describe())
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def get_config(self):
        return dict(super().get_config(), filters=self.filters, kernel_size=tuple(self.kernel_size),
                    strides=tuple(self.strides), padding=self.padding,
                    dilation_rate=tuple(self.dilation_rate), groups=self.groups, activation=activations.config_name(self._activation),
                    use_bias=self.use_bias, kernel_initializer=str(self.kernel_initializer),
                    bias_initializer=str(self.bias_initializer), **self._weight_options_config())

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")
        c = input_shape[2]
        kh, kw = self.kernel_size
        groups = self.groups
        self._check_kernel_fits(input_shape)
        if c is not None and c % groups:   # an unknown c: add_weight says the kernel needs it
            raise ValueError(f"{self.describe()}: the input's {c} channels (input shape "
                             f"{format_shape(input_shape)}) are not divisible by groups={groups}")
        self._add_kernel_and_bias((kh, kw, None if c is None else c // groups, self.filters))

    def _add_kernel_and_bias(self, kernel_shape):
        self.kernel = self.add_weight("kernel", kernel_shape, self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def compute_output_shape(self, input_shape):
        self._check_kernel_fits(input_shape)   # a batch's shape
        return window_output_shape(input_shape, self.kernel_size, self.strides, self.padding,
                                   self.filters, self.dilation_rate)

    def _check_kernel_fits(self, input_shape):
        """The rows and columns the (dilated) kernel spans, (k - 1) * dilation + 1, must fit a
        'valid' input."""
        extent = tuple((k - 1) * d + 1 for k, d in zip(self.kernel_size, self.dilation_rate))
        check_window_fits(self, input_shape, extent, "kernel" if extent == self.kernel_size
                          else "dilated kernel")

    def _make_plan(self, in_shape):
        return self.backend.conv2d_plan(in_shape, self.kernel.shape, self.strides, self.padding,
                                        self.dilation_rate, self.groups)

    def forward(self, call, x, training):
        call.precision = compute_precision(self)   # the dtype policy's
        call.x = x
        call.kernel = self._kernel_for(call)   # (minidl.larq's QuantConv2D convolves another)
        plan = self.batch_plan(call, x)
        z = call.output_buffer("z", plan.out_shape)
        self.backend.conv2d_forward(z, call.x, call.kernel,
                                    self.bias.value if self.use_bias else None, plan, call.precision)
        return self._activate(call, z)

    def backward_reads_output(self):
        # backward reads the input and the kernel; z only to differentiate an activation (a
        # subclass's own call or convolution_op: its tape may read anything it made)
        return self.uses_call() or callable(self._activation) or self._activation != "linear"

    def _kernel_for(self, call):
        """The kernel this call convolves with (a quantized layer's is another tensor)."""
        return self.kernel.value

    def backward_preactivation(self, call, dz):
        b = self.backend
        precision = backward_precision(call.precision)
        if self.trainable:
            b.conv2d_backward_filter(call.grad(self.kernel),
                                     call.grad(self.bias) if self.use_bias else None,
                                     dz, call.x, call.plan, precision)
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", call.plan.in_shape)
        b.conv2d_backward_data(dx, dz, call.kernel, call.plan, precision)
        return dx


def _window(in_shape, kernel, strides, padding, out_channels, dilation=(1, 1)):
    from ..backends.base import make_window
    return make_window(in_shape, kernel, strides, padding, out_channels, dilation)


class ZeroPadding2D(Layer):
    """Pads rows and columns with zeros: padding = int, (rows, cols) or ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.padding = self._normalize(padding)

    def _normalize(self, padding, what="padding"):
        def ok(v):
            return isinstance(v, int) and not isinstance(v, bool) and v >= 0
        if ok(padding):
            return ((padding, padding), (padding, padding))
        try:
            a, b = padding
            if ok(a) and ok(b):
                return ((a, a), (b, b))
            (t, bo), (le, r) = a, b
            if all(ok(v) for v in (t, bo, le, r)):
                return ((t, bo), (le, r))
        except (TypeError, ValueError):
            pass
        raise ValueError(f"{self.describe()}: {what} must be an int >= 0, a pair of them or "
                         f"((top, bottom), (left, right)), got {padding!r}")

    def get_config(self):
        return dict(super().get_config(), padding=[list(p) for p in self.padding])

    @property
    def pads(self):
        (t, b), (le, r) = self.padding
        return (t, b, le, r)

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")

    def compute_output_shape(self, input_shape):
        h, w, c = input_shape
        t, b, le, r = self.pads
        return (None if h is None else h + t + b, None if w is None else w + le + r, c)

    def forward(self, call, x, training):
        out = call.buffer("out", self.batch_output_shape(call, x))
        self.backend.pad2d_forward(out, x, self.pads)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", self.batch_input_shape(call, dout))
        self.backend.pad2d_backward(dx, dout, self.pads)
        return dx
