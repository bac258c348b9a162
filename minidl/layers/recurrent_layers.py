"""Keras's SimpleRNN, LSTM and GRU: the Recurrent machinery (recurrent.py: masks, states,
dropout, the fused sequence ops) with each cell's weights and gate layout."""

from .. import activations, initializers
from .recurrent import Recurrent, _UnitForgetBias


class SimpleRNN(Recurrent):
    """Keras SimpleRNN: h_t = activation(x_t kernel + h_{t-1} recurrent_kernel + bias)."""

    def _run_forward(self, call, gates, steps, n):
        self._add_input_bias(gates, steps, n)
        hseq = call.hseq = call.buffer("hseq", (steps, n, self.units))
        self.backend.simple_rnn_forward(hseq, gates, call.initial[0], self.recurrent_kernel.value,
                                        self._activation, mask=call.step_mask,
                                        recurrent_mask=call.recurrent_mask)
        return hseq

    def _run_backward(self, call, dhseq, dstates, steps, n):
        u = self.units
        dpre = call.buffer("dgates", (steps, n, u))
        self.backend.simple_rnn_backward(dpre, self._recurrent_kernel_grad(call),
                                         call.buffer("dh0", (n, u)), dhseq, call.hseq,
                                         call.initial[0], self.recurrent_kernel.value,
                                         self._activation, mask=call.step_mask,
                                         recurrent_mask=call.recurrent_mask)
        return dpre


