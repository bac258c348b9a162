"""The fused LSTM / GRU gate ops on the C kernels of csrc/rnn_gates.c (a mixin of CpuBackend;
see minidl/backends/base.py for each op's contract). The sequence loops around them are
minidl/backends/recurrent_host.py's."""

from ..recurrent_host import check_gate_activation
from ._ffi import checked, ffi, output, raise_for_status


def _step(op, gates, width, activation, recurrent_activation):
    """(n, units, activation code, recurrent activation code) of a step's gate rows."""
    codes = (check_gate_activation(op, "activation", activation),
             check_gate_activation(op, "recurrent_activation", recurrent_activation))
    if gates.ndim != 2 or gates.shape[1] % width:
        raise ValueError(f"{op}: gates must be (N, {width} * units), got {tuple(gates.shape)}")
    return (gates.shape[0], gates.shape[1] // width) + codes


def _check(op, status):
    if status:
        raise_for_status(op, status)


class CpuRecurrentOps:
    def lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        op = "lstm_gates_forward"
        n, u, act, ract = _step(op, gates, 4, activation, recurrent_activation)
        _check(op, self._lib.minidl_lstm_gates_forward(
            output(op, "h", h, (n, u)), output(op, "c", c, (n, u)),
            output(op, "gates", gates, gates.shape),
            checked(op, "c_prev", c_prev, (n, u)), act, ract, n, u))

    def lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                            recurrent_activation):
        op = "lstm_gates_backward"
        n, u, act, ract = _step(op, gates, 4, activation, recurrent_activation)
        pdc = ffi.NULL if dc is None else checked(op, "dc", dc, (n, u))
        _check(op, self._lib.minidl_lstm_gates_backward(
            output(op, "dgates", dgates, gates.shape), output(op, "dc_prev", dc_prev, (n, u)),
            checked(op, "dh", dh, (n, u)), pdc, checked(op, "gates", gates),
            checked(op, "c", c, (n, u)),
            checked(op, "c_prev", c_prev, (n, u)), act, ract, n, u))

    def gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        op = "gru_gates_forward"
        n, u, act, ract = _step(op, gates, 3, activation, recurrent_activation)
        _check(op, self._lib.minidl_gru_gates_forward(
            output(op, "h", h, (n, u)), output(op, "gates", gates, gates.shape),
            checked(op, "rec", rec, gates.shape), checked(op, "h_prev", h_prev, (n, u)), act, ract,
            n, u))

    def gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                           recurrent_activation):
        op = "gru_gates_backward"
        n, u, act, ract = _step(op, gates, 3, activation, recurrent_activation)
        _check(op, self._lib.minidl_gru_gates_backward(
            output(op, "dgates", dgates, gates.shape), output(op, "drec", drec, gates.shape),
            output(op, "dh_prev", dh_prev, (n, u)), checked(op, "dh", dh, (n, u)),
            checked(op, "gates", gates), checked(op, "rec", rec, gates.shape),
            checked(op, "h_prev", h_prev, (n, u)), act, ract, n, u))
