"""The recurrent section's step ops on the cpu backend: the fused LSTM / GRU gate ops on the C
kernels of csrc/rnn_gates.c (a mixin of CpuBackend, its _lib). The contract
(minidl/backends/contract/recurrent.py) checked every shape and activation; the pointers'
checks here are the cpu tensor's own. The sequence loops around them are
minidl/backends/recurrent_host.py's."""

from ... import activations
from ._ffi import checked, ffi, output, raise_for_status


def _codes(op, activation, recurrent_activation):
    """The kernels' numbers of the two gate activations."""
    return activations.code(op, activation), activations.code(op, recurrent_activation)


def _check(op, status):
    if status:
        raise_for_status(op, status)


class CpuRecurrentOps:
    """The gate ops of CpuBackend."""

    def _lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        op = "lstm_gates_forward"
        n, u = gates.shape[0], gates.shape[1] // 4
        _check(op, self._lib.minidl_lstm_gates_forward(
            output(op, "h", h), output(op, "c", c), output(op, "gates", gates), checked(op, "c_prev", c_prev),
            *_codes(op, activation, recurrent_activation), n, u))

    def _lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                             recurrent_activation):
        op = "lstm_gates_backward"
        n, u = gates.shape[0], gates.shape[1] // 4
        pdc = ffi.NULL if dc is None else checked(op, "dc", dc)
        _check(op, self._lib.minidl_lstm_gates_backward(
            output(op, "dgates", dgates), output(op, "dc_prev", dc_prev), checked(op, "dh", dh), pdc,
            checked(op, "gates", gates), checked(op, "c", c), checked(op, "c_prev", c_prev),
            *_codes(op, activation, recurrent_activation), n, u))

    def _gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        op = "gru_gates_forward"
        n, u = gates.shape[0], gates.shape[1] // 3
        _check(op, self._lib.minidl_gru_gates_forward(
            output(op, "h", h), output(op, "gates", gates), checked(op, "rec", rec),
            checked(op, "h_prev", h_prev), *_codes(op, activation, recurrent_activation), n, u))

    def _gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                            recurrent_activation):
        op = "gru_gates_backward"
        n, u = gates.shape[0], gates.shape[1] // 3
        _check(op, self._lib.minidl_gru_gates_backward(
            output(op, "dgates", dgates), output(op, "drec", drec), output(op, "dh_prev", dh_prev),
            checked(op, "dh", dh), checked(op, "gates", gates), checked(op, "rec", rec),
            checked(op, "h_prev", h_prev), *_codes(op, activation, recurrent_activation), n, u))
