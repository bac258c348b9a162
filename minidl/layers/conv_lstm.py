"""ConvLSTM1D and ConvLSTM2D (Keras 3's arguments, weights and layouts) on backend conv ops.

An LSTM whose input and recurrent projections are convolutions: x_t (H, W, C) is convolved
with kernel (kh, kw, C, 4f) (strides, padding, dilation_rate as given), h_{t-1} (OH, OW, f)
with recurrent_kernel (kh, kw, f, 4f) (strides 1, padding "same", as Keras), and the gates
i, f, c, o of every pixel are the fused LSTM gate op's rows: a (N, OH, OW, 4f) tensor viewed
(N OH OW, 4f) is exactly lstm_gates_forward's (rows, 4 units) layout.

The call works time-major as the recurrent layers do (recurrent.py): x (N, T, ...) is gathered
to (T N, H, W, C) by one strided copy (reversed for go_backwards), the input convolution of
every step is one conv2d_forward over T N images, then per step one recurrent conv2d_forward
and one gate op; backward through time per step one gate op and one conv2d_backward_data, and
the recurrent kernel's gradient is one conv2d_backward_filter over every step's h_{t-1}.
ConvLSTM1D is ConvLSTM2D on images of height 1 (its weights viewed with a leading 1).
"""

from .. import constraints, initializers, regularizers
from ..arguments import int_tuple
from .base import Layer, format_shape
from .conv1d import check_channels_last, normalize_single
from .recurrent import _UnitForgetBias, Recurrent


