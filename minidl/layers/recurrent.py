"""SimpleRNN, LSTM and GRU (Keras 3's arguments, weights and layouts) on fused backend ops.

A layer runs its whole sequence in a few backend calls: the input projection of every step is
one gemm (x (N*T, in) @ kernel), the loop over time is one recurrent op of the backend
(per step one gemm for the recurrent projection and one fused gate kernel, backward the same
way) and the weight gradients are gemms over the whole sequence. The loop works time-major:
the input is gathered to (T, N, in) by one strided copy (reversed for go_backwards), the
hidden states come back (T, N, units). Every buffer is sized once per batch shape (layers'
buffer()), so memory is linear in T and a training step allocates nothing.

Weights as Keras 3: kernel (in, k u), recurrent_kernel (u, k u), bias (k u,), or (2, 3u) for
GRU's reset_after=True (input and recurrent biases); gate order i, f, c, o (LSTM) and z, r, h
(GRU).
"""

import numpy as np

from .. import activations, constraints, initializers, regularizers
from ..arguments import number
from ..backends.recurrent_host import GATE_ACTIVATIONS
from .base import KerasTensor, Layer, format_shape


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


def refuse_mask(layer):
    """A Keras mask reaching a recurrent layer (Embedding(mask_zero=True) or Masking before it)
    would have Keras skip the masked steps; the fused kernels cannot yet, so say so rather
    than run the padded steps silently."""
    if getattr(layer, "_input_mask", None) is not None:
        raise ValueError(f"{layer.describe()}: its input carries a mask (Embedding(mask_zero=True) or "
                         "Masking before it); minidl's recurrent layers do not skip masked steps yet: "
                         "train without the mask (mask_zero=False) for now")


