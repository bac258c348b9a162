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
ConvLSTM1D is ConvLSTM2D on images of height 1 (its weights viewed with a leading 1);
ConvLSTM3D (conv_lstm3d.py) runs its two convolutions as Conv3D layers.

Keras's options: a mask (N, T) or (N, T, *out) keeps the states of the skipped rows
(conv_lstm_masks.py); dropout and recurrent_dropout make the convolution of their input a
grouped one over the input tiled per gate (conv_lstm_dropout.py); initial_state=[h0, c0]
starts a call from given states, further inputs of the call (their gradients come back), and
stateful=True from the states the last one left (the layer keeps them, as Keras's state
variables): conv_lstm_states.py. unroll is accepted (Keras passes it to its RNN; the loop
here is the same either way).
"""

import math

from .. import activations, constraints, initializers, regularizers
from ..arguments import int_tuple, number
from . import conv_lstm_dropout as gate_dropout
from . import conv_lstm_masks as masks
from . import conv_lstm_states as initial
from . import custom_call
from .base import KerasTensor, Layer, eager_call, format_shape
from .conv1d import check_channels_last, normalize_single
from .pooling3d import normalize_triple
from .recurrent import _UnitForgetBias, Recurrent


class _ConvLSTM(Layer):
    rank = 2
    # the functions, as Keras; the kernels read the names in _activation (activations.py)
    activation = activations.ActivationAttribute("tanh")
    recurrent_activation = activations.ActivationAttribute("sigmoid")
    supports_masking = True
    needs_step_seed = True   # dropout draws its per-sequence gate masks in training
    # the recurrent convolution's input must stay as it was for the backward of each step
    # (ConvLSTM3D's Conv3D children keep it): a tensor per step, else one reused
    keeps_state_inputs = False
    state_count = 2   # [h, c]: initial_state takes them, return_state returns them
    keras_weights_in_cell = True   # Keras's files hold them under the layer's cell/

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 name=None, trainable=True, zero_output_for_mask=False):
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
        self.dropout = number(dropout, "dropout", owner, low=0, high=1, high_inclusive=False)
        self.recurrent_dropout = number(recurrent_dropout, "recurrent_dropout", owner, low=0,
                                        high=1, high_inclusive=False)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"{owner}: seed must be None or an int >= 0, got {seed!r}")
        self.seed, self.step_seed = seed, 0
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        # Keras's RNN(unroll=): a graph-size option there; the loop here is the same
        self.unroll = bool(unroll)
        # Keras's RNN(zero_output_for_mask=): a masked step outputs 0, not the last output
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self._states = None   # a stateful layer's [h, c], carried from call to call

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
                    dropout=self.dropout, recurrent_dropout=self.recurrent_dropout,
                    seed=self.seed, return_sequences=self.return_sequences,
                    return_state=self.return_state, go_backwards=self.go_backwards,
                    stateful=self.stateful, unroll=self.unroll,
                    zero_output_for_mask=self.zero_output_for_mask,
                    **self._weight_options_config())

    # ------------------------------------------------------------- calls
    def __call__(self, inputs, training=None, initial_state=None, mask=None):
        """Keras's call. initial_state=[h0, c0], each (batch, *output spatial sizes, filters),
        makes the states further inputs of the call (of its node in a model). mask= (N, T)
        or (N, T, *output spatial sizes), True where a step is real, is taken by hand on
        arrays and on Tensors inside a custom layer's call (in a model the mask comes from
        the layer before: Masking)."""
        if initial_state is not None:
            if self.built and not self.multiple_inputs:
                raise ValueError(f"{self.describe()} was called without initial_state before; "
                                 f"a layer takes its states always or never (make another "
                                 f"layer for the other calls)")
            self.multiple_inputs = True
            inputs = [inputs] + initial.given_states(self, initial_state)
        elif self.multiple_inputs:
            raise ValueError(f"{self.describe()} was called with initial_state before; pass it "
                             f"again")
        if mask is None:
            return super().__call__(inputs, training=training)
        tensors = inputs if isinstance(inputs, list) else [inputs]
        if any(isinstance(t, KerasTensor) for t in tensors) or isinstance(mask, KerasTensor):
            raise ValueError(f"{self.describe()}: mask= is not taken on symbolic tensors; in a "
                             f"model the mask reaches the layer from Masking before it")
        if self.return_state and custom_call.is_eager(inputs):
            raise ValueError(f"{self.describe()}: return_state=True works in models and eager "
                             f"calls on arrays; inside another layer's call use "
                             f"return_sequences and take the last step")
        if custom_call.is_eager(inputs):
            return custom_call.call_eagerly(self, inputs, training, {}, mask)
        return eager_call(self, inputs, training, None, mask)

    # Keras's compute_mask and the model's mask plan, as LSTM's
    output_has_mask = Recurrent.output_has_mask
    compute_mask = Recurrent.compute_mask
    # a model file's node of three inputs is a call with initial_state
    accept_node_inputs = Recurrent.accept_node_inputs

    # ------------------------------------------------------------ states
    # layer.states ([h, c] as numpy arrays (batch, *out, filters), None unless stateful) and
    # reset_states() / reset_state(), as LSTM's
    states = Recurrent.states
    reset_states = Recurrent.reset_states
    reset_state = Recurrent.reset_states

    def _initial_states(self, call, n, given=None):
        """The call's (h0 (N, *out, f), c0 (rows, f)): zeros, the given initial_state, or a
        stateful layer's kept states (conv_lstm_states.py)."""
        return initial.initial_states(self, call, n, given)

    def _keep_states(self, h_last, c_last):
        initial.keep_states(self, h_last, c_last)

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

    def _sequence_shape(self, input_shape):
        """The sequence's sample shape of a build's input_shape (with initial_state, the
        first of [sequence, h0, c0])."""
        return input_shape[0] if self.multiple_inputs else input_shape

    def build(self, input_shape):
        if self.multiple_inputs:
            initial.check_state_shapes(self, input_shape[0], input_shape[1:])
            input_shape = input_shape[0]
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
        input_shape = self._sequence_shape(input_shape)
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

    def _plan(self, call, role, in_shape, weight, strides, padding, dilation=(1, 1), groups=1):
        """The call's conv2d plan for one convolution (`role`) of `weight` on inputs of
        `in_shape`, made again only when that shape changes."""
        held = getattr(call, "conv_plans", None)
        if held is None or held[0] is not self.backend:
            held = call.conv_plans = (self.backend, {})
        key = (tuple(in_shape), groups)
        entry = held[1].get(role)
        if entry is None or entry[0] != key:
            entry = held[1][role] = (key, self.backend.conv2d_plan(
                tuple(in_shape), self._lifted(weight.shape), strides, padding, dilation, groups))
        return entry[1]

    def _input_plan(self, call):
        """The input convolution's plan over the T N images (grouped with dropout)."""
        return self._plan(call, "input", self.backend.shape(call.x_in), self.kernel,
                          self.strides, self.padding, self.dilation_rate, call.input_groups)

    def _state_plan(self, call, lead):
        """The recurrent convolution's plan over `lead` N states (N: one step, T N: all)."""
        shape = (lead * call.x_shape[0],) + tuple(call.out_image) + (
            self.filters * call.state_groups,)
        return self._plan(call, ("state", lead), shape, self.recurrent_kernel, (1, 1), "same",
                          groups=call.state_groups)

    def _gather(self, out, x, steps, n, width, backwards, inverse=False):
        Recurrent._gather(self, out, x, steps, n, width, backwards, inverse)

    # The two convolutions, as hooks: conv2d ops here, Conv3D layers for ConvLSTM3D. With
    # dropout their inputs are tiled per gate and they run with groups=4.
    def _input_conv(self, call, x_in, n, steps, training):
        """The input convolution of every step: (T N rows, 4f) pre-activations."""
        b, f = self.backend, self.filters
        plan = self._input_plan(call)
        gates = call.buffer("gates", (steps * call.rows, 4 * f))
        b.conv2d_forward(b.reshape(gates, plan.out_shape), x_in, self._kernels()[0],
                         self.bias.value if self.use_bias else None, plan)
        return gates

    def _state_conv(self, call, t, h_in, training):
        """The recurrent convolution of step t's input (N, *out, f, or 4f tiled): (N rows,
        4f)."""
        b, f = self.backend, self.filters
        plan = self._state_plan(call, 1)
        rec = call.buffer("step_rec", plan.out_shape)
        b.conv2d_forward(rec, h_in, self._kernels()[1], None, plan)
        return b.reshape(rec, (call.rows, 4 * f))

    def _state_conv_backward(self, call, t, dg):
        """dL/d(step t's recurrent convolution input) (N rows, f or 4f)."""
        b, f = self.backend, self.filters
        plan = self._state_plan(call, 1)
        dh_in = call.buffer("dh_in", plan.in_shape)
        b.conv2d_backward_data(dh_in, b.reshape(dg, plan.out_shape), self._kernels()[1], plan)
        return b.reshape(dh_in, (call.rows, f * call.state_groups))

    def _state_kernel_grad(self, call, dgates, n, steps):
        """The recurrent kernel's gradient: one filter gradient over every step's h_{t-1}
        (h0 at the first step: zero unless stateful, dropped per gate with recurrent_dropout)."""
        b, f = self.backend, self.filters
        rows = call.rows
        shape = (steps * n,) + tuple(call.out_image) + (f,)
        previous = call.buffer("previous_states", shape)
        b.fill(previous, 0.0)
        flat = b.reshape(previous, (steps * rows, f))
        if call.first_recurrent == 0:
            b.strided_add(flat, call.h0_rows, 0, (f, 1))
        if steps > 1:   # [h0, h_0, .., h_{T-2}]
            b.strided_add(flat, b.view(call.hseq, ((steps - 1) * rows, f)), rows * f, (f, 1))
        if call.state_drop is not None:
            dropped = call.buffer("previous_dropped", shape[:-1] + (4 * f,))
            gate_dropout.tile_dropped(b, dropped, previous, call.state_drop, steps, f)
            previous = dropped
        plan = self._state_plan(call, steps)
        b.conv2d_backward_filter(self._grad(call, self.recurrent_kernel, "unused_drecurrent"),
                                 None, b.reshape(dgates, plan.out_shape), previous, plan)

    def _input_conv_backward(self, call, dgates):
        """The kernel's and bias's gradients; dL/d(the convolution's input) when the call
        needs dL/dx (else None)."""
        b = self.backend
        plan = self._input_plan(call)
        dgates4 = b.reshape(dgates, plan.out_shape)
        b.conv2d_backward_filter(self._grad(call, self.kernel, "unused_dkernel"),
                                 self._grad(call, self.bias, "unused_dbias") if self.use_bias
                                 else None, dgates4, call.x_in, plan)
        if not call.input_grad_needed:
            return None
        dx_in = call.buffer("dx_in", b.shape(call.x_in))
        b.conv2d_backward_data(dx_in, dgates4, self._kernels()[0], plan)
        return dx_in

    # ------------------------------------------------------- the sequence
    def _draw_dropout(self, call, n, image, training):
        """The call's gate masks: call.input_drop on the inputs (N, S * 4C), call.state_drop
        on h_{t-1} (N, P * 4f), or None; seeded as LSTM's (recurrent.py)."""
        f = self.filters
        call.input_drop = call.state_drop = None
        if training and self.dropout:
            call.input_drop = self._gate_masks(call, "input", n, math.prod(image[:-1]),
                                               image[-1], self.dropout, call.step_seed)
        if training and self.recurrent_dropout:
            call.state_drop = self._gate_masks(call, "state", n, call.rows // n, f,
                                               self.recurrent_dropout,
                                               (call.step_seed * 2 + 1) % (1 << 62))
        call.input_groups = 1 if call.input_drop is None else 4
        call.state_groups = 1 if call.state_drop is None else 4

    def _gate_masks(self, call, role, n, positions, channels, rate, seed):
        return gate_dropout.draw_gate_masks(self.backend, call, role, n, positions, channels,
                                            rate, seed)

    def _state_input(self, call, t, h_prev):
        """Step t's recurrent convolution input: h_{t-1}, or tiled and dropped per gate."""
        if call.state_drop is None:
            return h_prev
        b, f = self.backend, self.filters
        role = ("h_dropped", t) if self.keeps_state_inputs else "h_dropped"
        h_in = call.buffer(role, b.shape(h_prev)[:-1] + (4 * f,))
        gate_dropout.tile_dropped(b, h_in, h_prev, call.state_drop, 1, f)
        return h_in

    def forward(self, call, x, training):
        b, f = self.backend, self.filters
        given = None
        if self.multiple_inputs:   # [sequence, h0, c0]
            x, given = x[0], list(x[1:])
        shape = b.shape(x)
        n, steps = shape[0], shape[1]
        if steps < 1:
            raise ValueError(f"{self.describe()}: inputs need at least one timestep, got shape "
                             f"{format_shape(shape)}")
        image = self._image_shape(shape[1:])[1:]
        out_image = self._output_image(shape[1:])
        rows = n * math.prod(out_image)
        size_in = math.prod(image)
        call.x_shape, call.rows, call.out_image = shape, rows, out_image
        call.backwards = self.go_backwards
        call.step_mask, call.output_factor = masks.step_masks(self, call, n, steps)
        self._draw_dropout(call, n, image, training)
        # the inputs time-major (T N, *image), reversed for go_backwards
        xt = call.xt = call.buffer("xt", (steps * n,) + image)
        self._gather(b.reshape(xt, (steps, n, size_in)), b.reshape(x, (n, steps, size_in)),
                     steps, n, size_in, self.go_backwards)
        call.x_in = xt
        if call.input_drop is not None:
            call.x_in = call.buffer("xt_dropped", (steps * n,) + image[:-1] + (4 * image[-1],))
            gate_dropout.tile_dropped(b, call.x_in, xt, call.input_drop, steps, image[-1])
        gates = self._input_conv(call, call.x_in, n, steps, training)
        # acts, hseq, cseq: each step's activated gates and states, stored by scatter-adds
        acts = call.acts = call.buffer("acts", (steps * rows, 4 * f))
        hseq = call.hseq = call.buffer("hseq", (steps * rows, f))
        cseq = call.cseq = call.buffer("cseq", (steps * rows, f))
        for seq in (acts, hseq, cseq):
            b.fill(seq, 0.0)
        g = call.buffer("step_gates", (rows, 4 * f))
        h, c = call.buffer("step_h", (rows, f)), call.buffer("step_c", (rows, f))
        h_prev, c0 = self._initial_states(call, n, given)
        call.h0_rows, call.c0 = b.reshape(h_prev, (rows, f)), c0
        c_prev = call.buffer("c_prev", (rows, f))
        b.copy(c_prev, c0)
        for t in range(steps):
            b.strided_copy(g, gates, t * rows * 4 * f, (4 * f, 1))
            if t >= call.first_recurrent:
                b.add(g, g, self._state_conv(call, t, self._state_input(call, t, h_prev),
                                             training))
            b.lstm_gates_forward(h, c, g, c_prev, self._activation, self._recurrent_activation)
            if call.step_mask is not None:   # a skipped row keeps its states
                m = masks.mask_at(b, call, call.step_mask, t)
                masks.keep_skipped(b, h, m, h_prev)
                masks.keep_skipped(b, c, m, c_prev)
            b.strided_add(acts, g, t * rows * 4 * f, (4 * f, 1))
            b.strided_add(hseq, h, t * rows * f, (f, 1))
            b.strided_add(cseq, c, t * rows * f, (f, 1))
            # h_t as the next step's (N, *out, f) input, a tensor of its own per step (the
            # recurrent convolution of a step may keep its input for backward)
            h_prev = call.buffer(("h_prev", t), (n,) + out_image + (f,))
            b.copy(h_prev, b.reshape(h, (n,) + out_image + (f,)))
            b.copy(c_prev, c)
        self._keep_states(h_prev, c_prev)
        return self._outputs(call, n, steps, h_prev, c_prev)

    def _outputs(self, call, n, steps, h_last, c_last):
        b = self.backend
        image = self._own_axes(call.out_image) + (self.filters,)
        size = call.rows // n * self.filters
        hseq = call.hseq
        if call.output_factor is not None:
            # Keras's outputs at skipped steps (the states are not touched)
            hseq = call.buffer("masked_hseq", b.shape(call.hseq))
            b.copy(hseq, call.hseq)
            masks.apply_factor(b, hseq, call.output_factor)
        if self.return_sequences:
            out = call.buffer("out", (n, steps) + image)
            b.strided_copy(b.reshape(out, (n, steps, size)), hseq, 0, (size, n * size, 1))
        elif call.output_factor is not None:
            out = call.buffer("last_out", (n,) + image)
            b.strided_copy(b.reshape(out, (n, size)), hseq, (steps - 1) * n * size, (size, 1))
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
        if call.output_factor is not None:
            masks.apply_factor(b, dhseq, call.output_factor)
        if dstates[0] is not None:
            b.strided_add(dhseq, b.reshape(dstates[0], (rows, f)), (steps - 1) * rows * f, (f, 1))
        dgates = call.buffer("dgates", (steps * rows, 4 * f))
        b.fill(dgates, 0.0)
        # dh, dc: dL/dh_t and dL/dc_t of the step being run, carried back through time
        dh, dc = call.buffer("dh", (rows, f)), call.buffer("dc", (rows, f))
        b.strided_copy(dh, dhseq, (steps - 1) * rows * f, (f, 1))
        if dstates[1] is None:
            b.fill(dc, 0.0)
        else:
            b.copy(dc, b.reshape(dstates[1], (rows, f)))
        masked = call.step_mask is not None
        if masked:   # the running rows' part of dh and dc, and dc_{t-1} through the step
            dh_step, dc_step = call.buffer("dh_step", (rows, f)), call.buffer("dc_step", (rows, f))
            dc_prev = call.buffer("dc_prev", (rows, f))
        g, dg = call.buffer("step_gates", (rows, 4 * f)), call.buffer("step_dgates", (rows, 4 * f))
        c, c_prev = call.buffer("step_c", (rows, f)), call.buffer("c_prev", (rows, f))
        for t in range(steps - 1, -1, -1):
            b.strided_copy(g, call.acts, t * rows * 4 * f, (4 * f, 1))
            b.strided_copy(c, call.cseq, t * rows * f, (f, 1))
            if t > 0:
                b.strided_copy(c_prev, call.cseq, (t - 1) * rows * f, (f, 1))
            else:
                b.copy(c_prev, call.c0)
            if masked:
                m = masks.mask_at(b, call, call.step_mask, t)
                masks.split_skipped(b, dh_step, dh, m)
                masks.split_skipped(b, dc_step, dc, m)
                b.lstm_gates_backward(dg, dc_prev, dh_step, dc_step, g, c, c_prev,
                                      self._activation, self._recurrent_activation)
                b.add(dc, dc, dc_prev)
            else:
                b.lstm_gates_backward(dg, dc, dh, dc, g, c, c_prev, self._activation,
                                      self._recurrent_activation)
            b.strided_add(dgates, dg, t * rows * 4 * f, (4 * f, 1))
            if t > 0:
                if masked:   # the skipped rows' carried part stays in dh
                    dh_out = call.buffer("dh_out", (rows, f))
                    b.strided_copy(dh_out, dhseq, (t - 1) * rows * f, (f, 1))
                    b.add(dh, dh, dh_out)
                else:
                    b.strided_copy(dh, dhseq, (t - 1) * rows * f, (f, 1))
            if t >= call.first_recurrent:   # the recurrent term (its kernel gradient too)
                dh_rec = self._state_input_backward(call, self._state_conv_backward(call, t, dg))
                if t > 0:
                    b.add(dh, dh, dh_rec)
                elif masked:   # dL/dh0: a skipped row's carried part, and the convolution's
                    b.add(dh, dh, dh_rec)
                else:
                    b.copy(dh, dh_rec)
        # dh, dc are now dL/dh0 and dL/dc0 (with initial_state, the gradients of two inputs)
        dstates0 = self._initial_state_grads(call, dh, dc) if call.given_states else None
        self._state_kernel_grad(call, dgates, n, steps)
        dx_in = self._input_conv_backward(call, dgates)
        if dx_in is None:
            return None
        dxt = dx_in
        if call.input_drop is not None:
            dxt = call.buffer("dxt", b.shape(call.xt))
            gate_dropout.sum_dropped(b, dxt, dx_in, call.input_drop, steps,
                                     b.shape(call.xt)[-1])
        dx = call.buffer("dx", call.x_shape)
        size_in = math.prod(call.x_shape[2:])
        self._gather(b.reshape(dx, (n, steps, size_in)), b.reshape(dxt, (steps, n, size_in)),
                     steps, n, size_in, self.go_backwards, inverse=True)
        return dx if dstates0 is None else [dx] + dstates0

    def _initial_state_grads(self, call, dh, dc):
        """[dL/dh0, dL/dc0], each (N, *output spatial sizes, filters), from dh, dc (rows, f)."""
        b = self.backend
        n = call.x_shape[0]
        shape = (n,) + self._own_axes(call.out_image) + (self.filters,)
        grads = [call.buffer("d_h0", shape), call.buffer("d_c0", shape)]
        for grad, rows in zip(grads, (dh, dc)):
            b.copy(b.reshape(grad, b.shape(rows)), rows)
        return grads

    def _state_input_backward(self, call, dh_in):
        """dL/dh_{t-1} (N rows, f) from the gradient of the recurrent convolution's input."""
        if call.state_drop is None:
            return dh_in
        b, f = self.backend, self.filters
        dh = call.buffer("dh_rec", (call.rows, f))
        gate_dropout.sum_dropped(b, dh, dh_in, call.state_drop, 1, f)
        return dh


class ConvLSTM1D(_ConvLSTM):
    """Keras ConvLSTM1D: inputs (batch, time, width, channels); kernel (k, C, 4 filters)."""
    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """Keras ConvLSTM2D: inputs (batch, time, rows, cols, channels); kernel (kh, kw, C,
    4 filters), recurrent_kernel (kh, kw, filters, 4 filters), bias (4 filters,)."""
    rank = 2


__all__ = ["ConvLSTM1D", "ConvLSTM2D"]
