"""Sliding-window ops (convolution, max and average pooling) by im2col on a padded input.

Every op pads its input once into a buffer kept in the plan's NumpyPlanScratch, looks at it through a
strided window view of shape (N, OH, OW, KH, KW, C) without copying, and then either
multiplies the flattened windows with the filter (convolution) or reduces them (pooling).
Backward passes scatter window gradients back with one strided slice per kernel position,
so the only Python loops run over the KH * KW window offsets.

Max-pool argmax encoding (read only by max_pool2d_backward): the flat index i * KW + j of
the winning position inside its window.
"""

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided


@dataclass
class NumpyPlanScratch:
    """What the numpy backend keeps on a Window2D plan (plan.scratch_for(NumpyPlanScratch))."""

    padded: dict = field(default_factory=dict)   # (dtype str, fill) -> padded_input's buffer


def padded_shape(plan):
    """(N, H+pt+pb, W+pl+pr, C), a negative pb or pr (rows no window reads) taken as 0."""
    return (plan.n, plan.h + plan.pad_top + max(plan.pad_bottom, 0),
            plan.w + plan.pad_left + max(plan.pad_right, 0), plan.c)


def padded_input(x, plan, fill):
    """x (N, H, W, C) copied into the interior of a padded_shape buffer whose border is `fill`."""
    if not (plan.pad_top or plan.pad_bottom > 0 or plan.pad_left or plan.pad_right > 0):
        return x
    shape = padded_shape(plan)
    held = plan.scratch_for(NumpyPlanScratch).padded
    key = (x.dtype.str, float(fill))
    xp = held.get(key)
    if xp is None or xp.shape != shape:
        # the border is written once here and never touched again; only the interior changes
        xp = np.full(shape, fill, dtype=x.dtype)
        held[key] = xp
    xp[:, plan.pad_top:plan.pad_top + plan.h, plan.pad_left:plan.pad_left + plan.w, :] = x
    return xp


def window_view(xp, plan):
    """A read-only (N, OH, OW, KH, KW, C) view of the padded input: one window per output pixel."""
    s_n, s_h, s_w, s_c = xp.strides
    return as_strided(xp, shape=(plan.n, plan.oh, plan.ow, plan.kh, plan.kw, plan.c),
                      strides=(s_n, s_h * plan.sh, s_w * plan.sw, s_h * plan.dh, s_w * plan.dw, s_c),
                      writeable=False)


def im2col(x, plan):
    """The (N*OH*OW, KH*KW*C) matrix of flattened windows (a copy), rows in output-pixel order."""
    windows = window_view(padded_input(x, plan, 0.0), plan)
    return windows.reshape(plan.n * plan.oh * plan.ow, plan.kh * plan.kw * plan.c)


def scatter_windows(dx, window_grads, plan):
    """dx (N, H, W, C) = sum over windows of window_grads (N, OH, OW, KH, KW, C), padding dropped.

    window_grads may also be (N, OH, OW, 1, 1, C) when every position of a window gets the
    same gradient (average pooling); it is then broadcast to each kernel offset.
    """
    dxp = np.zeros(padded_shape(plan), dtype=dx.dtype)
    per_offset = window_grads.shape[3] != 1 or window_grads.shape[4] != 1
    for i in range(plan.kh):
        for j in range(plan.kw):
            grad = window_grads[:, :, :, i, j, :] if per_offset else window_grads[:, :, :, 0, 0, :]
            y, x = i * plan.dh, j * plan.dw
            dxp[:, y:y + plan.sh * plan.oh:plan.sh, x:x + plan.sw * plan.ow:plan.sw, :] += grad
    dx[...] = dxp[:, plan.pad_top:plan.pad_top + plan.h, plan.pad_left:plan.pad_left + plan.w, :]


def valid_positions(plan):
    """Boolean (OH, OW, KH, KW): True where a window position lies inside the unpadded input."""
    rows = np.arange(plan.oh)[:, None] * plan.sh + np.arange(plan.kh)[None, :] - plan.pad_top
    cols = np.arange(plan.ow)[:, None] * plan.sw + np.arange(plan.kw)[None, :] - plan.pad_left
    valid_rows = (rows >= 0) & (rows < plan.h)      # (OH, KH)
    valid_cols = (cols >= 0) & (cols < plan.w)      # (OW, KW)
    return valid_rows[:, None, :, None] & valid_cols[None, :, None, :]


