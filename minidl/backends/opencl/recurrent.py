"""The recurrent section's step ops on the opencl backend: the fused LSTM / GRU gate ops
(kernels/recurrent.cl; a mixin of OpenCLBackend, its _run1d). The contract
(minidl/backends/contract/recurrent.py) checked every shape and activation. The sequence loops
around them are minidl/backends/recurrent_device.py's."""

from ... import activations


def _codes(op, activation, recurrent_activation):
    """The kernels' numbers of the two gate activations."""
    return activations.code(op, activation), activations.code(op, recurrent_activation)


class RecurrentOps:
    """The gate ops of OpenCLBackend."""

    def _lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        op = "lstm_gates_forward"
        n, u = gates.shape[0], gates.shape[1] // 4
        self._run1d("recurrent.cl", op, n * u, h, c, gates, c_prev, *_codes(op, activation, recurrent_activation),
                    n, u)

    def _lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                             recurrent_activation):
        op = "lstm_gates_backward"
        n, u = gates.shape[0], gates.shape[1] // 4
        # an absent dc is never read: dh stands in for its buffer
        self._run1d("recurrent.cl", op, n * u, dgates, dc_prev, dh, dh if dc is None else dc,
                    int(dc is not None), gates, c, c_prev, *_codes(op, activation, recurrent_activation), n, u)

    def _gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        op = "gru_gates_forward"
        n, u = gates.shape[0], gates.shape[1] // 3
        self._run1d("recurrent.cl", op, n * u, h, gates, rec, h_prev, *_codes(op, activation, recurrent_activation),
                    n, u)

    def _gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                            recurrent_activation):
        op = "gru_gates_backward"
        n, u = gates.shape[0], gates.shape[1] // 3
        self._run1d("recurrent.cl", op, n * u, dgates, drec, dh_prev, dh, gates, rec, h_prev,
                    *_codes(op, activation, recurrent_activation), n, u)
