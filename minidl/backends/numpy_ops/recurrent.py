"""The recurrent section's step ops on the numpy backend: the reference of the fused LSTM / GRU
gate ops (one time step; a mixin of NumpyBackend). The contract
(minidl/backends/contract/recurrent.py) checked every shape and activation. The formulas are written
out plainly: they are what the C and OpenCL gate kernels are tested against."""

import numpy as np

from .losses import stable_sigmoid


def gate_forward(name, x):
    if name == "sigmoid":
        return stable_sigmoid(x)
    if name == "tanh":
        return np.tanh(x)
    if name == "relu":
        return np.where(x > 0, x, np.where(np.isnan(x), x, 0))
    if name == "hard_sigmoid":
        return np.clip(x / 6 + 0.5, 0, 1)
    return x


def gate_grad(name, y):
    """f'(x) from y = f(x)."""
    if name == "sigmoid":
        return y * (1 - y)
    if name == "tanh":
        return 1 - y * y
    if name == "relu":
        return (y > 0).astype(y.dtype)
    if name == "hard_sigmoid":
        return ((y > 0) & (y < 1)).astype(y.dtype) / 6
    return np.ones_like(y)


class NumpyRecurrentOps:
    """The gate ops of NumpyBackend (the sequence loops: recurrent_host.py)."""

    def _lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        u = gates.shape[1] // 4
        i, f, g, o = (gates[:, k * u:(k + 1) * u] for k in range(4))
        i[...] = gate_forward(recurrent_activation, i)
        f[...] = gate_forward(recurrent_activation, f)
        g[...] = gate_forward(activation, g)
        o[...] = gate_forward(recurrent_activation, o)
        c[...] = f * c_prev + i * g
        h[...] = o * gate_forward(activation, c)

    def _lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                            recurrent_activation):
        u = gates.shape[1] // 4
        i, f, g, o = (gates[:, k * u:(k + 1) * u] for k in range(4))
        a = gate_forward(activation, c)
        dck = dh * o * gate_grad(activation, a)
        if dc is not None:
            dck = dck + dc
        dgates[:, :u] = dck * g * gate_grad(recurrent_activation, i)
        dgates[:, u:2 * u] = dck * c_prev * gate_grad(recurrent_activation, f)
        dgates[:, 2 * u:3 * u] = dck * i * gate_grad(activation, g)
        dgates[:, 3 * u:] = dh * a * gate_grad(recurrent_activation, o)
        dc_prev[...] = dck * f

    def _gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        u = gates.shape[1] // 3
        z = gate_forward(recurrent_activation, gates[:, :u] + rec[:, :u])
        r = gate_forward(recurrent_activation, gates[:, u:2 * u] + rec[:, u:2 * u])
        hh = gate_forward(activation, gates[:, 2 * u:] + r * rec[:, 2 * u:])
        gates[:, :u], gates[:, u:2 * u], gates[:, 2 * u:] = z, r, hh
        h[...] = z * h_prev + (1 - z) * hh

    def _gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                           recurrent_activation):
        u = gates.shape[1] // 3
        z, r, hh = gates[:, :u], gates[:, u:2 * u], gates[:, 2 * u:]
        dh = dh.copy()   # dh_prev may alias dh
        da = dh * (1 - z) * gate_grad(activation, hh)
        dz = dh * (h_prev - hh) * gate_grad(recurrent_activation, z)
        dr = da * rec[:, 2 * u:] * gate_grad(recurrent_activation, r)
        dgates[:, :u] = drec[:, :u] = dz
        dgates[:, u:2 * u] = drec[:, u:2 * u] = dr
        dgates[:, 2 * u:] = da
        drec[:, 2 * u:] = da * r
        dh_prev[...] = dh * z
