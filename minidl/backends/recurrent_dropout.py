"""The recurrent projection of the sequence loops with Keras's recurrent_dropout: a mixin of
HostRecurrentOps and DeviceRecurrentOps made of contract ops (every backend).

Keras 3 drops h_{t-1} before the recurrent kernel with one mask per gate, drawn once per
sequence: gate g's projection is (h_{t-1} * M_g) U_g, U_g its (u, u) columns of the recurrent
kernel U (u, k u). With the masks M (N, k u) (already scaled by 1 / (1 - rate)) this is one
gemm: [h_{t-1} * M_1, ..., h_{t-1} * M_k] (N, k u) times the block-diagonal (k u, k u) matrix
of the U_g. The block-diagonal kernel costs k times the flops of the plain projection; only
training with recurrent_dropout pays it. Without masks each helper is the plain gemm.
"""


class RecurrentDropoutProjection:
    def _dropout_kernel(self, recurrent_kernel, recurrent_mask):
        """The block-diagonal (k u, k u) kernel of the U_g (a scratch tensor), or None."""
        if recurrent_mask is None:
            return None
        u, width = recurrent_kernel.shape
        k = width // u
        if tuple(recurrent_mask.shape)[1:] != (width,):
            raise ValueError(f"recurrent_mask must be (N, {width}) for a recurrent kernel "
                             f"{tuple(recurrent_kernel.shape)}, got {tuple(recurrent_mask.shape)}")
        blocks = self._scratch_tensor("rd_kernel", (width, width))
        self.fill(blocks, 0.0)
        # U viewed (u, k, u): element (i, g, j) goes to row g u + i, column g u + j
        self.strided_add(blocks, self.reshape(recurrent_kernel, (u, k, u)), 0,
                         (width, u * width + u, 1))
        return blocks

    def _dropped_states(self, name, h_prev, recurrent_mask):
        """[h * M_1, ..., h * M_k] (rows, k u) for h (rows, u) and M (rows or N, k u)."""
        rows, u = h_prev.shape
        width = recurrent_mask.shape[-1]
        dropped = self._scratch_tensor(name, (rows, width))
        self.strided_copy(self.reshape(dropped, (rows, width // u, u)), h_prev, 0, (u, 0, 1))
        if recurrent_mask.shape[0] == rows:
            self.multiply(dropped, dropped, recurrent_mask)
        else:   # the states of every step (T N, k u) against the sequence's (N, k u) masks
            n = recurrent_mask.shape[0]
            view = self.reshape(dropped, (rows // n, n, width))
            self.binary(view, view, recurrent_mask, "multiply")
        return dropped

    def _project(self, out, h_prev, recurrent_kernel, beta, recurrent_mask, blocks):
        """out = beta out + the recurrent projection of h_prev (N, u)."""
        if recurrent_mask is None:
            self.gemm(out, h_prev, recurrent_kernel, beta=beta)
        else:
            self.gemm(out, self._dropped_states("rd_states", h_prev, recurrent_mask), blocks,
                      beta=beta)

    def _project_backward(self, dh, dz, recurrent_kernel, beta, recurrent_mask, blocks):
        """dh = beta dh + dL/dh_prev through the projection, from dz = dL/d(projection)."""
        if recurrent_mask is None:
            self.gemm(dh, dz, recurrent_kernel, beta=beta, trans_b=True)
            return
        n, u = dh.shape
        width = recurrent_mask.shape[1]
        ddropped = self._scratch_tensor("rd_ddropped", (n, width))
        self.gemm(ddropped, dz, blocks, trans_b=True)
        self.multiply(ddropped, ddropped, recurrent_mask)
        summed = self._scratch_tensor("rd_dh", (n, 1, u))   # the sum over the k gates
        self.reduce(summed, self.reshape(ddropped, (n, width // u, u)), "sum")
        summed = self.reshape(summed, (n, u))
        if beta:
            self.add(dh, dh, summed)
        else:
            self.copy(dh, summed)

    def _project_kernel_grad(self, drecurrent_kernel, previous, dz, recurrent_mask):
        """drecurrent_kernel (u, k u) = sum over steps of dL/dU from the states h_{t-1} of
        every step `previous` (T N, u) and dz (T N, k u)."""
        if recurrent_mask is None:
            self.gemm(drecurrent_kernel, previous, dz, trans_a=True)
            return
        u, width = drecurrent_kernel.shape
        dblocks = self._scratch_tensor("rd_dkernel", (width, width))
        self.gemm(dblocks, self._dropped_states("rd_all_states", previous, recurrent_mask), dz,
                  trans_a=True)
        self.strided_copy(self.reshape(drecurrent_kernel, (u, width // u, u)), dblocks, 0,
                          (width, u * width + u, 1))