class _ConvLSTM(Layer):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, name=None,
                 trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        owner = self.describe()
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"{owner}: filters must be a positive int, got {filters!r}")
        check_channels_last(data_format, owner)
        if padding not in ("valid", "same"):
            raise ValueError(f"{owner}: padding must be 'valid' or 'same', got {padding!r}")
        self.filters, self.padding = filters, padding
        self.kernel_size = self._tuple(kernel_size, "kernel_size")
        self.strides = self._tuple(strides, "strides")
        self.dilation_rate = self._tuple(dilation_rate, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{owner}: strides > 1 and dilation_rate > 1 cannot be combined "
                             f"(as in Keras), got strides={strides!r}, "
                             f"dilation_rate={dilation_rate!r}")
        self.activation = Recurrent._gate_activation(self, "activation", activation)
        self.recurrent_activation = Recurrent._gate_activation(self, "recurrent_activation",
                                                               recurrent_activation)
        self.use_bias, self.unit_forget_bias = bool(use_bias), bool(unit_forget_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint,
                                 bias_constraint)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        for argument, value in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if value:
                raise ValueError(f"{owner}: {argument} is not supported by minidl's ConvLSTM yet "
                                 f"(got {value!r})")
        if stateful:
            raise ValueError(f"{owner}: stateful=True is not supported by minidl's ConvLSTM yet")
        self.dropout, self.recurrent_dropout, self.seed = 0.0, 0.0, seed
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), False

    def _tuple(self, value, argument):
        if self.rank == 1:
            return (1, normalize_single(value, argument, self.describe()))
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value, value)
        values = int_tuple(value, argument, self.describe())
        if len(values) != 2:
            raise ValueError(f"{self.describe()}: {argument} must be an int or a tuple of 2 ints, "
                             f"got {value!r}")
        return values

    def _keras_tuple(self, pair):
        return [pair[1]] if self.rank == 1 else list(pair)

    def get_config(self):
        return dict(super().get_config(), filters=self.filters,
                    kernel_size=self._keras_tuple(self.kernel_size),
                    strides=self._keras_tuple(self.strides), padding=self.padding,
                    data_format="channels_last",
                    dilation_rate=self._keras_tuple(self.dilation_rate),
                    activation=self.activation, recurrent_activation=self.recurrent_activation,
                    use_bias=self.use_bias, kernel_initializer=str(self.kernel_initializer),
                    recurrent_initializer=str(self.recurrent_initializer),
                    bias_initializer=str(self.bias_initializer),
                    unit_forget_bias=self.unit_forget_bias,
                    recurrent_regularizer=regularizers.serialize(self.recurrent_regularizer),
                    recurrent_constraint=constraints.serialize(self.recurrent_constraint),
                    dropout=0.0, recurrent_dropout=0.0, seed=self.seed,
                    return_sequences=self.return_sequences, return_state=self.return_state,
                    go_backwards=self.go_backwards, stateful=False,
                    **self._weight_options_config())

    # ------------------------------------------------------------ shapes
    def _image_shape(self, input_shape):
        """(T, H, W, C) of a sample (H = 1 for ConvLSTM1D)."""
        shape = tuple(input_shape)
        if len(shape) != self.rank + 2:
            raise ValueError(f"{self.describe()} expects inputs of rank {self.rank + 3} (batch, "
                             f"time, {'width' if self.rank == 1 else 'rows, cols'}, channels), "
                             f"got shape {format_shape(input_shape)}")
        if any(d is None for d in shape[1:]):
            raise ValueError(f"{self.describe()}: every dimension but batch and time must be "
                             f"known, got input shape {format_shape(input_shape)}")
        return (shape[0], 1) + shape[1:] if self.rank == 1 else shape

    def _out_size(self, size, k, stride, dilation):
        extent = (k - 1) * dilation + 1
        if self.padding == "same":
            return -(-size // stride)
        return (size - extent) // stride + 1

    def _output_image(self, input_shape):
        _, h, w, _ = self._image_shape(input_shape)
        oh, ow = (self._out_size(s, k, st, d) for s, k, st, d in
                  zip((h, w), self.kernel_size, self.strides, self.dilation_rate))
        if oh < 1 or ow < 1:
            raise ValueError(f"{self.describe()}: kernel_size {self.kernel_size[2 - self.rank:]} "
                             f"leaves no output for input shape {format_shape(input_shape)}")
        return oh, ow

    def build(self, input_shape):
        _, _, _, channels = self._image_shape(input_shape)
        self._output_image(input_shape)
        k = tuple(self.kernel_size[2 - self.rank:])
        f = self.filters
        self.kernel = self.add_weight("kernel", k + (channels, 4 * f), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", k + (f, 4 * f), self.recurrent_initializer,
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        if self.use_bias:
            base = initializers.get(self.bias_initializer)
            init = _UnitForgetBias(base, f) if self.unit_forget_bias else base
            self.bias = self.add_weight("bias", (4 * f,), init, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def compute_output_shape(self, input_shape):
        steps = input_shape[0]
        oh, ow = self._output_image(input_shape)
        image = (ow, self.filters) if self.rank == 1 else (oh, ow, self.filters)
        out = (steps,) + image if self.return_sequences else image
        return [out, image, image] if self.return_state else out

    # ----------------------------------------------------------- compute
    def _kernels(self):
        """The kernels as conv2d's (kh, kw, C, 4f) (ConvLSTM1D's viewed with kh = 1)."""
        b = self.backend
        return [b.reshape(w.value, self._lifted(w.shape)) for w in
                (self.kernel, self.recurrent_kernel)]

    def _lifted(self, shape):
        return (1,) + tuple(shape) if self.rank == 1 else tuple(shape)

    def _plans(self, call, n, steps, image):
        """(input conv plan over T N images, recurrent conv plan over N states), per shape."""
        key = (n, steps, image)
        if (getattr(call, "plans_key", None) != key
                or getattr(call, "plans_backend", None) is not self.backend):
            b, f = self.backend, self.filters
            kernel, recurrent = (self._lifted(w.shape) for w in
                                 (self.kernel, self.recurrent_kernel))
            x_plan = b.conv2d_plan((steps * n,) + image, kernel, self.strides, self.padding,
                                   self.dilation_rate)
            _, oh, ow, _ = x_plan.out_shape
            h_plan = b.conv2d_plan((n, oh, ow, f), recurrent, (1, 1), "same")
            call.plans, call.plans_key, call.plans_backend = (x_plan, h_plan), key, self.backend
        return call.plans

    def _gather(self, out, x, steps, n, width, backwards, inverse=False):
        Recurrent._gather(self, out, x, steps, n, width, backwards, inverse)

    def forward(self, call, x, training):
        if call.mask is not None:
            raise ValueError(f"{self.describe()}: masks are not supported by minidl's ConvLSTM "
                             f"yet")
        b, f = self.backend, self.filters
        shape = b.shape(x)
        n, steps = shape[0], shape[1]
        image = self._image_shape(shape[1:])[1:]
        x_plan, h_plan = self._plans(call, n, steps, image)
        _, oh, ow, _ = x_plan.out_shape
        rows, size_in = n * oh * ow, image[0] * image[1] * image[2]
        call.x_shape, call.rows, call.out_image = shape, rows, (oh, ow)
        # the inputs time-major (T N, H, W, C), reversed for go_backwards
        xt = call.xt = call.buffer("xt", (steps * n,) + image)
        self._gather(b.reshape(xt, (steps, n, size_in)), b.reshape(x, (n, steps, size_in)),
                     steps, n, size_in, self.go_backwards)
        kernel, recurrent = self._kernels()
        gates = call.buffer("gates", (steps * rows, 4 * f))   # x_t's conv, pixel rows
        b.conv2d_forward(b.reshape(gates, (steps * n, oh, ow, 4 * f)), xt, kernel,
                         self.bias.value if self.use_bias else None, x_plan)
        # acts, hseq, cseq: each step's activated gates and states, stored by scatter-adds
        acts = call.acts = call.buffer("acts", (steps * rows, 4 * f))
        hseq = call.hseq = call.buffer("hseq", (steps * rows, f))
        cseq = call.cseq = call.buffer("cseq", (steps * rows, f))
        for seq in (acts, hseq, cseq):
            b.fill(seq, 0.0)
        g = call.buffer("step_gates", (rows, 4 * f))
        rec = call.buffer("step_rec", (n, oh, ow, 4 * f))
        h, c = call.buffer("step_h", (rows, f)), call.buffer("step_c", (rows, f))
        h_prev, c_prev = call.buffer("h_prev", (n, oh, ow, f)), call.buffer("c_prev", (rows, f))
        b.fill(h_prev, 0.0)
        b.fill(c_prev, 0.0)
        for t in range(steps):
            b.strided_copy(g, gates, t * rows * 4 * f, (4 * f, 1))
            b.conv2d_forward(rec, h_prev, recurrent, None, h_plan)
            b.add(g, g, b.reshape(rec, (rows, 4 * f)))
            b.lstm_gates_forward(h, c, g, c_prev, self.activation, self.recurrent_activation)
            b.strided_add(acts, g, t * rows * 4 * f, (4 * f, 1))
            b.strided_add(hseq, h, t * rows * f, (f, 1))
            b.strided_add(cseq, c, t * rows * f, (f, 1))
            b.copy(h_prev, b.reshape(h, (n, oh, ow, f)))
            b.copy(c_prev, c)
        return self._outputs(call, n, steps, oh, ow, h_prev, c_prev)

    def _out_image(self, oh, ow):
        return (ow, self.filters) if self.rank == 1 else (oh, ow, self.filters)

    def _outputs(self, call, n, steps, oh, ow, h_last, c_last):
        b, image = self.backend, self._out_image(oh, ow)
        size = oh * ow * self.filters
        if self.return_sequences:
            out = call.buffer("out", (n, steps) + image)
            b.strided_copy(b.reshape(out, (n, steps, size)), call.hseq, 0,
                           (size, n * size, 1))
        else:
            out = b.reshape(h_last, (n,) + image)
        if not self.return_state:
            return out
        h = call.buffer("state_h", (n,) + image)
        b.copy(b.reshape(h, (n, size)), b.reshape(h_last, (n, size)))
        c = b.reshape(c_last, (n,) + image)
        return [out, h, c]

    def _grad(self, call, weight, name):
        """Where a weight's gradient goes, viewed as conv2d's (a scratch when frozen)."""
        target = call.grad(weight) if self.trainable else call.buffer(name, weight.shape)
        if len(weight.shape) == 1:
            return target
        return self.backend.reshape(target, self._lifted(weight.shape))

    def backward(self, call, dout):
        b, f = self.backend, self.filters
        n, steps = call.x_shape[0], call.x_shape[1]
        x_plan, h_plan = call.plans
        oh, ow = call.out_image
        rows, size = call.rows, call.rows // n * f
        dstates = [None, None]
        if self.return_state:
            dout, dstates = dout[0], list(dout[1:])
        dhseq = call.buffer("dhseq", (steps * rows, f))
        if self.return_sequences:
            b.strided_copy(b.reshape(dhseq, (steps, n, size)), b.reshape(dout, (n, steps, size)),
                           0, (size, steps * size, 1))
        else:
            b.fill(dhseq, 0.0)
            b.strided_add(dhseq, b.reshape(dout, (rows, f)), (steps - 1) * rows * f, (f, 1))
        if dstates[0] is not None:
            b.strided_add(dhseq, b.reshape(dstates[0], (rows, f)), (steps - 1) * rows * f, (f, 1))
        kernel, recurrent = self._kernels()
        dgates = call.buffer("dgates", (steps * rows, 4 * f))
        b.fill(dgates, 0.0)
        dh, dc = call.buffer("dh", (rows, f)), call.buffer("dc", (rows, f))
        b.strided_copy(dh, dhseq, (steps - 1) * rows * f, (f, 1))
        if dstates[1] is None:
            b.fill(dc, 0.0)
        else:
            b.copy(dc, b.reshape(dstates[1], (rows, f)))
        g, dg = call.buffer("step_gates", (rows, 4 * f)), call.buffer("step_dgates", (rows, 4 * f))
        c, c_prev = call.buffer("step_c", (rows, f)), call.buffer("c_prev", (rows, f))
        dh_rec = call.buffer("dh_rec", (n, oh, ow, f))
        for t in range(steps - 1, -1, -1):
            b.strided_copy(g, call.acts, t * rows * 4 * f, (4 * f, 1))
            b.strided_copy(c, call.cseq, t * rows * f, (f, 1))
            if t > 0:
                b.strided_copy(c_prev, call.cseq, (t - 1) * rows * f, (f, 1))
            else:
                b.fill(c_prev, 0.0)
            b.lstm_gates_backward(dg, dc, dh, dc, g, c, c_prev, self.activation,
                                  self.recurrent_activation)
            b.strided_add(dgates, dg, t * rows * 4 * f, (4 * f, 1))
            if t > 0:
                b.conv2d_backward_data(dh_rec, b.reshape(dg, (n, oh, ow, 4 * f)), recurrent,
                                       h_plan)
                b.strided_copy(dh, dhseq, (t - 1) * rows * f, (f, 1))
                b.add(dh, dh, b.reshape(dh_rec, (rows, f)))
        # the recurrent kernel's gradient: one filter gradient over every step's h_{t-1}
        previous = call.buffer("previous_states", (steps * n, oh, ow, f))
        b.fill(previous, 0.0)
        if steps > 1:   # [0, h_0, .., h_{T-2}]
            b.strided_add(b.reshape(previous, (steps * rows, f)),
                          b.view(call.hseq, ((steps - 1) * rows, f)), rows * f, (f, 1))
        all_plan = self._all_steps_plan(call, n, steps, oh, ow)
        dgates4 = b.reshape(dgates, (steps * n, oh, ow, 4 * f))
        b.conv2d_backward_filter(self._grad(call, self.recurrent_kernel, "unused_drecurrent"),
                                 None, dgates4, previous, all_plan)
        b.conv2d_backward_filter(self._grad(call, self.kernel, "unused_dkernel"),
                                 self._grad(call, self.bias, "unused_dbias") if self.use_bias
                                 else None, dgates4, call.xt, x_plan)
        if not call.input_grad_needed:
            return None
        dxt = call.buffer("dxt", b.shape(call.xt))
        b.conv2d_backward_data(dxt, dgates4, kernel, x_plan)
        dx = call.buffer("dx", call.x_shape)
        size_in = 1
        for d in call.x_shape[2:]:
            size_in *= d
        self._gather(b.reshape(dx, (n, steps, size_in)), b.reshape(dxt, (steps, n, size_in)),
                     steps, n, size_in, self.go_backwards, inverse=True)
        return dx

    def _all_steps_plan(self, call, n, steps, oh, ow):
        """The recurrent convolution's plan over the T N states of the whole sequence."""
        key = (n, steps, oh, ow)
        if (getattr(call, "all_plan_key", None) != key
                or getattr(call, "all_plan_backend", None) is not self.backend):
            call.all_plan = self.backend.conv2d_plan(
                (steps * n, oh, ow, self.filters), self._lifted(self.recurrent_kernel.shape),
                (1, 1), "same")
            call.all_plan_key, call.all_plan_backend = key, self.backend
        return call.all_plan


class ConvLSTM1D(_ConvLSTM):
    """Keras ConvLSTM1D: inputs (batch, time, width, channels); kernel (k, C, 4 filters)."""
    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """Keras ConvLSTM2D: inputs (batch, time, rows, cols, channels); kernel (kh, kw, C,
    4 filters), recurrent_kernel (kh, kw, filters, 4 filters), bias (4 filters,)."""
    rank = 2


__all__ = ["ConvLSTM1D", "ConvLSTM2D"]
