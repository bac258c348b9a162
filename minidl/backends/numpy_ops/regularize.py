"""Keras's L1/L2 and orthogonal penalties with their gradients, and the norm constraints: the
numpy reference of l1_l2_penalty, l1_l2_gradient, orthogonal_penalty, orthogonal_gradient and
norm_constraint (sums in float64)."""

import numpy as np

from ..base import norm_layout, orthogonal_layout
from ..checks import check_shape


def l1_l2_penalty(out, w, l1, l2, accumulate):
    value = l1 * float(np.abs(w).sum(dtype=np.float64)) + l2 * float(np.square(w, dtype=np.float64).sum())
    out[0] = out[0] + value if accumulate else value


def l1_l2_gradient(g, w, l1, l2):
    check_shape("l1_l2_gradient", "w", w, g.shape)
    g += l1 * np.sign(w) + (2 * l2) * w


def norm_constraint(w, axis, min_value, max_value, rate):
    outer, reduce, inner = norm_layout(w.shape, axis)
    view = w.reshape(outer, reduce, inner)
    norms = np.sqrt(np.square(view).sum(axis=1, keepdims=True))
    desired = rate * np.clip(norms, min_value, max_value) + (1 - rate) * norms
    view *= desired / (1e-7 + norms)


def _orthogonal_vectors(w, mode, op):
    orthogonal_layout(w.shape, mode, op)
    a = w if mode == "rows" else w.T
    sq = np.square(a).sum(axis=1, keepdims=True)
    return a, sq, a / np.sqrt(np.maximum(sq, 1e-12))


def _orthogonal_scale(m, factor):
    return factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0


def orthogonal_penalty(out, w, factor, mode, accumulate):
    a, _, n = _orthogonal_vectors(w, mode, "orthogonal_penalty")
    gram = n @ n.T
    value = _orthogonal_scale(a.shape[0], factor) * float(np.abs(gram - np.diag(np.diag(gram))).sum())
    out[0] = out[0] + value if accumulate else value


def orthogonal_gradient(g, w, factor, mode):
    check_shape("orthogonal_gradient", "w", w, g.shape)
    a, sq, n = _orthogonal_vectors(w, mode, "orthogonal_gradient")
    signs = np.sign(n @ n.T)
    np.fill_diagonal(signs, 0)
    dn = 2 * _orthogonal_scale(a.shape[0], factor) * (signs @ n)
    free = sq > 1e-12                      # a floored norm is a constant
    along = np.where(free, (dn * n).sum(axis=1, keepdims=True), 0)
    grad = (dn - along * n) / np.sqrt(np.maximum(sq, 1e-12))
    g += grad if mode == "rows" else grad.T
