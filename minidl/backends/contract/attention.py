"""The attention section of the contract: fused scaled dot-product attention per (batch, head),
forward and backward, in Keras MultiHeadAttention's layouts. The public ops check every tensor
against q, k and v once and pass the sizes (B, Tq, Tk, H, D, Dv) on; a backend implements the
underscore names (numpy_ops/attention.py, cpu/attention.py, opencl/attention.py)."""

from .checks import optional_shape, same_shape


def attention_sizes(op, q, k, v, mask, dropout):
    """(batch, tq, tk, heads, dim, dim_v) of q (B, Tq, H, D), k (B, Tk, H, D), v (B, Tk, H, Dv),
    with mask (B, Tq, Tk) and dropout (B, H, Tq, Tk) checked where given."""
    if len(q.shape) != 4 or len(k.shape) != 4 or len(v.shape) != 4:
        raise ValueError(f"{op}: q, k and v must be 4-D (batch, time, heads, dim), got q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)}")
    batch, tq, heads, dim = q.shape
    tk = k.shape[1]
    if (tuple(k.shape) != (batch, tk, heads, dim) or tuple(v.shape[:3]) != (batch, tk, heads)
            or min(batch, tq, tk, heads, dim, v.shape[3]) < 1):
        raise ValueError(f"{op}: k must be (B, Tk, H, D) and v (B, Tk, H, Dv) for q (B, Tq, H, D) "
                         f"{tuple(q.shape)}, all sizes >= 1, got k {tuple(k.shape)} and v {tuple(v.shape)}")
    optional_shape(op, "mask", mask, (batch, tq, tk))
    optional_shape(op, "dropout", dropout, (batch, heads, tq, tk))
    return batch, tq, tk, heads, dim, v.shape[3]


class AttentionSection:
    """The contract's attention ops; a backend implements the underscore names, which take the
    checked sizes (B, Tq, Tk, H, D, Dv) after the public arguments."""

    def attention_forward(self, out, probs, q, k, v, mask, dropout, scale, causal):
        """Fused scaled dot-product attention per (batch, head), in Keras MultiHeadAttention's
        layouts: q (B, Tq, H, D), k (B, Tk, H, D), v (B, Tk, H, Dv) -> out (B, Tq, H, Dv);
        probs (B, H, Tq, Tk) = softmax over keys of scale * q.k where allowed (Keras's attention
        scores, kept for the backward pass). Allowed: mask (B, Tq, Tk) nonzero (None: all) and,
        when causal, key j <= query i. A query row with no allowed key gets uniform
        probabilities (as Keras's -1e9 masking gives). dropout (B, H, Tq, Tk) or None:
        multipliers applied to probs before the weighted sum (probs stays undropped)."""
        op = "attention_forward"
        sizes = batch, tq, tk, heads, dim, dim_v = attention_sizes(op, q, k, v, mask, dropout)
        same_shape(op, "out", out, (batch, tq, heads, dim_v))
        same_shape(op, "probs", probs, (batch, heads, tq, tk))
        self._attention_forward(out, probs, q, k, v, mask, dropout, float(scale), bool(causal), sizes)

    def attention_backward(self, dq, dk, dv, dout, q, k, v, probs, mask, dropout, scale, causal):
        """dq, dk, dv of attention_forward from dout (B, Tq, H, Dv) and its probs (a row with
        no allowed key: the softmax gradient of its uniform probabilities, as Keras's additive
        -1e9 mask gives)."""
        op = "attention_backward"
        sizes = batch, tq, tk, heads, dim, dim_v = attention_sizes(op, q, k, v, mask, dropout)
        same_shape(op, "dq", dq, (batch, tq, heads, dim))
        same_shape(op, "dk", dk, (batch, tk, heads, dim))
        same_shape(op, "dv", dv, (batch, tk, heads, dim_v))
        same_shape(op, "dout", dout, (batch, tq, heads, dim_v))
        same_shape(op, "probs", probs, (batch, heads, tq, tk))
        self._attention_backward(dq, dk, dv, dout, q, k, v, probs, mask, dropout, float(scale), bool(causal),
                                 sizes)