class Recurrent(Layer):
    """What SimpleRNN, LSTM and GRU share: arguments, the time-major gather, states and outputs.

    Subclasses set `gate_width` (k: 1, 4, 3), `state_count` and the op-specific `_run_forward`
    / `_run_backward`."""

    gate_width = 1
    state_count = 1
    needs_step_seed = True   # dropout draws its per-sequence input mask in training

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
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
        if self.recurrent_dropout:
            # a mask on h_{t-1} before the recurrent gemm would split the fused step in two
            raise ValueError(f"{self.describe()}: recurrent_dropout is not supported by minidl's "
                             f"fused recurrent ops (got {recurrent_dropout!r}); use dropout")
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

    def __call__(self, inputs, training=None, initial_state=None, mask=None):
        """Keras's call: initial_state (a tensor or a list: [h] or LSTM's [h, c]) makes the
        states inputs of the layer; with return_state the result is [output, *final states]."""
        if mask is not None:
            raise ValueError(f"{self.describe()}: masks are not supported yet (mask must be None)")
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
        result = super().__call__(inputs, training)
        if not self.return_state:
            return result
        if isinstance(result, KerasTensor):
            return [result] + [RecurrentState(i, self.units)(result)
                             for i in range(self.state_count)]
        if not isinstance(result, np.ndarray):   # a minidl.ops Tensor: inside a layer's call
            raise ValueError(f"{self.describe()}: return_state=True works in models and eager "
                             f"calls; inside another layer's call use return_sequences and "
                             f"take the last step")
        return [result] + [self.backend.to_numpy(s) for s in self._last_states]

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
        return dict(super().get_config(), units=self.units, activation=self.activation,
                    use_bias=self.use_bias, kernel_initializer=str(self.kernel_initializer),
                    recurrent_initializer=str(self.recurrent_initializer),
                    bias_initializer=str(self.bias_initializer),
                    recurrent_regularizer=regularizers.serialize(self.recurrent_regularizer),
                    recurrent_constraint=constraints.serialize(self.recurrent_constraint),
                    dropout=self.dropout, recurrent_dropout=self.recurrent_dropout, seed=self.seed,
                    return_sequences=self.return_sequences, return_state=self.return_state,
                    go_backwards=self.go_backwards, stateful=self.stateful, unroll=self.unroll,
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
        if self.multiple_inputs:
            input_shape = input_shape[0]
        return (input_shape[0], self.units) if self.return_sequences else (self.units,)

    # ------------------------------------------------------------ states
    def reset_states(self):
        """Zero the states a stateful layer carries from batch to batch (Keras reset_states)."""
        if self._states is not None:
            for state in self._states:
                self.backend.fill(state, 0.0)

    reset_state = reset_states

    def _initial_states(self, n):
        """The initial state tensors (N, u): zeros, or a stateful layer's carried states."""
        b, u = self.backend, self.units
        states = [self.buffer(f"state0_{i}", (n, u)) for i in range(self.state_count)]
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
    def _gather(self, out, x, steps, n, width, inverse=False):
        """x (N, T, w) -> out (T, N, w), time reversed for go_backwards; inverse: back."""
        b, last = self.backend, steps - 1
        if not inverse:
            if self.go_backwards:
                b.strided_copy(out, x, last * width, (-width, steps * width, 1))
            else:
                b.strided_copy(out, x, 0, (width, steps * width, 1))
        elif self.go_backwards:
            b.strided_copy(out, x, last * n * width, (width, -n * width, 1))
        else:
            b.strided_copy(out, x, 0, (width, n * width, 1))

    def forward(self, x, training):
        refuse_mask(self)
        b = self.backend
        given = None
        if self.multiple_inputs:
            x, given = x[0], x[1:]
        n, steps, features = self._x_shape = b.shape(x)
        k, u = self.gate_width, self.units
        if steps < 1:
            raise ValueError(f"{self.describe()}: inputs need at least one timestep, got shape "
                             f"{(n, steps, features)}")
        self._mask = None
        if training and self.dropout:
            x = self._drop_inputs(x, n, steps, features)
        xt = self._xt = self.buffer("xt", (steps, n, features))
        self._gather(xt, x, steps, n, features)
        gates = self.buffer("gates", (steps, n, k * u))
        b.gemm(b.reshape(gates, (steps * n, k * u)), b.reshape(xt, (steps * n, features)),
               self.kernel.value)
        if given is not None:
            for name, state in zip(("h", "c"), given):
                if b.shape(state) != (n, self.units):
                    raise ValueError(f"{self.describe()}: initial state {name} must have shape "
                                     f"{(n, self.units)}, got {b.shape(state)}")
            initial = self._initial = list(given)
        else:
            initial = self._initial = self._initial_states(n)
        self._state_grads = [None] * self.state_count
        hseq = self._run_forward(gates, initial, steps, n)
        last = self.buffer("last_h", (n, u))
        b.strided_copy(last, hseq, (steps - 1) * n * u, (u, 1))
        self._last_states = [last] + self._last_cell(steps, n)
        if self.stateful:
            for kept, state in zip(self._states, self._last_states):
                b.copy(kept, state)
        if not self.return_sequences:
            return last
        out = self.buffer("out", (n, steps, u))
        b.strided_copy(out, hseq, 0, (u, n * u, 1))
        return out

    def _last_cell(self, steps, n):
        """[the final cell state] for LSTM, [] for the others."""
        return []

    def _drop_inputs(self, x, n, steps, features):
        """Keras's input dropout: one mask per sample and feature, the same at every step."""
        b = self.backend
        ones = self.buffer("dropout_ones", (n, features))
        b.fill(ones, 1.0)
        self._mask = self.buffer("dropout_mask", (n, features))
        b.dropout_forward(self.buffer("dropout_kept", (n, features)), self._mask, ones,
                          self.dropout, self.step_seed)
        dropped = self.buffer("dropped", (n, steps, features))
        b.channel_mask_multiply(dropped, x, self._mask)
        return dropped

    def backward(self, dout):
        b = self.backend
        n, steps, features = self._x_shape
        k, u = self.gate_width, self.units
        dhseq = self.buffer("dhseq", (steps, n, u))
        if self.return_sequences:
            b.strided_copy(dhseq, dout, 0, (u, steps * u, 1))
        else:
            b.fill(dhseq, 0.0)
            b.strided_add(dhseq, dout, (steps - 1) * n * u, (u, 1))
        if self._state_grads[0] is not None:   # dL/d(final h) through return_state
            b.strided_add(dhseq, self._state_grads[0], (steps - 1) * n * u, (u, 1))
        dgates = self._run_backward(dhseq, steps, n)
        dgates2 = b.reshape(dgates, (steps * n, k * u))
        xt2 = b.reshape(self._xt, (steps * n, features))
        if self.trainable:
            b.gemm(self.kernel.grad, xt2, dgates2, trans_a=True)
            if self.use_bias:
                self._bias_grad(dgates2)
        if not self.input_grad_needed:
            return None
        dxt = self.buffer("dxt", (steps, n, features))
        b.gemm(b.reshape(dxt, (steps * n, features)), dgates2, self.kernel.value, trans_b=True)
        dx = self.buffer("dx", (n, steps, features))
        self._gather(dx, dxt, steps, n, features, inverse=True)
        if self._mask is not None:
            b.channel_mask_multiply(dx, dx, self._mask)
        if self.multiple_inputs:   # dL/d(initial states), left by _run_backward
            return [dx] + [self.buffer(name, (n, u)) for name in ("dh0", "dc0")[:self.state_count]]
        return dx

    def _bias_grad(self, dgates2):
        self.backend.bias_grad(self.bias.grad, dgates2)

    def _add_input_bias(self, gates, steps, n):
        if self.use_bias:
            g2 = self.backend.reshape(gates, (steps * n, self.gate_width * self.units))
            self.backend.bias_add(g2, g2, self.bias.value)


class SimpleRNN(Recurrent):
    """Keras SimpleRNN: h_t = activation(x_t kernel + h_{t-1} recurrent_kernel + bias)."""

    def _run_forward(self, gates, initial, steps, n):
        self._add_input_bias(gates, steps, n)
        self._pre = gates
        hseq = self._hseq = self.buffer("hseq", (steps, n, self.units))
        self.backend.simple_rnn_forward(hseq, gates, initial[0], self.recurrent_kernel.value,
                                        self.activation)
        return hseq

    def _run_backward(self, dhseq, steps, n):
        b, u = self.backend, self.units
        dpre = self.buffer("dgates", (steps, n, u))
        drk = self.recurrent_kernel.grad if self.trainable else self.buffer("drk", (u, u))
        b.simple_rnn_backward(dpre, drk, self.buffer("dh0", (n, u)), dhseq, self._hseq,
                              self._initial[0], self.recurrent_kernel.value, self.activation)
        return dpre


class LSTM(Recurrent):
    """Keras LSTM: gates i, f, c, o in that order along the kernels' last axis."""

    gate_width = 4
    state_count = 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 use_cudnn="auto", name=None, trainable=True):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, activity_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout, seed,
                         return_sequences, return_state, go_backwards, stateful, unroll, name,
                         trainable)
        self.recurrent_activation = self._gate_activation("recurrent_activation",
                                                          recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.use_cudnn = self._check_use_cudnn(use_cudnn)

    def get_config(self):
        return dict(super().get_config(), recurrent_activation=self.recurrent_activation,
                    unit_forget_bias=self.unit_forget_bias, use_cudnn=self.use_cudnn)

    def _bias_initializer(self):
        base = initializers.get(self.bias_initializer)
        return _UnitForgetBias(base, self.units) if self.unit_forget_bias else base

    def _run_forward(self, gates, initial, steps, n):
        b, u = self.backend, self.units
        self._add_input_bias(gates, steps, n)
        self._gates = gates
        hseq = self._hseq = self.buffer("hseq", (steps, n, u))
        cseq = self._cseq = self.buffer("cseq", (steps, n, u))
        b.lstm_forward(hseq, cseq, gates, initial[0], initial[1], self.recurrent_kernel.value,
                       self.activation, self.recurrent_activation)
        return hseq

    def _last_cell(self, steps, n):
        u = self.units
        last_c = self.buffer("last_c", (n, u))
        self.backend.strided_copy(last_c, self._cseq, (steps - 1) * n * u, (u, 1))
        return [last_c]

    def _run_backward(self, dhseq, steps, n):
        b, u = self.backend, self.units
        dgates = self.buffer("dgates", (steps, n, 4 * u))
        drk = self.recurrent_kernel.grad if self.trainable else self.buffer("drk", (u, 4 * u))
        b.lstm_backward(dgates, drk, self.buffer("dh0", (n, u)), self.buffer("dc0", (n, u)),
                        dhseq, self._state_grads[1], self._gates, self._cseq, self._hseq,
                        self._initial[0], self._initial[1], self.recurrent_kernel.value,
                        self.activation, self.recurrent_activation)
        return dgates


class GRU(Recurrent):
    """Keras GRU with reset_after=True (Keras 3's default): gates z, r, h; bias (2, 3u) holds
    the input bias (row 0) and the recurrent bias (row 1)."""

    gate_width = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True,
                 use_cudnn="auto", name=None, trainable=True):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, activity_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout, seed,
                         return_sequences, return_state, go_backwards, stateful, unroll, name,
                         trainable)
        self.recurrent_activation = self._gate_activation("recurrent_activation",
                                                          recurrent_activation)
        if not reset_after:
            raise ValueError(f"{self.describe()}: reset_after=False (the reset gate applied "
                             "before the recurrent projection) is not implemented by minidl's "
                             "fused GRU op; use reset_after=True, Keras 3's default")
        self.reset_after = True
        self.use_cudnn = self._check_use_cudnn(use_cudnn)

    def get_config(self):
        return dict(super().get_config(), recurrent_activation=self.recurrent_activation,
                    reset_after=self.reset_after, use_cudnn=self.use_cudnn)

    def _bias_shape(self):
        return (2, 3 * self.units)

    def _biases(self):
        """(input bias, recurrent bias), each (3u,), split from bias (2, 3u) by concat_backward."""
        b, u = self.backend, self.units
        parts = [self.buffer("input_bias", (1, 3 * u)), self.buffer("recurrent_bias", (1, 3 * u))]
        b.concat_backward(parts, b.reshape(self.bias.value, (1, 6 * u)))
        return [b.reshape(p, (3 * u,)) for p in parts]

    def _run_forward(self, gates, initial, steps, n):
        b, u = self.backend, self.units
        recurrent_bias = self.buffer("zero_bias", (3 * u,))
        if self.use_bias:
            input_bias, recurrent_bias = self._biases()
            g2 = b.reshape(gates, (steps * n, 3 * u))
            b.bias_add(g2, g2, input_bias)
        else:
            b.fill(recurrent_bias, 0.0)
        self._gates = gates
        hseq = self._hseq = self.buffer("hseq", (steps, n, u))
        recs = self._recs = self.buffer("recs", (steps, n, 3 * u))
        b.gru_forward(hseq, gates, recs, initial[0], self.recurrent_kernel.value, recurrent_bias,
                      self.activation, self.recurrent_activation)
        return hseq

    def _run_backward(self, dhseq, steps, n):
        b, u = self.backend, self.units
        dgates = self.buffer("dgates", (steps, n, 3 * u))
        drecs = self._drecs = self.buffer("drecs", (steps, n, 3 * u))
        drk = self.recurrent_kernel.grad if self.trainable else self.buffer("drk", (u, 3 * u))
        b.gru_backward(dgates, drecs, drk, self.buffer("dh0", (n, u)), dhseq, self._gates,
                       self._recs, self._hseq, self._initial[0], self.recurrent_kernel.value,
                       self.activation, self.recurrent_activation)
        return dgates

    def _bias_grad(self, dgates2):
        b, u = self.backend, self.units
        steps_n = b.shape(dgates2)[0]
        parts = [self.buffer("dinput_bias", (1, 3 * u)), self.buffer("drecurrent_bias", (1, 3 * u))]
        b.bias_grad(b.reshape(parts[0], (3 * u,)), dgates2)
        b.bias_grad(b.reshape(parts[1], (3 * u,)), b.reshape(self._drecs, (steps_n, 3 * u)))
        b.concat_forward(b.reshape(self.bias.grad, (1, 6 * u)), parts)


