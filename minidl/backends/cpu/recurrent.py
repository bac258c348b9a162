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

    # The sequence loops: without masks or recurrent dropout the whole LSTM / GRU recurrence runs in
    # one C call, each thread on its own batch rows (csrc/rnn_sequence.h); otherwise the
    # per-step loops of recurrent_host.py run.
    def _lstm_forward(self, hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                      recurrent_activation, mask=None, recurrent_mask=None):
        if mask is not None or recurrent_mask is not None:
            super()._lstm_forward(hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                                  recurrent_activation, mask, recurrent_mask)
            return
        op = "lstm_forward"
        steps, n, u = hseq.shape
        panels, kernel = self._packed_recurrent_kernel(recurrent_kernel, False).prepared
        _check(op, self._lib.minidl_lstm_sequence_forward(
            output(op, "hseq", hseq), output(op, "cseq", cseq), output(op, "gates", gates),
            checked(op, "h0", h0), checked(op, "c0", c0), ffi.cast("float *", panels.ctypes.data), kernel,
            *_codes(op, activation, recurrent_activation), steps, n, u))

    def _lstm_backward(self, dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq, hseq,
                       h0, c0, recurrent_kernel, activation, recurrent_activation, mask=None,
                       recurrent_mask=None):
        if mask is not None or recurrent_mask is not None:
            super()._lstm_backward(dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq,
                                   hseq, h0, c0, recurrent_kernel, activation, recurrent_activation,
                                   mask, recurrent_mask)
            return
        op = "lstm_backward"
        steps, n, u = hseq.shape
        panels, kernel = self._packed_recurrent_kernel(recurrent_kernel, True).prepared
        pdc_last = ffi.NULL if dc_last is None else checked(op, "dc_last", dc_last)
        _check(op, self._lib.minidl_lstm_sequence_backward(
            output(op, "dgates", dgates), output(op, "dh0", dh0), output(op, "dc0", dc0),
            checked(op, "dhseq", dhseq), pdc_last, checked(op, "gates", gates), checked(op, "cseq", cseq),
            checked(op, "c0", c0), ffi.cast("float *", panels.ctypes.data), kernel,
            *_codes(op, activation, recurrent_activation), steps, n, u))
        self._kernel_grad(drecurrent_kernel, hseq, h0, dgates, None)

    def _gru_forward(self, hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                     recurrent_activation, mask=None, recurrent_mask=None):
        if mask is not None or recurrent_mask is not None:
            super()._gru_forward(hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                                 recurrent_activation, mask, recurrent_mask)
            return
        op = "gru_forward"
        steps, n, u = hseq.shape
        panels, kernel = self._packed_recurrent_kernel(recurrent_kernel, False).prepared
        _check(op, self._lib.minidl_gru_sequence_forward(
            output(op, "hseq", hseq), output(op, "gates", gates), output(op, "recs", recs),
            checked(op, "h0", h0), ffi.cast("float *", panels.ctypes.data),
            checked(op, "recurrent_bias", recurrent_bias), kernel,
            *_codes(op, activation, recurrent_activation), steps, n, u))

    def _gru_backward(self, dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                      recurrent_kernel, activation, recurrent_activation, mask=None,
                      recurrent_mask=None):
        if mask is not None or recurrent_mask is not None:
            super()._gru_backward(dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                                  recurrent_kernel, activation, recurrent_activation, mask,
                                  recurrent_mask)
            return
        op = "gru_backward"
        steps, n, u = hseq.shape
        panels, kernel = self._packed_recurrent_kernel(recurrent_kernel, True).prepared
        _check(op, self._lib.minidl_gru_sequence_backward(
            output(op, "dgates", dgates), output(op, "drecs", drecs), output(op, "dh0", dh0),
            checked(op, "dhseq", dhseq), checked(op, "gates", gates), checked(op, "recs", recs),
            checked(op, "hseq", hseq), checked(op, "h0", h0), ffi.cast("float *", panels.ctypes.data),
            kernel, *_codes(op, activation, recurrent_activation), steps, n, u))
        self._kernel_grad(drecurrent_kernel, hseq, h0, drecs, None)
