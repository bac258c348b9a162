"""The sequence loops of the recurrent section (contract/recurrent.py, which checked every
argument) for the backends that keep tensors in host memory.

numpy and cpu tensors are numpy arrays, so a time step of a time-major (T, N, k) sequence is
the view seq[t], contiguous and free. Each loop below runs, per step, one backend gemm for the
recurrent projection and one fused gate op (the step ops of the contract: numpy formulas on
the numpy backend, C kernels on cpu); the weight gradients of the recurrent kernel are summed
with one gemm over the whole sequence at the end. Nothing is allocated per step: the carried
gradients live in the caller's dh0 / dc0.
"""

def _previous(seq, first, t):
    """The state before step t: `first` (the initial state) at t = 0, else seq[t - 1]."""
    return first if t == 0 else seq[t - 1]


def _recurrent_kernel_grad(b, drecurrent_kernel, hseq, h0, dz):
    """drecurrent_kernel = sum over t of h_{t-1}^T dz_t: h0^T dz_0 plus one gemm over steps 1.."""
    t, n, u = hseq.shape
    b.gemm(drecurrent_kernel, h0, dz[0], trans_a=True)
    if t > 1:
        b.gemm(drecurrent_kernel, hseq[:-1].reshape(-1, u), dz[1:].reshape(-1, dz.shape[2]),
               beta=1.0, trans_a=True)


class HostRecurrentOps:
    """The lstm_* / gru_* / simple_rnn_* sequence ops of NumpyBackend and CpuBackend."""

    def _lstm_forward(self, hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                     recurrent_activation):
        steps = hseq.shape[0]
        for t in range(steps):
            self.gemm(gates[t], _previous(hseq, h0, t), recurrent_kernel, beta=1.0)
            self._lstm_gates_forward(hseq[t], cseq[t], gates[t], _previous(cseq, c0, t), activation,
                                    recurrent_activation)

    def _lstm_backward(self, dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq, hseq,
                      h0, c0, recurrent_kernel, activation, recurrent_activation):
        steps = dhseq.shape[0]
        # dh0 carries dL/dh of the step being run, dc0 dL/dc: both end as the initial state's
        self.copy(dh0, dhseq[steps - 1])
        if dc_last is None:
            self.fill(dc0, 0.0)
        else:
            self.copy(dc0, dc_last)
        for t in range(steps - 1, -1, -1):
            self._lstm_gates_backward(dgates[t], dc0, dh0, dc0, gates[t], cseq[t],
                                     _previous(cseq, c0, t), activation, recurrent_activation)
            if t > 0:
                self.copy(dh0, dhseq[t - 1])
            self.gemm(dh0, dgates[t], recurrent_kernel, beta=1.0 if t > 0 else 0.0, trans_b=True)
        _recurrent_kernel_grad(self, drecurrent_kernel, hseq, h0, dgates)

    def _gru_forward(self, hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                    recurrent_activation):
        steps = hseq.shape[0]
        for t in range(steps):
            h_prev = _previous(hseq, h0, t)
            self.gemm(recs[t], h_prev, recurrent_kernel)
            self.bias_add(recs[t], recs[t], recurrent_bias)
            self._gru_gates_forward(hseq[t], gates[t], recs[t], h_prev, activation,
                                   recurrent_activation)

    def _gru_backward(self, dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                     recurrent_kernel, activation, recurrent_activation):
        steps = dhseq.shape[0]
        self.copy(dh0, dhseq[steps - 1])
        for t in range(steps - 1, -1, -1):
            # the kernel's dh_prev output (dh z) may overwrite its dh input: both are dh0
            self._gru_gates_backward(dgates[t], drecs[t], dh0, dh0, gates[t], recs[t],
                                    _previous(hseq, h0, t), activation, recurrent_activation)
            if t > 0:
                self.add(dh0, dh0, dhseq[t - 1])
            self.gemm(dh0, drecs[t], recurrent_kernel, beta=1.0, trans_b=True)
        _recurrent_kernel_grad(self, drecurrent_kernel, hseq, h0, drecs)

    def _simple_rnn_forward(self, hseq, pre, h0, recurrent_kernel, activation):
        steps = hseq.shape[0]
        for t in range(steps):
            self.gemm(pre[t], _previous(hseq, h0, t), recurrent_kernel, beta=1.0)
            self.activation_forward(hseq[t], pre[t], activation)

    def _simple_rnn_backward(self, dpre, drecurrent_kernel, dh0, dhseq, hseq, h0, recurrent_kernel,
                            activation):
        steps = dhseq.shape[0]
        self.copy(dh0, dhseq[steps - 1])
        for t in range(steps - 1, -1, -1):
            self.activation_backward(dpre[t], dh0, hseq[t], activation)
            if t > 0:
                self.copy(dh0, dhseq[t - 1])
            self.gemm(dh0, dpre[t], recurrent_kernel, beta=1.0 if t > 0 else 0.0, trans_b=True)
        _recurrent_kernel_grad(self, drecurrent_kernel, hseq, h0, dpre)
