"""GRU with reset_after=False (Keras's other GRU: the reset gate applied to h_{t-1} before the
recurrent projection), as sequence ops made of the contract's ops, shared by every backend.

Per step t, with U = [U_zr | U_h] the recurrent kernel (u, 3u) split by columns:

    rec_zr = h_{t-1} U_zr                       (one gemm)
    r      = recurrent_activation(x_r + rec_r)
    x_h   += (r h_{t-1}) U_h                    (one gemm, added into the step's x_h)
    z, r, hh, h_t = the fused GRU gate op on (gates, [rec_zr, 0], h_{t-1})

so the fused gate op computes hh = activation(x_h + (r h_{t-1}) U_h) (its `r rec_h` term is
zero). With recurrent dropout masks M = [M_z, M_r, M_h] (N, 3u) (Keras's per-gate masks on
h_{t-1}), rec_zr is recurrent_dropout.py's per-gate projection and the reset term is
(r h_{t-1} M_h) U_h; h_t = z h_{t-1} + (1 - z) hh keeps the undropped h_{t-1}, as Keras.

The gate op's backward gives dz and dhh; what goes through r h_{t-1} (dr, and the part of
dL/dh_{t-1}) is added by the ops below. r is computed twice (once here, once in the gate op):
the price of reusing the fused op. Steps move between the (T, N, k) sequences and contiguous
(N, k) scratch tensors with strided_copy / strided_add, as in recurrent_device.py, so the
same loop serves host and device tensors; nothing is allocated per step.
"""

from .contract.recurrent import check_gate_activation, check_sequence, check_step_mask


def _check(op, hseq, gates, recs, h0, recurrent_kernel, mask):
    if len(gates.shape) != 3 or gates.shape[2] % 3:
        raise ValueError(f"{op}: the gate sequence must be (T, N, 3 * units), got "
                         f"{tuple(gates.shape)}")
    steps, n, u = gates.shape[0], gates.shape[1], gates.shape[2] // 3
    check_sequence(op, "hseq", hseq, (steps, n, u))
    check_sequence(op, "recs", recs, gates.shape)
    check_sequence(op, "h0", h0, (n, u))
    check_sequence(op, "recurrent_kernel", recurrent_kernel, (u, 3 * u))
    check_step_mask(op, mask, steps, n)
    return steps, n, u


