"""The cpu ops of fused attention (a mixin of CpuBackend, which provides _lib); the kernels
are csrc/attention.c, with csrc/attention_reference.c as their plain twin."""

from ..attention_args import attention_sizes, check_attention_outputs
from ._ffi import checked, ffi, output, raise_for_status


def _optional(op, name, tensor):
    return ffi.NULL if tensor is None else checked(op, name, tensor)


class CpuAttentionOps:
    def attention_forward(self, out, probs, q, k, v, mask, dropout, scale, causal, reference=False):
        """reference=True runs the plain loops of attention_reference.c (for tests)."""
        op = "attention_forward"
        sizes = attention_sizes(op, q, k, v, mask, dropout)
        check_attention_outputs(op, sizes, {"out": out, "probs": probs})
        args = (output(op, "out", out), output(op, "probs", probs), checked(op, "q", q),
                checked(op, "k", k), checked(op, "v", v), _optional(op, "mask", mask),
                _optional(op, "dropout", dropout), float(scale), int(bool(causal))) + sizes
        if reference:
            self._lib.minidl_attention_forward_ref(*args)
            return
        status = self._lib.minidl_attention_forward(*args)
        if status:
            raise_for_status(op, status, f"q {tuple(q.shape)}, k {tuple(k.shape)}")

    def attention_backward(self, dq, dk, dv, dout, q, k, v, probs, mask, dropout, scale, causal,
                           reference=False):
        op = "attention_backward"
        sizes = attention_sizes(op, q, k, v, mask, dropout)
        check_attention_outputs(op, sizes, {"dq": dq, "dk": dk, "dv": dv, "dout": dout,
                                            "probs": probs})
        args = (output(op, "dq", dq), output(op, "dk", dk), output(op, "dv", dv),
                checked(op, "dout", dout), checked(op, "q", q), checked(op, "k", k),
                checked(op, "v", v), checked(op, "probs", probs), _optional(op, "mask", mask),
                _optional(op, "dropout", dropout), float(scale), int(bool(causal))) + sizes
        if reference:
            self._lib.minidl_attention_backward_ref(*args)
            return
        status = self._lib.minidl_attention_backward(*args)
        if status:
            raise_for_status(op, status, f"q {tuple(q.shape)}, k {tuple(k.shape)}")
