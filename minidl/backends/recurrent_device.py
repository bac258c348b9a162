"""The sequence loops of the recurrent ops for a backend whose tensors live on a device.

A device tensor cannot be viewed at an arbitrary offset (an OpenCL sub-buffer must start on
the device's base-address alignment), so a step of a time-major (T, N, k) sequence is moved
between the sequence and a contiguous (N, k) scratch with the contract's strided_copy (gather)
and strided_add (scatter into a sequence zeroed first). Per step the loops run the same
backend ops as recurrent_host.py's: one gemm for the recurrent projection and one fused gate
op (with a Keras mask, the contract's `where` blends a step's new states into the carried
ones, as recurrent_host.py's loops do); the recurrent kernel's gradient is one gemm over the
whole sequence, against the states h_{t-1} gathered once. The scratch tensors are the
backend's `_scratch_tensor`s, kept between calls: nothing is allocated per step.
"""

from .gru_reset_before import GruResetBeforeOps
from .recurrent_dropout import RecurrentDropoutProjection


class DeviceRecurrentOps(RecurrentDropoutProjection, GruResetBeforeOps):
    """lstm_* / gru_* / simple_rnn_* sequence ops of the contract through strided copies."""

    def _get_step(self, name, seq, t):
        """seq[t] copied into the scratch tensor `name` (N, k)."""
        _, n, k = seq.shape
        step = self._scratch_tensor(name, (n, k))
        self.strided_copy(step, seq, t * n * k, (k, 1))
        return step

    def _put_step(self, seq, t, step):
        """seq[t] += step (seq was zeroed: a store)."""
        _, n, k = seq.shape
        self.strided_add(seq, step, t * n * k, (k, 1))

    def _previous_states(self, name, hseq, h0):
        """(T * N, u) = [h0; hseq[:-1]], the h_{t-1} of every step, for the kernel gradient."""
        steps, n, u = hseq.shape
        prev = self._scratch_tensor(name, (steps * n, u))
        self.fill(prev, 0.0)
        self.strided_add(prev, h0, 0, (u, 1))
        if steps > 1:
            self.strided_add(prev, self.view(hseq, ((steps - 1) * n, u)), n * u, (u, 1))
        return prev

    def _split_masked(self, d_step, d_carry, m):
        """d_step = d_carry on the rows that ran (m = 1), 0 elsewhere; d_carry keeps the rest
        (the skipped rows' dL/dstate, which goes straight to the step before)."""
        self.binary(d_step, d_carry, m, "multiply")
        self.binary(d_carry, d_carry, d_step, "subtract")

    def _lstm_forward(self, hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                     recurrent_activation, mask=None, recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask)
        h, c = self._scratch_tensor("rnn_h", (n, u)), self._scratch_tensor("rnn_c", (n, u))
        acts = self._scratch_tensor("rnn_acts", gates.shape)
        for seq in (hseq, cseq, acts):
            self.fill(seq, 0.0)
        h_prev, c_prev = h0, c0
        for t in range(steps):
            g = self._get_step("rnn_step", gates, t)
            self._project(g, h_prev, recurrent_kernel, 1.0, recurrent_mask, gate_parts)
            self._lstm_gates_forward(h, c, g, c_prev, activation, recurrent_activation)
            if mask is not None:   # a skipped row keeps its states
                m = self._get_step("rnn_mask", mask, t)
                self.where(h, m, h, h_prev)
                self.where(c, m, c, c_prev)
            self._put_step(hseq, t, h)
            self._put_step(cseq, t, c)
            self._put_step(acts, t, g)
            h_prev = self._get_step("rnn_h_prev", hseq, t)
            c_prev = self._get_step("rnn_c_prev", cseq, t)
        self.copy(gates, acts)

    def _lstm_backward(self, dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq, hseq,
                      h0, c0, recurrent_kernel, activation, recurrent_activation, mask=None,
                      recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask,
                                            transpose=True)
        self.fill(dgates, 0.0)
        self.strided_copy(dh0, dhseq, (steps - 1) * n * u, (u, 1))
        if dc_last is None:
            self.fill(dc0, 0.0)
        else:
            self.copy(dc0, dc_last)
        dg = self._scratch_tensor("rnn_dstep", (n, 4 * u))
        if mask is not None:
            dh, dc = self._scratch_tensor("rnn_dh", (n, u)), self._scratch_tensor("rnn_dc", (n, u))
            dc_prev = self._scratch_tensor("rnn_dc_prev", (n, u))
            dh_step = self._scratch_tensor("rnn_dh_step", (n, u))
        for t in range(steps - 1, -1, -1):
            g = self._get_step("rnn_step", gates, t)
            c = self._get_step("rnn_c", cseq, t)
            c_prev = c0 if t == 0 else self._get_step("rnn_c_prev", cseq, t - 1)
            if mask is None:
                self._lstm_gates_backward(dg, dc0, dh0, dc0, g, c, c_prev, activation,
                                         recurrent_activation)
            else:
                m = self._get_step("rnn_mask", mask, t)
                self._split_masked(dh, dh0, m)
                self._split_masked(dc, dc0, m)
                self._lstm_gates_backward(dg, dc_prev, dh, dc, g, c, c_prev, activation,
                                         recurrent_activation)
                self.add(dc0, dc0, dc_prev)
            self._put_step(dgates, t, dg)
            if t > 0:
                if mask is None:
                    self.strided_copy(dh0, dhseq, (t - 1) * n * u, (u, 1))
                else:
                    self.strided_copy(dh_step, dhseq, (t - 1) * n * u, (u, 1))
                    self.add(dh0, dh0, dh_step)
            beta = 1.0 if t > 0 or mask is not None else 0.0
            self._project_backward(dh0, dg, recurrent_kernel, beta, recurrent_mask, gate_parts)
        prev = self._previous_states("rnn_prev_states", hseq, h0)
        self._project_kernel_grad(drecurrent_kernel, prev, self.reshape(dgates, (steps * n, 4 * u)),
                                  recurrent_mask)

    def _gru_forward(self, hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                    recurrent_activation, mask=None, recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask)
        h, rec = self._scratch_tensor("rnn_h", (n, u)), self._scratch_tensor("rnn_rec", (n, 3 * u))
        acts = self._scratch_tensor("rnn_acts", gates.shape)
        for seq in (hseq, recs, acts):
            self.fill(seq, 0.0)
        h_prev = h0
        for t in range(steps):
            g = self._get_step("rnn_step", gates, t)
            self._project(rec, h_prev, recurrent_kernel, 0.0, recurrent_mask, gate_parts)
            self.bias_add(rec, rec, recurrent_bias)
            self._gru_gates_forward(h, g, rec, h_prev, activation, recurrent_activation)
            if mask is not None:
                self.where(h, self._get_step("rnn_mask", mask, t), h, h_prev)
            self._put_step(hseq, t, h)
            self._put_step(recs, t, rec)
            self._put_step(acts, t, g)
            h_prev = self._get_step("rnn_h_prev", hseq, t)
        self.copy(gates, acts)

    def _gru_backward(self, dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                     recurrent_kernel, activation, recurrent_activation, mask=None,
                     recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask,
                                            transpose=True)
        self.fill(dgates, 0.0)
        self.fill(drecs, 0.0)
        self.strided_copy(dh0, dhseq, (steps - 1) * n * u, (u, 1))
        dg = self._scratch_tensor("rnn_dstep", (n, 3 * u))
        dq = self._scratch_tensor("rnn_drec", (n, 3 * u))
        dh_step = self._scratch_tensor("rnn_dh_step", (n, u))
        if mask is not None:
            dh = self._scratch_tensor("rnn_dh", (n, u))
        for t in range(steps - 1, -1, -1):
            g = self._get_step("rnn_step", gates, t)
            rec = self._get_step("rnn_rec", recs, t)
            h_prev = h0 if t == 0 else self._get_step("rnn_h_prev", hseq, t - 1)
            if mask is None:
                self._gru_gates_backward(dg, dq, dh0, dh0, g, rec, h_prev, activation,
                                        recurrent_activation)
            else:
                self._split_masked(dh, dh0, self._get_step("rnn_mask", mask, t))
                self._gru_gates_backward(dg, dq, dh, dh, g, rec, h_prev, activation,
                                        recurrent_activation)
                self.add(dh0, dh0, dh)
            self._put_step(dgates, t, dg)
            self._put_step(drecs, t, dq)
            if t > 0:
                self.strided_copy(dh_step, dhseq, (t - 1) * n * u, (u, 1))
                self.add(dh0, dh0, dh_step)
            self._project_backward(dh0, dq, recurrent_kernel, 1.0, recurrent_mask, gate_parts)
        prev = self._previous_states("rnn_prev_states", hseq, h0)
        self._project_kernel_grad(drecurrent_kernel, prev, self.reshape(drecs, (steps * n, 3 * u)),
                                  recurrent_mask)

    def _simple_rnn_forward(self, hseq, pre, h0, recurrent_kernel, activation, mask=None,
    recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask)
        h = self._scratch_tensor("rnn_h", (n, u))
        acc = self._scratch_tensor("rnn_acts", pre.shape)
        self.fill(hseq, 0.0)
        self.fill(acc, 0.0)
        h_prev = h0
        for t in range(steps):
            p = self._get_step("rnn_step", pre, t)
            self._project(p, h_prev, recurrent_kernel, 1.0, recurrent_mask, gate_parts)
            self._put_step(acc, t, p)
            self.activation_forward(h, p, activation)
            if mask is not None:
                self.where(h, self._get_step("rnn_mask", mask, t), h, h_prev)
            self._put_step(hseq, t, h)
            h_prev = self._get_step("rnn_h_prev", hseq, t)
        self.copy(pre, acc)

    def _simple_rnn_backward(self, dpre, drecurrent_kernel, dh0, dhseq, hseq, h0, recurrent_kernel,
                            activation, mask=None, recurrent_mask=None):
        steps, n, u = hseq.shape
        gate_parts = self._projection_parts(recurrent_kernel, recurrent_mask,
                                            transpose=True)
        self.fill(dpre, 0.0)
        self.strided_copy(dh0, dhseq, (steps - 1) * n * u, (u, 1))
        dp = self._scratch_tensor("rnn_dstep", (n, u))
        if mask is not None:
            dh = self._scratch_tensor("rnn_dh", (n, u))
            dh_step = self._scratch_tensor("rnn_dh_step", (n, u))
        for t in range(steps - 1, -1, -1):
            h = self._get_step("rnn_h", hseq, t)
            if mask is None:
                self.activation_backward(dp, dh0, h, activation)
            else:
                self._split_masked(dh, dh0, self._get_step("rnn_mask", mask, t))
                self.activation_backward(dp, dh, h, activation)
            self._put_step(dpre, t, dp)
            if t > 0:
                if mask is None:
                    self.strided_copy(dh0, dhseq, (t - 1) * n * u, (u, 1))
                else:
                    self.strided_copy(dh_step, dhseq, (t - 1) * n * u, (u, 1))
                    self.add(dh0, dh0, dh_step)
            beta = 1.0 if t > 0 or mask is not None else 0.0
            self._project_backward(dh0, dp, recurrent_kernel, beta, recurrent_mask, gate_parts)
        prev = self._previous_states("rnn_prev_states", hseq, h0)
        self._project_kernel_grad(drecurrent_kernel, prev, self.reshape(dpre, (steps * n, u)),
                                  recurrent_mask)