class LSTM(Recurrent):
    """Keras LSTM: gates i, f, c, o in that order along the kernels' last axis."""

    recurrent_activation = activations.ActivationAttribute("sigmoid")

    gate_width = 4
    state_count = 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 use_cudnn="auto", name=None, trainable=True, zero_output_for_mask=False):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, activity_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout, seed,
                         return_sequences, return_state, go_backwards, stateful, unroll, name,
                         trainable, zero_output_for_mask)
        self.recurrent_activation = self._gate_activation("recurrent_activation",
                                                          recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.use_cudnn = self._check_use_cudnn(use_cudnn)

    def get_config(self):
        return dict(super().get_config(), recurrent_activation=self._recurrent_activation,
                    unit_forget_bias=self.unit_forget_bias, use_cudnn=self.use_cudnn)

    def _bias_initializer(self):
        base = initializers.get(self.bias_initializer)
        return _UnitForgetBias(base, self.units) if self.unit_forget_bias else base

    def _run_forward(self, call, gates, steps, n):
        b, u = self.backend, self.units
        self._add_input_bias(gates, steps, n)
        call.gates = gates
        hseq = call.hseq = call.buffer("hseq", (steps, n, u))
        cseq = call.cseq = call.buffer("cseq", (steps, n, u))
        b.lstm_forward(hseq, cseq, gates, call.initial[0], call.initial[1],
                       self.recurrent_kernel.value, self._activation, self._recurrent_activation,
                       mask=call.step_mask,
                       recurrent_mask=call.recurrent_mask)
        return hseq

    def _last_cell(self, call, steps, n):
        u = self.units
        last_c = call.buffer("last_c", (n, u))
        self.backend.strided_copy(last_c, call.cseq, (steps - 1) * n * u, (u, 1))
        return [last_c]

    def _run_backward(self, call, dhseq, dstates, steps, n):
        u = self.units
        dgates = call.buffer("dgates", (steps, n, 4 * u))
        # dstates[1]: dL/d(final c) through return_state (None: the op starts from zero)
        self.backend.lstm_backward(
            dgates, self._recurrent_kernel_grad(call), call.buffer("dh0", (n, u)),
            call.buffer("dc0", (n, u)), dhseq, dstates[1], call.gates, call.cseq, call.hseq,
            call.initial[0], call.initial[1], self.recurrent_kernel.value, self._activation,
            self._recurrent_activation, mask=call.step_mask,
            recurrent_mask=call.recurrent_mask)
        return dgates


class GRU(Recurrent):
    """Keras GRU: gates z, r, h. With reset_after=True (Keras 3's default) bias (2, 3u) holds
    the input bias (row 0) and the recurrent bias (row 1), and hh = activation(x_h +
    r (h_{t-1} U_h + b_h)); with reset_after=False bias (3u,) is the input bias only and
    hh = activation(x_h + (r h_{t-1}) U_h) (backend op gru_reset_before_*)."""

    recurrent_activation = activations.ActivationAttribute("sigmoid")

    gate_width = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True,
                 use_cudnn="auto", name=None, trainable=True, zero_output_for_mask=False):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, activity_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout, seed,
                         return_sequences, return_state, go_backwards, stateful, unroll, name,
                         trainable, zero_output_for_mask)
        self.recurrent_activation = self._gate_activation("recurrent_activation",
                                                          recurrent_activation)
        self.reset_after = bool(reset_after)
        self.use_cudnn = self._check_use_cudnn(use_cudnn)

    def get_config(self):
        return dict(super().get_config(), recurrent_activation=self._recurrent_activation,
                    reset_after=self.reset_after, use_cudnn=self.use_cudnn)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _biases(self, call):
        """(input bias, recurrent bias), each (3u,), split from bias (2, 3u) by concat_backward."""
        b, u = self.backend, self.units
        parts = [call.buffer("input_bias", (1, 3 * u)), call.buffer("recurrent_bias", (1, 3 * u))]
        b.concat_backward(parts, b.reshape(self.bias.value, (1, 6 * u)))
        return [b.reshape(p, (3 * u,)) for p in parts]

    def _run_forward(self, call, gates, steps, n):
        b, u = self.backend, self.units
        if not self.reset_after:
            self._add_input_bias(gates, steps, n)
            call.gates = gates
            hseq = call.hseq = call.buffer("hseq", (steps, n, u))
            recs = call.recs = call.buffer("recs", (steps, n, 3 * u))
            b.gru_reset_before_forward(hseq, gates, recs, call.initial[0],
                                       self.recurrent_kernel.value, self._activation,
                                       self._recurrent_activation, mask=call.step_mask,
                                       recurrent_mask=call.recurrent_mask)
            return hseq
        recurrent_bias = call.buffer("zero_bias", (3 * u,))
        if self.use_bias:
            input_bias, recurrent_bias = self._biases(call)
            g2 = b.reshape(gates, (steps * n, 3 * u))
            b.bias_add(g2, g2, input_bias)
        else:
            b.fill(recurrent_bias, 0.0)
        call.gates = gates
        hseq = call.hseq = call.buffer("hseq", (steps, n, u))
        recs = call.recs = call.buffer("recs", (steps, n, 3 * u))
        b.gru_forward(hseq, gates, recs, call.initial[0], self.recurrent_kernel.value,
                      recurrent_bias, self._activation, self._recurrent_activation,
                      mask=call.step_mask,
                      recurrent_mask=call.recurrent_mask)
        return hseq

    def _run_backward(self, call, dhseq, dstates, steps, n):
        u = self.units
        dgates = call.buffer("dgates", (steps, n, 3 * u))
        if not self.reset_after:
            self.backend.gru_reset_before_backward(
                dgates, self._recurrent_kernel_grad(call), call.buffer("dh0", (n, u)), dhseq,
                call.gates, call.recs, call.hseq, call.initial[0], self.recurrent_kernel.value,
                self._activation, self._recurrent_activation, mask=call.step_mask,
                recurrent_mask=call.recurrent_mask)
            return dgates
        drecs = call.drecs = call.buffer("drecs", (steps, n, 3 * u))
        self.backend.gru_backward(dgates, drecs, self._recurrent_kernel_grad(call),
                                  call.buffer("dh0", (n, u)), dhseq, call.gates, call.recs,
                                  call.hseq, call.initial[0], self.recurrent_kernel.value,
                                  self._activation, self._recurrent_activation,
                                  mask=call.step_mask,
                                  recurrent_mask=call.recurrent_mask)
        return dgates

    def _bias_grad(self, call, dgates2):
        if not self.reset_after:   # the input bias only
            super()._bias_grad(call, dgates2)
            return
        b, u = self.backend, self.units
        steps_n = b.shape(dgates2)[0]
        parts = [call.buffer("dinput_bias", (1, 3 * u)), call.buffer("drecurrent_bias", (1, 3 * u))]
        b.bias_grad(b.reshape(parts[0], (3 * u,)), dgates2)
        b.bias_grad(b.reshape(parts[1], (3 * u,)), b.reshape(call.drecs, (steps_n, 3 * u)))
        b.concat_forward(b.reshape(call.grad(self.bias), (1, 6 * u)), parts)


__all__ = ["SimpleRNN", "LSTM", "GRU"]
