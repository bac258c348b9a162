"""The fused LSTM / GRU gate ops on the device (kernels/recurrent.cl; a mixin of
OpenCLBackend, see minidl/backends/base.py for each op's contract). The sequence loops around
them are minidl/backends/recurrent_device.py's."""

from ..recurrent_host import check_gate_activation


class RecurrentOps:
    def _gate_step(self, op, gates, width, activation, recurrent_activation, states):
        """(n, units, codes) of a step after checking its gate rows and (n, u) state tensors."""
        codes = (check_gate_activation(op, "activation", activation),
                 check_gate_activation(op, "recurrent_activation", recurrent_activation))
        if len(gates.shape) != 2 or gates.shape[1] % width:
            raise ValueError(f"opencl {op}: gates must be (N, {width} * units), got {gates.shape}")
        n, u = gates.shape[0], gates.shape[1] // width
        for name, t in states.items():
            self._check(op, name, t, gates.shape if name in ("dgates", "rec", "drec") else (n, u))
        return (n, u) + codes

    def lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        op = "lstm_gates_forward"
        n, u, act, ract = self._gate_step(op, gates, 4, activation, recurrent_activation,
                                          {"h": h, "c": c, "c_prev": c_prev})
        self._run1d("recurrent.cl", op, n * u, h, c, gates, c_prev, act, ract, n, u)

    def lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                            recurrent_activation):
        op = "lstm_gates_backward"
        states = {"dgates": dgates, "dc_prev": dc_prev, "dh": dh, "c": c, "c_prev": c_prev}
        if dc is not None:
            states["dc"] = dc
        n, u, act, ract = self._gate_step(op, gates, 4, activation, recurrent_activation, states)
        self._run1d("recurrent.cl", op, n * u, dgates, dc_prev, dh, dh if dc is None else dc,
                    int(dc is not None), gates, c, c_prev, act, ract, n, u)

    def gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        op = "gru_gates_forward"
        n, u, act, ract = self._gate_step(op, gates, 3, activation, recurrent_activation,
                                          {"h": h, "rec": rec, "h_prev": h_prev})
        self._run1d("recurrent.cl", op, n * u, h, gates, rec, h_prev, act, ract, n, u)

    def gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                           recurrent_activation):
        op = "gru_gates_backward"
        n, u, act, ract = self._gate_step(
            op, gates, 3, activation, recurrent_activation,
            {"dgates": dgates, "drec": drec, "dh_prev": dh_prev, "dh": dh, "rec": rec,
             "h_prev": h_prev})
        self._run1d("recurrent.cl", op, n * u, dgates, drec, dh_prev, dh, gates, rec, h_prev, act,
                    ract, n, u)
