"""keras.ops.dot_product_attention's fused path: the backend's
attention_forward / attention_backward ops."""

import math

from .core import as_tensor, cast, empty_like_shape, record
from .shapes import broadcast_to, repeat, reshape


def _mask_rows(mask, batch, tq, tk):
    """A boolean mask broadcastable to (B, N, T, S) as the op's (B, T, S) float tensor; per-head
    masks (N > 1 in the mask) are refused."""
    m = cast(as_tensor(mask), "float32")
    shape = m.shape
    if len(shape) == 4:
        if shape[1] != 1:
            raise ValueError(f"ops.dot_product_attention: minidl takes one mask for every head, shape "
                             f"broadcastable to (B, 1, T, S) = ({batch}, 1, {tq}, {tk}), got {shape}")
        m = reshape(m, (shape[0], shape[2], shape[3]))
    elif len(shape) not in (2, 3):
        raise ValueError(f"ops.dot_product_attention: mask must broadcast to (B, N, T, S) = ({batch}, N, "
                         f"{tq}, {tk}), got {shape}")
    try:
        return broadcast_to(m, (batch, tq, tk))
    except ValueError:
        raise ValueError(f"ops.dot_product_attention: mask of shape {shape} does not broadcast to "
                         f"(B, N, T, S) = ({batch}, N, {tq}, {tk})") from None


def fused_dot_product_attention(query, key, value, mask=None, scale=None, is_causal=False):
    """softmax(scale * query . key + mask) . value with query (B, T, N, H), key and value
    (B, S, K, H) (K dividing N: grouped-query attention repeats each key / value head N / K
    times), a boolean mask broadcastable to (B, 1, T, S) (True: attend), is_causal as Keras's,
    scale 1 / sqrt(H) by default. The scores, softmax and weighted sum run fused on the backend;
    its gradient flows to query, key and value. (ops.dot_product_attention, in nn_functions.py,
    sends what this op does not take, a bias, a soft cap or a mask per head, to its composed form.)"""
    q, k, v = (cast(as_tensor(t), "float32") for t in (query, key, value))
    if len(q.shape) != 4 or len(k.shape) != 4 or k.shape != v.shape[:3] + (k.shape[3],) \
            or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3] or q.shape[2] % k.shape[2]:
        raise ValueError(f"ops.dot_product_attention: query (B, T, N, H), key (B, S, K, H) and value "
                         f"(B, S, K, Hv) with K dividing N needed, got {q.shape}, {k.shape} and {v.shape}")
    batch, tq, heads, dim = q.shape
    tk = k.shape[1]
    if k.shape[2] != heads:   # grouped-query attention: each key / value head serves N / K queries
        k, v = repeat(k, heads // k.shape[2], axis=2), repeat(v, heads // v.shape[2], axis=2)
    m = None if mask is None else _mask_rows(mask, batch, tq, tk)
    scale = 1.0 / math.sqrt(dim) if scale is None else float(scale)
    b = q.backend
    out = empty_like_shape(b, (batch, tq, heads, v.shape[3]))
    probs = b.empty((batch, heads, tq, tk))
    mask_value = None if m is None else m.value
    b.attention_forward(out.value, probs, q.value, k.value, v.value, mask_value, None, scale,
                        bool(is_causal))

    def rule(g):
        dq, dk, dv = (empty_like_shape(b, t.shape) for t in (q, k, v))
        b.attention_backward(dq.value, dk.value, dv.value, g.value, q.value, k.value, v.value, probs,
                             mask_value, None, scale, bool(is_causal))
        return (dq, dk, dv)
    return record(out, (q, k, v), rule)
