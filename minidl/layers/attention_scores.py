"""return_attention_scores as a second output of the fused-op attention layers' call, in models
as in eager calls, with its gradient.

The scores Keras returns are the softmax probabilities P before dropout. A loss that depends on
them adds dL/dP to what the weighted sum gives the fused backward; the fused op takes dL/dP only
through dout (B, Tq, H, Dv) as dout V^T. With V the identity over the keys (Dv = Tv), dout V^T
is dout itself: so a second attention_backward call, on dout = dL/dP laid out (B, Tq, H, Tv),
V = I and no dropout, gives the scores' share of dq and dk (its dv is discarded), through the
same softmax, mask and causal rules as the first."""

import numpy as np


def scores_given(call):
    """Whether the scores output has a gradient in this backward (the graph records which
    outputs something used; the eager tape's outputs all count)."""
    given = call.douts_given
    return given is None or (len(given) > 1 and given[1])


def add_scores_gradient(layer, call, dq, dk, dscores, q, k):
    """dq, dk += the share of dscores (B, H, Tq, Tv) in them (see the module's docstring)."""
    b = layer.backend
    batch, heads, tq, tv = b.shape(dscores)
    dheads = call.buffer("dscores_heads", (batch, tq, heads, tv))
    b.transpose(dheads, dscores, (0, 2, 1, 3))
    shape = (batch, tv, heads, tv)
    if getattr(call, "identity_shape", None) != shape:
        eye = np.ascontiguousarray(np.broadcast_to(
            np.eye(tv, dtype=np.float32)[None, :, None, :], shape))
        call.identity = b.from_numpy(eye)   # a constant, made once per shape
        call.identity_shape = shape
    extra_q = call.buffer("scores_dq", b.shape(q))
    extra_k = call.buffer("scores_dk", b.shape(k))
    unused_v = call.buffer("scores_dv", shape)
    b.attention_backward(extra_q, extra_k, unused_v, dheads, q, k, call.identity, call.probs,
                         call.attention_mask, None, call.scale, layer._causal(call))
    b.add(dq, dq, extra_q)
    b.add(dk, dk, extra_k)