class RecurrentState(Layer):
    """Final state `index` of a recurrent layer called with return_state (h, or LSTM's c): a
    second output of that layer's call, read from the tensor the layer's forward left. Its
    input is the layer's main output, which orders it after the layer and names the layer (so
    a saved model rebuilds it from its index); its gradient goes to the layer's backward (which
    runs after it), and it passes zeros to that output."""

    def __init__(self, index, units, name=None, trainable=True):
        if index not in (0, 1):
            raise ValueError(f"RecurrentState: index must be 0 (h) or 1 (c), got {index!r}")
        super().__init__(name=name, trainable=trainable)
        self.index, self.units = index, units
        self.layer = None

    def get_config(self):
        return dict(super().get_config(), index=self.index, units=self.units)

    def add_node(self, tensors, training=None, parent=None):
        if self.layer is None:   # the layer whose output this call reads (model calls, loading)
            source = tensors[0].layer
            if (not isinstance(source, Recurrent) or self.index >= source.state_count
                    or source.units != self.units):
                raise ValueError(f"{self.describe()} must be called on the output of a recurrent "
                                 f"layer of {self.units} units with state {self.index}, got "
                                 f"{tensors[0]!r}")
            self.layer = source
        return super().add_node(tensors, training, parent)

    def compute_output_shape(self, input_shape):
        return (self.units,)

    def forward(self, x, training):
        self._x_shape = self.backend.shape(x)
        return self.layer._last_states[self.index]

    def backward(self, dout):
        self.layer._state_grads[self.index] = dout
        zeros = self.buffer("dx", self._x_shape)
        self.backend.fill(zeros, 0.0)
        return zeros


__all__ = ["SimpleRNN", "LSTM", "GRU", "RecurrentState"]
