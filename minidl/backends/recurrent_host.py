"""The sequence loops of the recurrent ops for the backends that keep tensors in host memory.

numpy and cpu tensors are numpy arrays, so a time step of a time-major (T, N, k) sequence is
the view seq[t], contiguous and free. Each loop below runs, per step, one backend gemm for the
recurrent projection and one fused gate op (the step ops of the contract: numpy formulas on
the numpy backend, C kernels on cpu); the weight gradients of the recurrent kernel are summed
with one gemm over the whole sequence at the end. Nothing is allocated per step: the carried
gradients live in the caller's dh0 / dc0.
"""

from .recurrent_dropout import RecurrentDropoutProjection

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


class HostRecurrentOps(RecurrentDropoutProjection):
    """lstm_* / gru_* / simple_rnn_* sequence ops of the contract on host arrays.

    With a Keras mask (T, N, 1) (1.0: the step runs, 0.0: it is skipped) a step's new states
    are blended into the carried ones by the contract's `where` (a skipped row keeps its
    state); backward splits the carried dL/dstate the same way: the running rows' part goes
    through the step, the skipped rows' part straight to the step before."""

    def _scratch_tensor(self, name, shape):
        """A scratch array `name` of `shape` kept between calls (the per-step parts of the
        loops; one per shape in use, so nothing is allocated once the shapes are seen)."""
        held = getattr(self, "_rnn_scratch_arrays", None)
        if held is None:
            held = self._rnn_scratch_arrays = {}
        key = (name, tuple(shape))
        array = held.get(key)
        if array is None:
            array = held[key] = self.empty(tuple(shape))
        return array

    def _kernel_grad(self, drecurrent_kernel, hseq, h0, dz, recurrent_mask):
        """drecurrent_kernel = sum over t of dL/dU at step t (recurrent_dropout: of its
        per-gate projections, recurrent_dropout.py)."""
        if recurrent_mask is None:
            _recurrent_kernel_grad(self, drecurrent_kernel, hseq, h0, dz)
            return
        steps, n, u = hseq.shape
        previous = self._scratch_tensor("rnn_prev_states", (steps * n, u))
        self.copy(previous[:n], h0)
        if steps > 1:
            self.copy(previous[n:], hseq[:-1].reshape(-1, u))
        self._project_kernel_grad(drecurrent_kernel, previous, dz.reshape(steps * n, -1),
                                  recurrent_mask)

    def _split_masked(self, d_step, d_carry, m):
        """d_step = d_carry on the rows that ran (m = 1), 0 elsewhere; d_carry keeps the rest."""
        self.binary(d_step, d_carry, m, "multiply")
        self.binary(d_carry, d_carry, d_step, "subtract")

    def _lstm_forward(self, hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                     recurrent_activation, mask=None, recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask)
        for t in range(steps):
            h_prev, c_prev = _previous(hseq, h0, t), _previous(cseq, c0, t)
            self._project(gates[t], h_prev, recurrent_kernel, 1.0, recurrent_mask, gate_parts)
            self._lstm_gates_forward(hseq[t], cseq[t], gates[t], c_prev, activation,
                                    recurrent_activation)
            if mask is not None:
                self.where(hseq[t], mask[t], hseq[t], h_prev)
                self.where(cseq[t], mask[t], cseq[t], c_prev)

    def _lstm_backward(self, dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq, hseq,
                      h0, c0, recurrent_kernel, activation, recurrent_activation, mask=None,
                      recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask,
                                            transpose=True)
        # dh0 carries dL/dh of the step being run, dc0 dL/dc: both end as the initial state's
        self.copy(dh0, dhseq[steps - 1])
        if dc_last is None:
            self.fill(dc0, 0.0)
        else:
            self.copy(dc0, dc_last)
        if mask is not None:
            dh, dc = self._scratch_tensor("rnn_dh", (n, u)), self._scratch_tensor("rnn_dc", (n, u))
            dc_prev = self._scratch_tensor("rnn_dc_prev", (n, u))
        for t in range(steps - 1, -1, -1):
            if mask is None:
                self._lstm_gates_backward(dgates[t], dc0, dh0, dc0, gates[t], cseq[t],
                                         _previous(cseq, c0, t), activation, recurrent_activation)
            else:
                self._split_masked(dh, dh0, mask[t])
                self._split_masked(dc, dc0, mask[t])
                self._lstm_gates_backward(dgates[t], dc_prev, dh, dc, gates[t], cseq[t],
                                         _previous(cseq, c0, t), activation, recurrent_activation)
                self.add(dc0, dc0, dc_prev)
            if t > 0:
                if mask is None:
                    self.copy(dh0, dhseq[t - 1])
                else:
                    self.add(dh0, dh0, dhseq[t - 1])
            beta = 1.0 if t > 0 or mask is not None else 0.0
            self._project_backward(dh0, dgates[t], recurrent_kernel, beta, recurrent_mask, gate_parts)
        self._kernel_grad(drecurrent_kernel, hseq, h0, dgates, recurrent_mask)

    def _gru_forward(self, hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                    recurrent_activation, mask=None, recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask)
        for t in range(steps):
            h_prev = _previous(hseq, h0, t)
            self._project(recs[t], h_prev, recurrent_kernel, 0.0, recurrent_mask, gate_parts)
            self.bias_add(recs[t], recs[t], recurrent_bias)
            self._gru_gates_forward(hseq[t], gates[t], recs[t], h_prev, activation,
                                   recurrent_activation)
            if mask is not None:
                self.where(hseq[t], mask[t], hseq[t], h_prev)

    def _gru_backward(self, dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                     recurrent_kernel, activation, recurrent_activation, mask=None,
                     recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask,
                                            transpose=True)
        self.copy(dh0, dhseq[steps - 1])
        if mask is not None:
            dh = self._scratch_tensor("rnn_dh", (n, u))
        for t in range(steps - 1, -1, -1):
            h_prev = _previous(hseq, h0, t)
            if mask is None:
                # the kernel's dh_prev output (dh z) may overwrite its dh input: both are dh0
                self._gru_gates_backward(dgates[t], drecs[t], dh0, dh0, gates[t], recs[t], h_prev,
                                        activation, recurrent_activation)
            else:
                self._split_masked(dh, dh0, mask[t])
                self._gru_gates_backward(dgates[t], drecs[t], dh, dh, gates[t], recs[t], h_prev,
                                        activation, recurrent_activation)
                self.add(dh0, dh0, dh)
            if t > 0:
                self.add(dh0, dh0, dhseq[t - 1])
            self._project_backward(dh0, drecs[t], recurrent_kernel, 1.0, recurrent_mask, gate_parts)
        self._kernel_grad(drecurrent_kernel, hseq, h0, drecs, recurrent_mask)

    def _simple_rnn_forward(self, hseq, pre, h0, recurrent_kernel, activation, mask=None,
    recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask)
        for t in range(steps):
            h_prev = _previous(hseq, h0, t)
            self._project(pre[t], h_prev, recurrent_kernel, 1.0, recurrent_mask, gate_parts)
            self.activation_forward(hseq[t], pre[t], activation)
            if mask is not None:
                self.where(hseq[t], mask[t], hseq[t], h_prev)

    def _simple_rnn_backward(self, dpre, drecurrent_kernel, dh0, dhseq, hseq, h0, recurrent_kernel,
                            activation, mask=None, recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask,
                                            transpose=True)
        self.copy(dh0, dhseq[steps - 1])
        if mask is not None:
            dh = self._scratch_tensor("rnn_dh", (n, u))
        for t in range(steps - 1, -1, -1):
            if mask is None:
                self.activation_backward(dpre[t], dh0, hseq[t], activation)
                if t > 0:
                    self.copy(dh0, dhseq[t - 1])
            else:
                # a skipped row's hseq[t] is its previous state, but its dL/dh here is 0
                self._split_masked(dh, dh0, mask[t])
                self.activation_backward(dpre[t], dh, hseq[t], activation)
                if t > 0:
                    self.add(dh0, dh0, dhseq[t - 1])
            beta = 1.0 if t > 0 or mask is not None else 0.0
            self._project_backward(dh0, dpre[t], recurrent_kernel, beta, recurrent_mask, gate_parts)
        self._kernel_grad(drecurrent_kernel, hseq, h0, dpre, recurrent_mask)
