"""The machinery SimpleRNN, LSTM and GRU (recurrent_layers.py) share, on fused backend ops.

A layer runs its whole sequence in a few backend calls: the input projection of every step is
one gemm (x (N*T, in) @ kernel), the loop over time is one recurrent op of the backend
(per step one gemm for the recurrent projection and one fused gate kernel, backward the same
way) and the weight gradients are gemms over the whole sequence. The loop works time-major:
the input is gathered to (T, N, in) by one strided copy (reversed for go_backwards), the
hidden states come back (T, N, units). Every buffer is sized once per batch shape (the call's
buffer(), layers/calls.py), so memory is linear in T and a training step allocates nothing.

With return_state a call has several outputs (one node of the graph, as Keras's
LSTM(return_state=True)(x) -> [output, h, c]): forward returns them as a list and backward
takes their gradients as one (the graph gives zeros for an output nothing used).

A Keras mask (call.mask, (N, T)) goes to the sequence ops as the steps that run, time-major
in processing order (a skipped step keeps the states); the outputs are the states times a
factor per step (Keras's: 0 before the first step that ran, or 0 at every skipped step with
zero_output_for_mask). recurrent_dropout's per-gate masks on h_{t-1} go to the sequence ops
too (backends/recurrent_dropout.py).

Weights as Keras 3: kernel (in, k u), recurrent_kernel (u, k u), bias (k u,), or (2, 3u) for
GRU's reset_after=True (input and recurrent biases); gate order i, f, c, o (LSTM) and z, r, h
(GRU).
"""

from .. import activations, constraints, initializers, ops, regularizers
from ..arguments import number
from ..backends.contract.recurrent import GATE_ACTIVATIONS
from . import custom_call
from .base import KerasTensor, Layer, eager_call, format_shape


class _UnitForgetBias(initializers.Initializer):
    """LSTM's bias with unit_forget_bias: the bias initializer, with ones for the forget gate."""

    def __init__(self, base, units):
        self.base, self.units = base, units

    def __call__(self, shape):
        values = self.base(shape)
        values[self.units:2 * self.units] = 1.0
        return values

    @property
    def name(self):
        return self.base.name


