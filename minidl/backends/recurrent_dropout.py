"""The recurrent projection of the sequence loops with Keras's recurrent_dropout: a mixin of
HostRecurrentOps and DeviceRecurrentOps made of contract ops (every backend).

Keras 3 drops h_{t-1} before the recurrent kernel with one mask per gate, drawn once per
sequence: gate g's projection is (h_{t-1} * M_g) U_g, U_g its (u, u) columns of the recurrent
kernel U (u, k u) and M_g its (N, u) columns of the masks M (N, k u) (already scaled by
1 / (1 - rate)). Per step that is k gemms of the plain projection's flops in all, each
scattered into its gate's columns (one gemm against the block-diagonal (k u, k u) matrix of
the U_g would cost k times the flops). The U_g and M_g are copied out once per sequence op.
Without masks each helper is one gemm against the recurrent kernel, packed once per
sequence op by the contract's pack_gemm_b (its transpose for the backward loops): the cpu
would otherwise repack it into its micro-kernel's panels at every step.
"""


class RecurrentDropoutProjection:
    def _projection_parts(self, recurrent_kernel, recurrent_mask, transpose=False):
        """What _project / _project_backward use at every step: ([U_g], [M_g]) as contiguous
        scratch tensors with masks; without, the recurrent kernel U packed for gemm_packed
        (U^T when `transpose`: the backward loops' dh = dz U^T)."""
        if recurrent_mask is None:
            return self._packed_recurrent_kernel(recurrent_kernel, transpose)
        u, width = recurrent_kernel.shape
        n = recurrent_mask.shape[0]
        if tuple(recurrent_mask.shape)[1:] != (width,):
            raise ValueError(f"recurrent_mask must be (N, {width}) for a recurrent kernel "
                             f"{tuple(recurrent_kernel.shape)}, got {tuple(recurrent_mask.shape)}")
        kernels, masks = [], []
        for g in range(width // u):
            kernel = self._scratch_tensor(f"rd_kernel_{g}", (u, u))
            self.strided_copy(kernel, recurrent_kernel, g * u, (width, 1))
            mask = self._scratch_tensor(f"rd_mask_{g}", (n, u))
            self.strided_copy(mask, recurrent_mask, g * u, (width, 1))
            kernels.append(kernel)
            masks.append(mask)
        return kernels, masks

    def _packed_recurrent_kernel(self, recurrent_kernel, transpose):
        """pack_gemm_b of U (or U^T) into the storage kept for its shape (one per shape and
        direction: a sequence op packs and uses it before the next op packs again)."""
        held = self.__dict__.setdefault("_rnn_packed_kernels", {})
        key = (tuple(recurrent_kernel.shape), transpose)
        held[key] = self.pack_gemm_b(recurrent_kernel, trans_b=transpose, into=held.get(key))
        return held[key]

    def _project(self, out, h_prev, recurrent_kernel, beta, recurrent_mask, gate_parts):
        """out = beta out + the recurrent projection of h_prev (N, u)."""
        if recurrent_mask is None:
            if gate_parts is None:
                self.gemm(out, h_prev, recurrent_kernel, beta=beta)
            else:
                self.gemm_packed(out, h_prev, gate_parts, beta)
            return
        n, u = h_prev.shape
        width = out.shape[1]
        dropped = self._scratch_tensor("rd_dropped", (n, u))
        gate = self._scratch_tensor("rd_gate", (n, u))
        if not beta:
            self.fill(out, 0.0)
        for g, (kernel, mask) in enumerate(zip(*gate_parts)):
            self.multiply(dropped, h_prev, mask)
            self.gemm(gate, dropped, kernel)
            self.strided_add(out, gate, g * u, (width, 1))

    def _project_backward(self, dh, dz, recurrent_kernel, beta, recurrent_mask, gate_parts):
        """dh = beta dh + dL/dh_prev through the projection, from dz = dL/d(projection)."""
        if recurrent_mask is None:
            if gate_parts is None:
                self.gemm(dh, dz, recurrent_kernel, beta=beta, trans_b=True)
            else:
                self.gemm_packed(dh, dz, gate_parts, beta)
            return
        n, u = dh.shape
        width = dz.shape[1]
        dgate = self._scratch_tensor("rd_dgate", (n, u))
        part = self._scratch_tensor("rd_dh", (n, u))
        if not beta:
            self.fill(dh, 0.0)
        for g, (kernel, mask) in enumerate(zip(*gate_parts)):
            self.strided_copy(dgate, dz, g * u, (width, 1))
            self.gemm(part, dgate, kernel, trans_b=True)
            self.multiply(part, part, mask)
            self.add(dh, dh, part)

    def _project_kernel_grad(self, drecurrent_kernel, previous, dz, recurrent_mask):
        """drecurrent_kernel (u, k u) = sum over steps of dL/dU from the states h_{t-1} of
        every step `previous` (T N, u) and dz (T N, k u)."""
        if recurrent_mask is None:
            self.gemm(drecurrent_kernel, previous, dz, trans_a=True)
            return
        u, width = drecurrent_kernel.shape
        rows, n = previous.shape[0], recurrent_mask.shape[0]
        dropped = self._scratch_tensor("rd_all_dropped", (rows, u))
        dgates = self._scratch_tensor("rd_all_dgate", (rows, u))
        dkernel = self._scratch_tensor("rd_dkernel", (u, u))
        mask = self._scratch_tensor("rd_mask_g", (n, u))
        self.fill(drecurrent_kernel, 0.0)
        for g in range(width // u):
            self.strided_copy(mask, recurrent_mask, g * u, (width, 1))
            # every step's h_{t-1} times the sequence's mask of gate g
            self.binary(self.reshape(dropped, (rows // n, n, u)),
                        self.reshape(previous, (rows // n, n, u)), mask, "multiply")
            self.strided_copy(dgates, dz, g * u, (width, 1))
            self.gemm(dkernel, dropped, dgates, trans_a=True)
            self.strided_add(drecurrent_kernel, dkernel, g * u, (width, 1))
