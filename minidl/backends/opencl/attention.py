"""The attention section on the opencl backend (a mixin of OpenCLBackend, which provides
_run1d and empty); the kernels are kernels/attention.cl. The contract
(minidl/backends/contract/attention.py) checked every shape and passes the sizes. The backward
pass keeps one (B, H, Tq, Tk) scratch tensor of score gradients, reused while its shape stays."""

import numpy as np

_FILE = "attention.cl"


class AttentionOps:
    """attention_forward / attention_backward of OpenCLBackend."""

    def _attention_scalars(self, mask, dropout, scale, causal, sizes):
        return (np.float32(scale), np.int32(bool(causal)), np.int32(mask is not None),
                np.int32(dropout is not None)) + tuple(np.int32(s) for s in sizes)

    def _attention_forward(self, out, probs, q, k, v, mask, dropout, scale, causal, sizes):
        batch, tq, tk, heads = sizes[:4]
        # an absent mask / dropout is never read: probs stands in for its pointer
        self._run1d(_FILE, "attention_forward", batch * heads * tq, out, probs, q, k, v,
                    probs if mask is None else mask, probs if dropout is None else dropout,
                    *self._attention_scalars(mask, dropout, scale, causal, sizes))

    def _attention_backward(self, dq, dk, dv, dout, q, k, v, probs, mask, dropout, scale, causal, sizes):
        batch, tq, tk, heads = sizes[:4]
        held = getattr(self, "_attention_ds", None)
        if held is None or tuple(held.shape) != tuple(probs.shape):
            held = self._attention_ds = self.empty(tuple(probs.shape))
        drop = probs if dropout is None else dropout
        self._run1d(_FILE, "attention_backward_rows", batch * heads * tq, held, dq, dout, q, k, v,
                    probs, probs if mask is None else mask, drop,
                    *self._attention_scalars(mask, dropout, scale, causal, sizes))
        self._run1d(_FILE, "attention_backward_keys", batch * heads * tk, dk, dv, held, dout, q,
                    probs, drop, np.int32(dropout is not None),
                    *(np.int32(s) for s in sizes))