# ------------------------------------------------------------------ convolution
# A grouped convolution is one batched matmul over the groups: the im2col columns of group g
# are its channel slice of every tap, (G, M, KH*KW*Cg), and its weights (G, KH*KW*Cg, Fg).
def _group_cols(cols, plan):
    """(M, KH*KW*C) im2col columns -> (G, M, KH*KW*Cg)."""
    g = plan.groups
    m = cols.shape[0]
    return cols.reshape(m, plan.kh * plan.kw, g, plan.c // g).transpose(2, 0, 1, 3).reshape(g, m, -1)


def _group_weight(weight, plan):
    """(KH, KW, Cg, F) -> (G, KH*KW*Cg, Fg)."""
    g = plan.groups
    return weight.reshape(-1, g, plan.oc // g).transpose(1, 0, 2)


def _ungroup(result, plan):
    """(G, M, Fg) -> (M, F)."""
    return result.transpose(1, 0, 2).reshape(result.shape[1], plan.oc)


def conv2d_forward(out, x, weight, bias, plan):
    """The shapes were checked by the contract (contract/convolution.py), as for the two below."""
    cols = im2col(x, plan)                                          # (M, KH*KW*C)
    result = _ungroup(_group_cols(cols, plan) @ _group_weight(weight, plan), plan)   # (M, F)
    if bias is not None:
        result += bias
    out[...] = result.reshape(plan.out_shape)


def conv2d_backward_data(dx, dout, weight, plan):
    g, m = plan.groups, plan.n * plan.oh * plan.ow
    dout_g = dout.reshape(m, g, plan.oc // g).transpose(1, 0, 2)             # (G, M, Fg)
    dcols = dout_g @ _group_weight(weight, plan).transpose(0, 2, 1)          # (G, M, KH*KW*Cg)
    dcols = dcols.reshape(g, m, plan.kh * plan.kw, plan.c // g).transpose(1, 2, 0, 3)
    scatter_windows(dx, dcols.reshape(plan.n, plan.oh, plan.ow, plan.kh, plan.kw, plan.c), plan)


def conv2d_backward_filter(dweight, dbias, dout, x, plan):
    g, m = plan.groups, plan.n * plan.oh * plan.ow
    dout_2d = dout.reshape(m, plan.oc)
    dout_g = dout_2d.reshape(m, g, plan.oc // g).transpose(1, 0, 2)         # (G, M, Fg)
    dw = _group_cols(im2col(x, plan), plan).transpose(0, 2, 1) @ dout_g     # (G, KH*KW*Cg, Fg)
    dweight[...] = dw.transpose(1, 0, 2).reshape(dweight.shape)
    if dbias is not None:
        dbias[...] = dout_2d.sum(axis=0)


# ---------------------------------------------------------------------- pooling
def max_pool2d_forward(out, argmax, x, plan):
    """The shapes were checked by the contract (contract/pooling.py), as for the three below."""
    windows = window_view(padded_input(x, plan, -np.inf), plan)
    flat = windows.reshape(plan.n, plan.oh, plan.ow, plan.kh * plan.kw, plan.c)
    winner = flat.argmax(axis=3)                # the first maximum: lowest window index wins ties
    maxima = flat.max(axis=3)
    if np.isneginf(maxima).any():
        # a -inf maximum may have been found on the -inf padding; move those winners to the
        # first real position of their window so that padding never receives a gradient
        first_valid = valid_positions(plan).reshape(plan.oh, plan.ow, -1).argmax(axis=-1)
        winner = np.where(np.isneginf(maxima), first_valid[None, :, :, None], winner)
    out[...] = maxima
    argmax[...] = winner


def max_pool2d_backward(dx, dout, argmax, plan):
    dxp = np.zeros(padded_shape(plan), dtype=dx.dtype)
    zero = dx.dtype.type(0)
    for i in range(plan.kh):
        for j in range(plan.kw):
            routed = np.where(argmax == i * plan.kw + j, dout, zero)
            dxp[:, i:i + plan.sh * plan.oh:plan.sh, j:j + plan.sw * plan.ow:plan.sw, :] += routed
    dx[...] = dxp[:, plan.pad_top:plan.pad_top + plan.h, plan.pad_left:plan.pad_left + plan.w, :]


def _window_counts(plan, dtype):
    """(OH, OW, 1) number of real (unpadded) positions in each window, as TensorFlow divides by."""
    return valid_positions(plan).sum(axis=(2, 3)).astype(dtype)[:, :, None]


def avg_pool2d_forward(out, x, plan):
    windows = window_view(padded_input(x, plan, 0.0), plan)
    out[...] = windows.sum(axis=(3, 4)) / _window_counts(plan, x.dtype)


def avg_pool2d_backward(dx, dout, plan):
    share = dout / _window_counts(plan, dout.dtype)                # (N, OH, OW, C)
    scatter_windows(dx, share[:, :, :, None, None, :], plan)
