"""The attention section on the numpy backend: the reference of the fused attention ops (a
mixin of NumpyBackend). The contract (minidl/backends/contract/attention.py) checked every
shape and passes the sizes (B, Tq, Tk, H, D, Dv)."""

import numpy as np


def _allowed(mask, causal, tq, tk):
    """(B or 1, 1, Tq, Tk) booleans: where query i may attend key j."""
    allowed = np.ones((1, 1, tq, tk), dtype=bool)
    if causal:
        allowed = allowed & np.tril(np.ones((tq, tk), dtype=bool))
    if mask is not None:
        allowed = allowed & (mask[:, None] != 0)
    return allowed


class NumpyAttentionOps:
    """attention_forward / attention_backward of NumpyBackend."""

    def _attention_forward(self, out, probs, q, k, v, mask, dropout, scale, causal, sizes):
        _, tq, tk = sizes[:3]
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) * np.float32(scale)
        allowed = _allowed(mask, causal, tq, tk)
        scores = np.where(allowed, scores, -np.inf)
        empty = ~allowed.any(axis=-1, keepdims=True)   # rows that may attend nothing: uniform
        top = np.where(empty, 0, scores.max(axis=-1, keepdims=True))
        e = np.where(empty, 1.0, np.exp(scores - top))
        probs[...] = e / e.sum(axis=-1, keepdims=True)
        weights = probs * dropout if dropout is not None else probs
        out[...] = np.einsum("bhqk,bkhd->bqhd", weights, v)

    def _attention_backward(self, dq, dk, dv, dout, q, k, v, probs, mask, dropout, scale, causal, sizes):
        weights = probs * dropout if dropout is not None else probs
        dv[...] = np.einsum("bhqk,bqhd->bkhd", weights, dout)
        dprobs = np.einsum("bqhd,bkhd->bhqk", dout, v)
        if dropout is not None:
            dprobs = dprobs * dropout
        dscores = probs * (dprobs - (dprobs * probs).sum(axis=-1, keepdims=True))
        dscores *= np.float32(scale)
        dq[...] = np.einsum("bhqk,bkhd->bqhd", dscores, k)
        dk[...] = np.einsum("bhqk,bqhd->bkhd", dscores, q)
