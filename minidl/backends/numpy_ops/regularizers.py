"""The regularizers section on the numpy backend: Keras's L1/L2 and orthogonal penalties with
their gradients and the norm constraints, the reference of the other backends (sums in float64).
minidl/backends/contract/regularizers.py checked the shapes and worked out the layouts."""

import numpy as np


def _orthogonal_vectors(w, mode):
    a = w if mode == "rows" else w.T
    sq = np.square(a).sum(axis=1, keepdims=True)
    return a, sq, a / np.sqrt(np.maximum(sq, 1e-12))


def _orthogonal_scale(m, factor):
    return factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0


class NumpyRegularizerOps:
    """The regularizers section of NumpyBackend."""

    def _l1_l2_penalty(self, out, w, l1, l2, accumulate):
        value = l1 * float(np.abs(w).sum(dtype=np.float64)) + l2 * float(np.square(w, dtype=np.float64).sum())
        out[0] = out[0] + value if accumulate else value

    def _l1_l2_gradient(self, g, w, l1, l2):
        g += l1 * np.sign(w) + (2 * l2) * w

    def _norm_constraint(self, w, layout, min_value, max_value, rate):
        view = w.reshape(layout)
        norms = np.sqrt(np.square(view).sum(axis=1, keepdims=True))
        desired = rate * np.clip(norms, min_value, max_value) + (1 - rate) * norms
        view *= desired / (1e-7 + norms)

    def _orthogonal_penalty(self, out, w, factor, mode, layout, accumulate):
        a, _, n = _orthogonal_vectors(w, mode)
        gram = n @ n.T
        value = _orthogonal_scale(a.shape[0], factor) * float(np.abs(gram - np.diag(np.diag(gram))).sum())
        out[0] = out[0] + value if accumulate else value

    def _orthogonal_gradient(self, g, w, factor, mode, layout):
        a, sq, n = _orthogonal_vectors(w, mode)
        signs = np.sign(n @ n.T)
        np.fill_diagonal(signs, 0)
        dn = 2 * _orthogonal_scale(a.shape[0], factor) * (signs @ n)
        free = sq > 1e-12                      # a floored norm is a constant
        along = np.where(free, (dn * n).sum(axis=1, keepdims=True), 0)
        grad = (dn - along * n) / np.sqrt(np.maximum(sq, 1e-12))
        g += grad if mode == "rows" else grad.T
