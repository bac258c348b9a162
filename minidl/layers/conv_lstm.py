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

from .. import activations, constraints, initializers, regularizers
from ..arguments import int_tuple
from .base import Layer, format_shape
from .calls import run_backward, run_forward
from .conv1d import check_channels_last, normalize_single
from .conv3d import Conv3D
from .pooling3d import normalize_triple
from .recurrent import _UnitForgetBias, Recurrent


class _ConvLSTM(Layer):
    rank = 2
    # the functions, as Keras; the kernels read the names in _activation (activations.py)
    activation = activations.ActivationAttribute("tanh")
    recurrent_activation = activations.ActivationAttribute("sigmoid")

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
        if self.rank == 3:
            return normalize_triple(value, argument, self.describe())
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
                    activation=self._activation, recurrent_activation=self._recurrent_activation,
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
        """(T, H, W, C) of a sample (H = 1 for ConvLSTM1D; (T, D, H, W, C) for ConvLSTM3D)."""
        shape = tuple(input_shape)
        if len(shape) != self.rank + 2:
            axes = {1: "width", 2: "rows, cols", 3: "depth, rows, cols"}[self.rank]
            raise ValueError(f"{self.describe()} expects inputs of rank {self.rank + 3} (batch, "
                             f"time, {axes}, channels), got shape {format_shape(input_shape)}")
        if any(d is None for d in shape[1:]):
            raise ValueError(f"{self.describe()}: every dimension but batch and time must be "
                             f"known, got input shape {format_shape(input_shape)}")
        return (shape[0], 1) + shape[1:] if self.rank == 1 else shape

    def _out_size(self, size, k, stride, dilation):
        extent = (k - 1) * dilation + 1
        if self.padding == "same":
            return -(-size // stride)
        return (size - extent) // stride + 1

    def _own_axes(self, values):
        """The Keras-rank part of a lifted tuple (ConvLSTM1D's without its leading 1)."""
        return tuple(values[1:]) if self.rank == 1 else tuple(values)

    def _output_image(self, input_shape):
        """The output's spatial sizes, lifted ((OH, OW), (1, OW) for 1D, (OD, OH, OW))."""
        spatial = self._image_shape(input_shape)[1:-1]
        out = tuple(self._out_size(s, k, st, d) for s, k, st, d in
                    zip(spatial, self.kernel_size, self.strides, self.dilation_rate))
        if min(out) < 1:
            raise ValueError(f"{self.describe()}: kernel_size "
                             f"{self._own_axes(self.kernel_size)} leaves no output for input "
                             f"shape {format_shape(input_shape)}")
        return out

    def build(self, input_shape):
        channels = self._image_shape(input_shape)[-1]
        self._output_image(input_shape)
        k = self._own_axes(self.kernel_size)
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
        image = self._own_axes(self._output_image(input_shape)) + (self.filters,)
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

    # The two convolutions, as hooks: conv2d ops here, Conv3D layers for ConvLSTM3D.
    def _input_conv(self, call, xt, n, steps, training):
        """The input convolution of every step: (T N rows, 4f) pre-activations."""
        b, f = self.backend, self.filters
        x_plan, _ = self._plans(call, n, steps, tuple(b.shape(xt)[1:]))
        gates = call.buffer("gates", (steps * call.rows, 4 * f))
        b.conv2d_forward(b.reshape(gates, x_plan.out_shape), xt, self._kernels()[0],
                         self.bias.value if self.use_bias else None, x_plan)
        return gates

    def _state_conv(self, call, t, h_prev, training):
        """The recurrent convolution of h_{t-1} (N, *out, f): (N rows, 4f)."""
        b, f = self.backend, self.filters
        _, h_plan = call.plans
        rec = call.buffer("step_rec", h_plan.out_shape)
        b.conv2d_forward(rec, h_prev, self._kernels()[1], None, h_plan)
        return b.reshape(rec, (call.rows, 4 * f))

    def _state_conv_backward(self, call, t, dg):
        """dL/dh_{t-1} (N rows, f) through step t's recurrent convolution (t > 0)."""
        b, f = self.backend, self.filters
        _, h_plan = call.plans
        dh_rec = call.buffer("dh_rec", h_plan.in_shape)
        b.conv2d_backward_data(dh_rec, b.reshape(dg, h_plan.out_shape), self._kernels()[1],
                               h_plan)
        return b.reshape(dh_rec, (call.rows, f))

    def _state_kernel_grad(self, call, dgates, n, steps):
        """The recurrent kernel's gradient: one filter gradient over every step's h_{t-1}."""
        b, f = self.backend, self.filters
        rows = call.rows
        all_plan = self._all_steps_plan(call, n, steps, call.out_image)
        previous = call.buffer("previous_states", all_plan.in_shape)
        b.fill(previous, 0.0)
        if steps > 1:   # [0, h_0, .., h_{T-2}]
            b.strided_add(b.reshape(previous, (steps * rows, f)),
                          b.view(call.hseq, ((steps - 1) * rows, f)), rows * f, (f, 1))
        b.conv2d_backward_filter(self._grad(call, self.recurrent_kernel, "unused_drecurrent"),
                                 None, b.reshape(dgates, all_plan.out_shape), previous, all_plan)

    def _input_conv_backward(self, call, dgates):
        """The kernel's and bias's gradients; dL/dxt when the call needs it (else None)."""
        b = self.backend
        x_plan, _ = call.plans
        dgates4 = b.reshape(dgates, x_plan.out_shape)
        b.conv2d_backward_filter(self._grad(call, self.kernel, "unused_dkernel"),
                                 self._grad(call, self.bias, "unused_dbias") if self.use_bias
                                 else None, dgates4, call.xt, x_plan)
        if not call.input_grad_needed:
            return None
        dxt = call.buffer("dxt", b.shape(call.xt))
        b.conv2d_backward_data(dxt, dgates4, self._kernels()[0], x_plan)
        return dxt

    def forward(self, call, x, training):
        if call.mask is not None:
            raise ValueError(f"{self.describe()}: masks are not supported by minidl's ConvLSTM "
                             f"yet")
        b, f = self.backend, self.filters
        shape = b.shape(x)
        n, steps = shape[0], shape[1]
        image = self._image_shape(shape[1:])[1:]
        out_image = self._output_image(shape[1:])
        rows, size_in = n, 1
        for d in out_image:
            rows *= d
        for d in image:
            size_in *= d
        call.x_shape, call.rows, call.out_image = shape, rows, out_image
        # the inputs time-major (T N, *image), reversed for go_backwards
        xt = call.xt = call.buffer("xt", (steps * n,) + image)
        self._gather(b.reshape(xt, (steps, n, size_in)), b.reshape(x, (n, steps, size_in)),
                     steps, n, size_in, self.go_backwards)
        gates = self._input_conv(call, xt, n, steps, training)
        # acts, hseq, cseq: each step's activated gates and states, stored by scatter-adds
        acts = call.acts = call.buffer("acts", (steps * rows, 4 * f))
        hseq = call.hseq = call.buffer("hseq", (steps * rows, f))
        cseq = call.cseq = call.buffer("cseq", (steps * rows, f))
        for seq in (acts, hseq, cseq):
            b.fill(seq, 0.0)
        g = call.buffer("step_gates", (rows, 4 * f))
        h, c = call.buffer("step_h", (rows, f)), call.buffer("step_c", (rows, f))
        c_prev = call.buffer("c_prev", (rows, f))
        b.fill(c_prev, 0.0)
        h_prev = None
        for t in range(steps):
            b.strided_copy(g, gates, t * rows * 4 * f, (4 * f, 1))
            if t > 0:   # h_0 is zero: the first step has no recurrent term
                b.add(g, g, self._state_conv(call, t, h_prev, training))
            b.lstm_gates_forward(h, c, g, c_prev, self._activation, self._recurrent_activation)
            b.strided_add(acts, g, t * rows * 4 * f, (4 * f, 1))
            b.strided_add(hseq, h, t * rows * f, (f, 1))
            b.strided_add(cseq, c, t * rows * f, (f, 1))
            # h_t as the next step's (N, *out, f) input, a tensor of its own per step (the
            # recurrent convolution of a step may keep its input for backward)
            h_prev = call.buffer(("h_prev", t), (n,) + out_image + (f,))
            b.copy(h_prev, b.reshape(h, (n,) + out_image + (f,)))
            b.copy(c_prev, c)
        return self._outputs(call, n, steps, h_prev, c_prev)

    def _outputs(self, call, n, steps, h_last, c_last):
        b = self.backend
        image = self._own_axes(call.out_image) + (self.filters,)
        size = call.rows // n * self.filters
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
        for t in range(steps - 1, -1, -1):
            b.strided_copy(g, call.acts, t * rows * 4 * f, (4 * f, 1))
            b.strided_copy(c, call.cseq, t * rows * f, (f, 1))
            if t > 0:
                b.strided_copy(c_prev, call.cseq, (t - 1) * rows * f, (f, 1))
            else:
                b.fill(c_prev, 0.0)
            b.lstm_gates_backward(dg, dc, dh, dc, g, c, c_prev, self._activation,
                                  self._recurrent_activation)
            b.strided_add(dgates, dg, t * rows * 4 * f, (4 * f, 1))
            if t > 0:
                dh_rec = self._state_conv_backward(call, t, dg)
                b.strided_copy(dh, dhseq, (t - 1) * rows * f, (f, 1))
                b.add(dh, dh, dh_rec)
        self._state_kernel_grad(call, dgates, n, steps)
        dxt = self._input_conv_backward(call, dgates)
        if dxt is None:
            return None
        dx = call.buffer("dx", call.x_shape)
        size_in = 1
        for d in call.x_shape[2:]:
            size_in *= d
        self._gather(b.reshape(dx, (n, steps, size_in)), b.reshape(dxt, (steps, n, size_in)),
                     steps, n, size_in, self.go_backwards, inverse=True)
        return dx

    def _all_steps_plan(self, call, n, steps, out_image):
        """The recurrent convolution's plan over the T N states of the whole sequence."""
        key = (n, steps, out_image)
        if (getattr(call, "all_plan_key", None) != key
                or getattr(call, "all_plan_backend", None) is not self.backend):
            call.all_plan = self.backend.conv2d_plan(
                (steps * n,) + tuple(out_image) + (self.filters,),
                self._lifted(self.recurrent_kernel.shape), (1, 1), "same")
            call.all_plan_key, call.all_plan_backend = key, self.backend
        return call.all_plan


class ConvLSTM1D(_ConvLSTM):
    """Keras ConvLSTM1D: inputs (batch, time, width, channels); kernel (k, C, 4 filters)."""
    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """Keras ConvLSTM2D: inputs (batch, time, rows, cols, channels); kernel (kh, kw, C,
    4 filters), recurrent_kernel (kh, kw, filters, 4 filters), bias (4 filters,)."""
    rank = 2


class ConvLSTM3D(_ConvLSTM):
    """Keras ConvLSTM3D: inputs (batch, time, depth, rows, cols, channels); kernel (kd, kh, kw,
    C, 4 filters). Its two convolutions are Conv3D layers sharing this layer's weights (the
    3-D convolution as depth taps of conv2d, conv3d.py), each run on a child of the call's
    context: the input one over the T N volumes, the recurrent one per step (a child per
    step, whose kernel gradients add up)."""
    rank = 3

    def build(self, input_shape):
        super().build(input_shape)
        f = self.filters
        names = (f"{self.name}_input_conv", f"{self.name}_recurrent_conv")
        self._convs = (
            Conv3D(4 * f, self.kernel_size, self.strides, self.padding,
                   dilation_rate=self.dilation_rate, use_bias=self.use_bias, name=names[0]),
            Conv3D(4 * f, self.kernel_size, padding="same", use_bias=False, name=names[1]))
        x_conv, h_conv = self._convs
        x_conv.kernel, h_conv.kernel = self.kernel, self.recurrent_kernel
        if self.use_bias:
            x_conv.bias = self.bias
        x_conv.input_shape = self._image_shape(input_shape)[1:]
        h_conv.input_shape = self._output_image(input_shape) + (f,)
        for conv in self._convs:
            conv.built = True

    def _run_conv(self, call, key, conv, x, training, input_grad_needed):
        conv.backend, conv.trainable = self.backend, self.trainable
        inner = call.child(key, conv)
        inner.input_grad_needed, inner.mask = input_grad_needed, None
        return run_forward(conv, inner, x, training)

    def _input_conv(self, call, xt, n, steps, training):
        z = self._run_conv(call, "input_conv", self._convs[0], xt, training,
                           call.input_grad_needed)
        return self.backend.reshape(z, (steps * call.rows, 4 * self.filters))

    def _state_conv(self, call, t, h_prev, training):
        rec = self._run_conv(call, ("recurrent_conv", t), self._convs[1], h_prev, training, True)
        return self.backend.reshape(rec, (call.rows, 4 * self.filters))

    def _state_conv_backward(self, call, t, dg):
        # the first backward of the recurrent convolution (the last step) sets its kernel's
        # gradient (or adds to it when this call accumulates), the others add to it
        steps = call.x_shape[1]
        inner = call.children[("recurrent_conv", t)]
        shape = (call.x_shape[0],) + tuple(call.out_image) + (4 * self.filters,)
        dh = run_backward(self._convs[1], inner, self.backend.reshape(dg, shape),
                          accumulate=call.accumulating or t < steps - 1)
        return self.backend.reshape(dh, (call.rows, self.filters))

    def _state_kernel_grad(self, call, dgates, n, steps):
        if steps == 1 and self.trainable:   # no step ran the recurrent convolution
            self.backend.fill(call.grad(self.recurrent_kernel), 0.0)

    def _input_conv_backward(self, call, dgates):
        inner = call.children["input_conv"]
        shape = (call.x_shape[1] * call.x_shape[0],) + tuple(call.out_image) + (
            4 * self.filters,)
        return run_backward(self._convs[0], inner, self.backend.reshape(dgates, shape),
                            accumulate=call.accumulating)


__all__ = ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]
