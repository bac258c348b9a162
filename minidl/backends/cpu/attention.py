"""The attention section on the cpu backend (a mixin of CpuBackend, which provides _lib); the
kernels are csrc/attention.c, with csrc/attention_reference.c as their plain twin. The contract
(minidl/backends/contract/attention.py) checked every shape and passes the sizes; the pointers'
checks here are the cpu tensor's own."""
from ._ffi import checked, ffi, output, raise_for_status


def _optional(op, name, tensor):
    return ffi.NULL if tensor is None else checked(op, name, tensor)


class CpuAttentionOps:
    """attention_forward / attention_backward of CpuBackend."""

    def _attention_forward(self, out, probs, q, k, v, mask, dropout, scale, causal, sizes, reference=False):
        """reference=True runs the plain loops of attention_reference.c (for tests)."""
        op = "attention_forward"
        args = (output(op, "out", out), output(op, "probs", probs), checked(op, "q", q),
                checked(op, "k", k), checked(op, "v", v), _optional(op, "mask", mask),
                _optional(op, "dropout", dropout), scale, int(causal)) + sizes
        if reference:
            self._lib.minidl_attention_forward_ref(*args)
            return
        status = self._lib.minidl_attention_forward(*args)
        if status:
            raise_for_status(op, status, f"q {tuple(q.shape)}, k {tuple(k.shape)}")

    def _attention_backward(self, dq, dk, dv, dout, q, k, v, probs, mask, dropout, scale, causal, sizes,
                            reference=False):
        op = "attention_backward"
        args = (output(op, "dq", dq), output(op, "dk", dk), output(op, "dv", dv),
                checked(op, "dout", dout), checked(op, "q", q), checked(op, "k", k),
                checked(op, "v", v), checked(op, "probs", probs), _optional(op, "mask", mask),
                _optional(op, "dropout", dropout), scale, int(causal)) + sizes
        if reference:
            self._lib.minidl_attention_backward_ref(*args)
            return
        status = self._lib.minidl_attention_backward(*args)
        if status:
            raise_for_status(op, status, f"q {tuple(q.shape)}, k {tuple(k.shape)}")