class GruResetBeforeOps:
    """gru_reset_before_forward / _backward (see minidl/backends/base.py for the contract)."""

    def _step_of(self, name, seq, t):
        """seq[t] of a (T, N, k) sequence, copied into the scratch tensor `name` (N, k)."""
        _, n, k = seq.shape
        step = self._scratch_tensor(name, (n, k))
        self.strided_copy(step, seq, t * n * k, (k, 1))
        return step

    def _columns(self, name, x, start, width):
        """x[:, start:start + width] of an (rows, k) tensor, into the scratch tensor `name`."""
        rows, k = x.shape
        out = self._scratch_tensor(name, (rows, width))
        self.strided_copy(out, x, start, (k, 1))
        return out

    def _split_kernel(self, recurrent_kernel, u):
        return (self._columns("rb_kernel_zr", recurrent_kernel, 0, 2 * u),
                self._columns("rb_kernel_h", recurrent_kernel, 2 * u, u))

    def _split_masks(self, recurrent_mask, kernel_zr, u):
        """(M_zr (N, 2u), its per-gate parts, M_h (N, u)), or Nones without masks."""
        if recurrent_mask is None:
            return None, None, None
        mask_zr = self._columns("rb_mask_zr", recurrent_mask, 0, 2 * u)
        return (mask_zr, self._projection_parts(kernel_zr, mask_zr),
                self._columns("rb_mask_h", recurrent_mask, 2 * u, u))

    def gru_reset_before_forward(self, hseq, gates, recs, h0, recurrent_kernel, activation,
                                 recurrent_activation, mask=None, recurrent_mask=None):
        op = "gru_reset_before_forward"
        steps, n, u = _check(op, hseq, gates, recs, h0, recurrent_kernel, mask)
        check_gate_activation(op, "recurrent_activation", recurrent_activation)
        kernel_zr, kernel_h = self._split_kernel(recurrent_kernel, u)
        mask_zr, parts_zr, mask_h = self._split_masks(recurrent_mask, kernel_zr, u)
        acts = self._scratch_tensor("rb_acts", gates.shape)
        for seq in (hseq, recs, acts):   # written by scatter-adds, step by step
            self.fill(seq, 0.0)
        rec = self._scratch_tensor("rb_rec", (n, 3 * u))
        rec_zr = self._scratch_tensor("rb_rec_zr", (n, 2 * u))
        r = self._scratch_tensor("rb_r", (n, u))
        rh = self._scratch_tensor("rb_rh", (n, u))
        rec_h = self._scratch_tensor("rb_rec_h", (n, u))
        h = self._scratch_tensor("rb_h", (n, u))
        h_prev = h0
        for t in range(steps):
            g = self._step_of("rb_step", gates, t)
            self._project(rec_zr, h_prev, kernel_zr, 0.0, mask_zr, parts_zr)
            self.fill(rec, 0.0)
            self.strided_add(rec, rec_zr, 0, (3 * u, 1))
            self.strided_copy(r, g, u, (3 * u, 1))
            self.add(r, r, self._columns("rb_rec_r", rec_zr, u, u))
            self.activation_forward(r, r, recurrent_activation)
            self.multiply(rh, r, h_prev)
            if mask_h is not None:
                self.multiply(rh, rh, mask_h)
            self.gemm(rec_h, rh, kernel_h)
            self.strided_add(g, rec_h, 2 * u, (3 * u, 1))
            self.gru_gates_forward(h, g, rec, h_prev, activation, recurrent_activation)
            if mask is not None:   # a skipped row keeps its state
                self.where(h, self._step_of("rb_mask", mask, t), h, h_prev)
            for seq, step in ((hseq, h), (recs, rec), (acts, g)):
                self.strided_add(seq, step, t * n * step.shape[1], (step.shape[1], 1))
            h_prev = self._step_of("rb_h_prev", hseq, t)
        self.copy(gates, acts)

    def gru_reset_before_backward(self, dgates, drecurrent_kernel, dh0, dhseq, gates, recs, hseq,
                                  h0, recurrent_kernel, activation, recurrent_activation,
                                  mask=None, recurrent_mask=None):
        op = "gru_reset_before_backward"
        steps, n, u = _check(op, hseq, gates, recs, h0, recurrent_kernel, mask)
        check_sequence(op, "dgates", dgates, gates.shape)
        check_sequence(op, "dhseq", dhseq, hseq.shape)
        check_sequence(op, "drecurrent_kernel", drecurrent_kernel, (u, 3 * u))
        check_gate_activation(op, "recurrent_activation", recurrent_activation)
        kernel_zr, kernel_h = self._split_kernel(recurrent_kernel, u)
        mask_zr, parts_zr, mask_h = self._split_masks(recurrent_mask, kernel_zr, u)
        dkernel_zr = self._scratch_tensor("rb_dkernel_zr", (u, 2 * u))
        dkernel_zr_step = self._scratch_tensor("rb_dkernel_zr_step", (u, 2 * u))
        dkernel_h = self._scratch_tensor("rb_dkernel_h", (u, u))
        self.fill(dgates, 0.0)
        dg = self._scratch_tensor("rb_dstep", (n, 3 * u))
        dq = self._scratch_tensor("rb_drec", (n, 3 * u))
        dh_step = self._scratch_tensor("rb_dh_step", (n, u))
        dh_z = self._scratch_tensor("rb_dh_z", (n, u))
        r = self._scratch_tensor("rb_r", (n, u))
        rh = self._scratch_tensor("rb_rh", (n, u))
        drh = self._scratch_tensor("rb_drh", (n, u))
        dr = self._scratch_tensor("rb_dr", (n, u))
        self.strided_copy(dh0, dhseq, (steps - 1) * n * u, (u, 1))
        for t in range(steps - 1, -1, -1):
            g = self._step_of("rb_step", gates, t)
            rec = self._step_of("rb_rec", recs, t)
            h_prev = h0 if t == 0 else self._step_of("rb_h_prev", hseq, t - 1)
            # dh_step: dL/dh_t of the rows that ran; dh0 keeps the skipped rows' (mask)
            if mask is None:
                self.copy(dh_step, dh0)
                self.fill(dh0, 0.0)
            else:
                self.binary(dh_step, dh0, self._step_of("rb_mask", mask, t), "multiply")
                self.binary(dh0, dh0, dh_step, "subtract")
            self.gru_gates_backward(dg, dq, dh_z, dh_step, g, rec, h_prev, activation,
                                    recurrent_activation)
            self.add(dh0, dh0, dh_z)
            # through x_h += (r h_{t-1}) U_h: dL/d(r h_{t-1}) = dhh_pre U_h^T
            da = self._columns("rb_da", dg, 2 * u, u)
            self.gemm(drh, da, kernel_h, trans_b=True)
            self.strided_copy(r, g, u, (3 * u, 1))
            self.multiply(rh, r, h_prev)
            if mask_h is not None:   # the reset term's input was r h_{t-1} M_h
                self.multiply(rh, rh, mask_h)
                self.multiply(drh, drh, mask_h)
            self.gemm(dkernel_h, rh, da, beta=1.0 if t < steps - 1 else 0.0, trans_a=True)
            self.multiply(dr, drh, h_prev)
            self.activation_backward(dr, dr, r, recurrent_activation)
            self.strided_add(dg, dr, u, (3 * u, 1))   # the gate op's dr is 0: rec_h was 0
            self.multiply(drh, drh, r)
            self.add(dh0, dh0, drh)
            dzr = self._columns("rb_dzr", dg, 0, 2 * u)
            self._project_backward(dh0, dzr, kernel_zr, 1.0, mask_zr, parts_zr)
            if mask_zr is None:
                self.gemm(dkernel_zr, h_prev, dzr, beta=1.0 if t < steps - 1 else 0.0,
                          trans_a=True)
            else:
                self._project_kernel_grad(dkernel_zr_step, h_prev, dzr, mask_zr)
                if t < steps - 1:
                    self.add(dkernel_zr, dkernel_zr, dkernel_zr_step)
                else:
                    self.copy(dkernel_zr, dkernel_zr_step)
            self.strided_add(dgates, dg, t * n * 3 * u, (3 * u, 1))
            if t > 0:
                self.add(dh0, dh0, self._step_of("rb_dh_next", dhseq, t - 1))
        self.fill(drecurrent_kernel, 0.0)
        self.strided_add(drecurrent_kernel, dkernel_zr, 0, (3 * u, 1))
        self.strided_add(drecurrent_kernel, dkernel_h, 2 * u, (3 * u, 1))