class Recurrent(Layer):
    """What SimpleRNN, LSTM and GRU share: arguments, the time-major gather, states and outputs.

    Subclasses set `gate_width` (k: 1, 4, 3), `state_count` and the op-specific
    `_run_forward(call, gates, steps, n)` / `_run_backward(call, dhseq, dstates, steps, n)`.
    Everything one call keeps for its backward is on its context `call` (layers/calls.py);
    the layer itself keeps only a stateful layer's states, carried from batch to batch."""

    # the functions, as Keras; the kernels read the names in _activation (activations.py)
    activation = activations.ActivationAttribute("tanh")

    gate_width = 1
    state_count = 1
    needs_step_seed = True   # dropout draws its per-sequence input mask in training
    supports_masking = True
    keras_weights_in_cell = True   # Keras's files hold them under the layer's cell/
    # Keras's RNN(zero_output_for_mask=): with a mask, the output of a skipped step is 0
    # instead of the last output (Bidirectional sets it to return_sequences, as Keras)
    zero_output_for_mask = False

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, name=None, trainable=True, zero_output_for_mask=False):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"{self.describe()}: units must be a positive int, got {units!r}")
        self.units = units
        self.activation = self._gate_activation("activation", activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint,
                                 bias_constraint)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.dropout = number(dropout, "dropout", self.describe(), low=0, high=1,
                              high_inclusive=False)
        self.recurrent_dropout = number(recurrent_dropout, "recurrent_dropout", self.describe(),
                                        low=0, high=1, high_inclusive=False)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"{self.describe()}: seed must be None or an int >= 0, got {seed!r}")
        self.seed = seed
        self.step_seed = 0
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)   # accepted (Keras's graph-size option); the loop is the same
        self._states = None

    def _fits(self, input_shape):
        """A recurrent layer takes sequences of any length (Keras builds it for (None, T, F)
        and calls it on others): only the features (and the states' shapes) must match."""
        if super()._fits(input_shape):
            return True
        given, built = (input_shape, self.input_shape) if self.multiple_inputs else (
            [input_shape], [self.input_shape])
        return (len(given) == len(built) and len(given[0]) == len(built[0]) == 2
                and given[0][-1] == built[0][-1] and list(given[1:]) == list(built[1:]))

    def __call__(self, inputs, training=None, initial_state=None, mask=None):
        """Keras's call: initial_state (a tensor or a list: [h] or LSTM's [h, c]) makes the
        states inputs of the layer; with return_state the result is [output, *final states]."""
        if mask is not None and initial_state is not None:
            raise ValueError(f"{self.describe()}: mask= and initial_state= together are taken "
                             f"in a model only (the mask from Embedding(mask_zero=True) or "
                             f"Masking before the layer)")
        if initial_state is not None:
            states = (list(initial_state) if isinstance(initial_state, (list, tuple))
                      else [initial_state])
            if len(states) != self.state_count:
                raise ValueError(f"{self.describe()}: initial_state must hold {self.state_count} "
                                 f"tensor(s) of shape (batch, {self.units}), got {len(states)}")
            self.multiple_inputs = True
            inputs = [inputs] + states
        elif self.multiple_inputs:
            raise ValueError(f"{self.describe()} was called with initial_state before; pass it "
                             f"again")
        if self.return_state and custom_call.is_eager(inputs):
            # a minidl.ops Tensor has one value: the tape records one output per call
            raise ValueError(f"{self.describe()}: return_state=True works in models and eager "
                             f"calls; inside another layer's call use return_sequences and "
                             f"take the last step")
        if mask is not None:
            return self._call_with_mask(inputs, training, mask)
        return super().__call__(inputs, training=training)

    def _call_with_mask(self, inputs, training, mask):
        """Keras's lstm(x, mask=mask) with a mask passed by hand (N, T), True where a step
        is real: on Tensors inside a custom layer's call, or on arrays. In a model the mask
        comes from the layer before (Embedding(mask_zero=True), Masking) instead."""
        if isinstance(inputs, KerasTensor) or isinstance(mask, KerasTensor):
            raise ValueError(f"{self.describe()}: mask= is not taken on symbolic tensors; in a "
                             f"model the mask reaches the layer from Embedding(mask_zero=True) "
                             f"or Masking before it")
        shape, mask_shape = tuple(ops.shape(inputs)), tuple(ops.shape(mask))
        if len(shape) != 3 or mask_shape != shape[:2]:
            raise ValueError(f"{self.describe()}: mask must have shape (batch, timesteps) = "
                             f"{shape[:2]} for inputs of shape {shape}, got {mask_shape}")
        if custom_call.is_eager(inputs):
            return custom_call.call_eagerly(self, inputs, training, {}, mask)
        return eager_call(self, inputs, training, None, mask)

    def _check_use_cudnn(self, value):
        """Keras's use_cudnn ("auto", True or False): accepted, minidl has no cuDNN path."""
        if value not in ("auto", True, False):
            raise ValueError(f"{self.describe()}: use_cudnn must be 'auto', True or False, got "
                             f"{value!r}")
        return value

    def _gate_activation(self, argument, value):
        name = activations.resolve(value, self.describe())
        if name not in GATE_ACTIVATIONS:
            raise ValueError(f"{self.describe()}: {argument} must be one of {GATE_ACTIVATIONS} "
                             f"(what the fused recurrent kernels compute), got {value!r}")
        return name

    def get_config(self):
        return dict(super().get_config(), units=self.units, activation=self._activation,
                    use_bias=self.use_bias, kernel_initializer=str(self.kernel_initializer),
                    recurrent_initializer=str(self.recurrent_initializer),
                    bias_initializer=str(self.bias_initializer),
                    recurrent_regularizer=regularizers.serialize(self.recurrent_regularizer),
                    recurrent_constraint=constraints.serialize(self.recurrent_constraint),
                    dropout=self.dropout, recurrent_dropout=self.recurrent_dropout, seed=self.seed,
                    return_sequences=self.return_sequences, return_state=self.return_state,
                    go_backwards=self.go_backwards, stateful=self.stateful, unroll=self.unroll,
                    zero_output_for_mask=self.zero_output_for_mask,
                    **self._weight_options_config())

    # ------------------------------------------------------------ shapes
    def build(self, input_shape):
        if self.multiple_inputs:
            self._check_state_shapes(input_shape)
            input_shape = input_shape[0]
        if len(input_shape) != 2:
            raise ValueError(f"{self.describe()} expects inputs of rank 3 (batch, timesteps, "
                             f"features), got shape {format_shape(input_shape)}")
        if input_shape[1] is None:
            raise ValueError(f"{self.describe()}: the feature dimension must be known (it sizes "
                             f"the kernel), got input shape {format_shape(input_shape)}")
        k, u = self.gate_width, self.units
        self.kernel = self.add_weight("kernel", (input_shape[1], k * u), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (u, k * u), self.recurrent_initializer,
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), self._bias_initializer(),
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _bias_shape(self):
        return (self.gate_width * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def _check_state_shapes(self, shapes):
        for shape in shapes[1:]:
            if tuple(shape) != (self.units,):
                raise ValueError(f"{self.describe()}: each initial state must have shape "
                                 f"(None, {self.units}), got {format_shape(shape)}")

    def compute_output_shape(self, input_shape):
        """The output's shape, or with return_state a list: the output's, then each final
        state's (units,) (one node of several outputs)."""
        if self.multiple_inputs:
            input_shape = input_shape[0]
        out = (input_shape[0], self.units) if self.return_sequences else (self.units,)
        if not self.return_state:
            return out
        return [out] + [(self.units,)] * self.state_count

    def output_has_mask(self, input_masked):
        """The mask passes on with return_sequences (Keras's compute_mask); with return_state
        minidl passes none (the graph would give it to the states too)."""
        if isinstance(input_masked, list):
            input_masked = input_masked[0]
        return bool(input_masked) and self.return_sequences and not self.return_state

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        return mask if self.return_sequences and not self.return_state else None

    # ------------------------------------------------------------ states
    def accept_node_inputs(self, count):
        if count == 1 + self.state_count:   # called with initial_state
            self.multiple_inputs = True

    @property
    def states(self):
        """The states a stateful layer carries (Keras's layer.states: [h] or [h, c], each
        (batch, units), as numpy arrays), None before its first call or when not stateful."""
        if not self.stateful or self._states is None:
            return None
        return [self.backend.to_numpy(state) for state in self._states]

    def reset_states(self):
        """Zero the states a stateful layer carries from batch to batch (Keras reset_states)."""
        if self._states is not None:
            for state in self._states:
                self.backend.fill(state, 0.0)

    reset_state = reset_states

    def _initial_states(self, call, n):
        """The initial state tensors (N, u): zeros, or a stateful layer's carried states (the
        layer's own, from batch to batch: Keras keeps them on the layer too)."""
        b, u = self.backend, self.units
        states = [call.buffer(f"state0_{i}", (n, u)) for i in range(self.state_count)]
        if self.stateful:
            if self._states is None or b.shape(self._states[0])[0] != n:
                self._states = [b.zeros((n, u)) for _ in range(self.state_count)]
            for state, kept in zip(states, self._states):
                b.copy(state, kept)
        else:
            for state in states:
                b.fill(state, 0.0)
        return states

    # ----------------------------------------------------------- compute
    def _gather(self, out, x, steps, n, width, backwards, inverse=False):
        """x (N, T, w) -> out (T, N, w), time reversed when `backwards`; inverse: back."""
        b, last = self.backend, steps - 1
        if not inverse:
            if backwards:
                b.strided_copy(out, x, last * width, (-width, steps * width, 1))
            else:
                b.strided_copy(out, x, 0, (width, steps * width, 1))
        elif backwards:
            b.strided_copy(out, x, last * n * width, (width, -n * width, 1))
        else:
            b.strided_copy(out, x, 0, (width, n * width, 1))

    def forward(self, call, x, training):
        b, u = self.backend, self.units
        given = None
        if self.multiple_inputs:
            x, given = x[0], list(x[1:])
        hseq = self.run_sequence(call, x, given, training, self.go_backwards)
        n, steps, _ = call.x_shape
        if self.stateful:
            for kept, state in zip(self._states, call.last_states):
                b.copy(kept, state)
        if call.output_factor is not None:
            # Keras's outputs at skipped steps: the last output (0 before the first step
            # that ran), or 0 with zero_output_for_mask; the states are not touched
            masked = call.buffer("masked_hseq", (steps, n, u))
            b.binary(masked, hseq, call.output_factor, "multiply")
            hseq = masked
        if self.return_sequences:
            out = call.buffer("out", (n, steps, u))
            b.strided_copy(out, hseq, 0, (u, n * u, 1))
        elif call.output_factor is not None:
            out = call.buffer("last_out", (n, u))
            b.strided_copy(out, hseq, (steps - 1) * n * u, (u, 1))
        else:
            out = call.last_states[0]
        if not self.return_state:
            return out
        # the final h is an output of its own (Keras returns it twice without
        # return_sequences): its own tensor, so that no tensor stands for two outputs
        h = call.buffer("state_h", (n, u))
        b.copy(h, call.last_states[0])
        return [out, h] + call.last_states[1:]

    def run_sequence(self, call, x, given, training, backwards):
        """The loop over the steps of x (N, T, features), in reverse when `backwards`, from
        the states `given` (None: zeros, or a stateful layer's carried states) on `call`:
        returns the hidden states (T, N, units) in processing order and leaves the final
        states in call.last_states. A cell's step (rnn_cells.py) is one such call."""
        b = self.backend
        call.backwards = backwards
        n, steps, features = call.x_shape = b.shape(x)
        k, u = self.gate_width, self.units
        if steps < 1:
            raise ValueError(f"{self.describe()}: inputs need at least one timestep, got shape "
                             f"{(n, steps, features)}")
        call.step_mask, call.output_factor = self._step_masks(call, n, steps, backwards)
        call.dropout_mask = call.recurrent_mask = call.gate_input_masks = None
        if training and self.dropout:
            if self.recurrent_dropout and k > 1:
                # Keras 3 (its cells' implementation 1) then draws an input mask per gate too
                call.gate_input_masks = self._gate_input_dropout_mask(call, n, features)
            else:
                x = self._drop_inputs(call, x, n, steps, features)
        if training and self.recurrent_dropout:
            call.recurrent_mask = self._recurrent_dropout_mask(call, n)
        xt = call.xt = call.buffer("xt", (steps, n, features))
        self._gather(xt, x, steps, n, features, backwards)
        gates = call.buffer("gates", (steps, n, k * u))
        gates2, xt2 = b.reshape(gates, (steps * n, k * u)), b.reshape(xt, (steps * n, features))
        if call.gate_input_masks is None:
            b.gemm(gates2, xt2, self.kernel.value)
        else:
            b.fill(gates2, 0.0)
            for g in range(k):
                b.gemm(call.buffer("gate_part", (steps * n, u)),
                       self._gate_inputs(call, xt, g, steps, n, features),
                       self._gate_columns(call, "gate_kernel", self.kernel.value, g))
                b.strided_add(gates2, call.buffer("gate_part", (steps * n, u)), g * u,
                              (k * u, 1))
        if given is not None:
            for name, state in zip(("h", "c"), given):
                if b.shape(state) != (n, self.units):
                    raise ValueError(f"{self.describe()}: initial state {name} must have shape "
                                     f"{(n, self.units)}, got {b.shape(state)}")
            call.initial = list(given)
        else:
            call.initial = self._initial_states(call, n)
        hseq = self._run_forward(call, gates, steps, n)
        last = call.buffer("last_h", (n, u))
        b.strided_copy(last, hseq, (steps - 1) * n * u, (u, 1))
        call.last_states = [last] + self._last_cell(call, steps, n)
        return hseq

    def _last_cell(self, call, steps, n):
        """[the final cell state] for LSTM, [] for the others."""
        return []

    def _step_masks(self, call, n, steps, backwards):
        """From the call's Keras mask (N, T), in processing order and time-major (T, N, 1):
        the steps that run (the sequence ops keep a skipped row's states) and the factor of
        each step's output, 1.0 where Keras outputs the state: the steps that ran with
        zero_output_for_mask, else every step from the first one that ran (before it Keras
        outputs 0, after it a skipped step repeats the last output, which is the state).
        (None, None) without a mask."""
        mask = call.mask
        if isinstance(mask, list):   # with initial_state: the sequence's mask
            mask = mask[0]
        if mask is None:
            return None, None
        b = self.backend
        if b.shape(mask) != (n, steps):
            raise ValueError(f"{self.describe()}: the mask must have shape {(n, steps)} (batch, "
                             f"timesteps) for inputs {call.x_shape}, got {b.shape(mask)}")
        ordered = call.buffer("mask_ordered", (n, steps))   # processing order, (N, T)
        if backwards:
            b.strided_copy(ordered, mask, steps - 1, (steps, -1))
        else:
            b.copy(ordered, mask)
        step_mask = call.buffer("step_mask", (steps, n, 1))
        b.strided_copy(step_mask, ordered, 0, (1, steps, 0))
        if self.zero_output_for_mask:
            return step_mask, step_mask
        seen = call.buffer("mask_seen", (n, steps))
        b.scan_rows(seen, ordered, "cumsum")
        b.binary(seen, seen, 1.0, "minimum")
        factor = call.buffer("output_factor", (steps, n, 1))
        b.strided_copy(factor, seen, 0, (1, steps, 0))
        return step_mask, factor

    def _drop_inputs(self, call, x, n, steps, features):
        """Keras's input dropout: one mask per sample and feature, the same at every step."""
        b = self.backend
        ones = call.buffer("dropout_ones", (n, features))
        b.fill(ones, 1.0)
        call.dropout_mask = call.buffer("dropout_mask", (n, features))
        b.dropout_forward(call.buffer("dropout_kept", (n, features)), call.dropout_mask, ones,
                          self.dropout, call.step_seed)
        dropped = call.buffer("dropped", (n, steps, features))
        b.channel_mask_multiply(dropped, x, call.dropout_mask)
        return dropped

    def _dropout_masks(self, call, role, n, width, rate, seed):
        """Keras 3's per-gate dropout masks, (N, k w) (gate g's (N, w) in columns g w..),
        scaled by 1 / (1 - rate), the same at every step of the sequence: the recurrent ones
        on h_{t-1} (the sequence ops apply them, backends/recurrent_dropout.py) and, with
        recurrent_dropout, the input ones (_gate_inputs)."""
        b = self.backend
        ones = call.buffer(f"{role}_dropout_ones", (n, width))
        b.fill(ones, 1.0)
        mask = call.buffer(f"{role}_dropout_mask", (n, width))
        b.dropout_forward(call.buffer(f"{role}_dropout_kept", (n, width)), mask, ones, rate,
                          seed)
        return mask

    def _recurrent_dropout_mask(self, call, n):
        """The call's masks on h_{t-1}, (N, k u)."""
        # a seed of its own, apart from the input dropout's (call.step_seed)
        return self._dropout_masks(call, "recurrent", n, self.gate_width * self.units,
                                   self.recurrent_dropout, (call.step_seed * 2 + 1) % (1 << 62))

    def _gate_input_dropout_mask(self, call, n, features):
        """The call's per-gate input masks, (N, k features)."""
        return self._dropout_masks(call, "gate_input", n, self.gate_width * features,
                                   self.dropout, call.step_seed)

    def _gate_columns(self, call, role, tensor, g, width=None):
        """Gate g's columns of a (rows, k w) tensor, as a contiguous (rows, w) buffer."""
        b = self.backend
        rows, total = b.shape(tensor)
        width = width or self.units
        out = call.buffer(role, (rows, width))
        b.strided_copy(out, tensor, g * width, (total, 1))
        return out

    def _gate_inputs(self, call, xt, g, steps, n, features):
        """Gate g's dropped inputs (T N, features): xt times the gate's input mask."""
        b = self.backend
        mask = self._gate_columns(call, "gate_input_mask", call.gate_input_masks, g, features)
        dropped = call.buffer("gate_inputs", (steps * n, features))
        b.binary(b.reshape(dropped, (steps, n, features)), xt, mask, "multiply")
        return dropped

    def backward(self, call, dout):
        b = self.backend
        n, steps, features = call.x_shape
        k, u = self.gate_width, self.units
        # dL/d(final states) through return_state's outputs (None: not returned)
        dstates = [None] * self.state_count
        if self.return_state:
            dout, dstates = dout[0], list(dout[1:])
        dhseq = call.buffer("dhseq", (steps, n, u))
        if self.return_sequences:
            b.strided_copy(dhseq, dout, 0, (u, steps * u, 1))
        else:
            b.fill(dhseq, 0.0)
            b.strided_add(dhseq, dout, (steps - 1) * n * u, (u, 1))
        if call.output_factor is not None:
            b.binary(dhseq, dhseq, call.output_factor, "multiply")
        if dstates[0] is not None:
            b.strided_add(dhseq, dstates[0], (steps - 1) * n * u, (u, 1))
        dgates = self._run_backward(call, dhseq, dstates, steps, n)
        dgates2 = b.reshape(dgates, (steps * n, k * u))
        xt2 = b.reshape(call.xt, (steps * n, features))
        if self.trainable:
            if call.gate_input_masks is None:
                b.gemm(call.grad(self.kernel), xt2, dgates2, trans_a=True)
            else:
                self._gate_kernel_grad(call, dgates2, steps, n, features)
            if self.use_bias:
                self._bias_grad(call, dgates2)
        if not call.input_grad_needed:
            return None
        dxt = call.buffer("dxt", (steps, n, features))
        if call.gate_input_masks is None:
            b.gemm(b.reshape(dxt, (steps * n, features)), dgates2, self.kernel.value,
                   trans_b=True)
        else:
            self._gate_input_grad(call, dxt, dgates2, steps, n, features)
        dx = call.buffer("dx", (n, steps, features))
        self._gather(dx, dxt, steps, n, features, call.backwards, inverse=True)
        if call.dropout_mask is not None:
            b.channel_mask_multiply(dx, dx, call.dropout_mask)
        if self.multiple_inputs:   # dL/d(initial states), left by _run_backward
            return [dx] + [call.buffer(name, (n, u)) for name in ("dh0", "dc0")[:self.state_count]]
        return dx

    def _gate_kernel_grad(self, call, dgates2, steps, n, features):
        """dL/dkernel with per-gate input masks: gate g's columns from its dropped inputs."""
        b, k, u = self.backend, self.gate_width, self.units
        dkernel = call.grad(self.kernel)
        b.fill(dkernel, 0.0)
        part = call.buffer("gate_kernel_grad", (features, u))
        for g in range(k):
            b.gemm(part, self._gate_inputs(call, call.xt, g, steps, n, features),
                   self._gate_columns(call, "gate_dgates", dgates2, g), trans_a=True)
            b.strided_add(dkernel, part, g * u, (k * u, 1))

    def _gate_input_grad(self, call, dxt, dgates2, steps, n, features):
        """dL/dxt with per-gate input masks: the sum over gates of each one's masked part."""
        b, k = self.backend, self.gate_width
        b.fill(dxt, 0.0)
        part = call.buffer("gate_dinputs", (steps * n, features))
        for g in range(k):
            b.gemm(part, self._gate_columns(call, "gate_dgates", dgates2, g),
                   self._gate_columns(call, "gate_kernel", self.kernel.value, g), trans_b=True)
            mask = self._gate_columns(call, "gate_input_mask", call.gate_input_masks, g, features)
            b.binary(b.reshape(part, (steps, n, features)), b.reshape(part, (steps, n, features)),
                     mask, "multiply")
            b.add(b.reshape(dxt, (steps * n, features)), b.reshape(dxt, (steps * n, features)),
                  part)

    def _recurrent_kernel_grad(self, call):
        """Where the recurrent op writes dL/drecurrent_kernel (a scratch when frozen)."""
        if self.trainable:
            return call.grad(self.recurrent_kernel)
        return call.buffer("drk", self.recurrent_kernel.shape)

    def _bias_grad(self, call, dgates2):
        self.backend.bias_grad(call.grad(self.bias), dgates2)

    def _add_input_bias(self, gates, steps, n):
        if self.use_bias:
            g2 = self.backend.reshape(gates, (steps * n, self.gate_width * self.units))
            self.backend.bias_add(g2, g2, self.bias.value)
