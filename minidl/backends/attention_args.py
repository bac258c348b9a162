"""The argument checks of attention_forward / attention_backward, shared by every backend:
the sizes (B, Tq, Tk, H, D, Dv) after checking every tensor's shape against q, k and v."""

from .checks import check_shape


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
    if mask is not None:
        check_shape(op, "mask", mask, (batch, tq, tk))
    if dropout is not None:
        check_shape(op, "dropout", dropout, (batch, heads, tq, tk))
    return batch, tq, tk, heads, dim, v.shape[3]


def check_attention_outputs(op, sizes, named):
    """Check the output tensors `named` {name: tensor} of an attention op against `sizes`."""
    batch, tq, tk, heads, dim, dim_v = sizes
    expected = {"out": (batch, tq, heads, dim_v), "probs": (batch, heads, tq, tk),
                "dq": (batch, tq, heads, dim), "dk": (batch, tk, heads, dim),
                "dv": (batch, tk, heads, dim_v), "dout": (batch, tq, heads, dim_v)}
    for name, tensor in named.items():
        check_shape(op, name, tensor, expected[name])
