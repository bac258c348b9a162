"""The regularizers and constraints section on the opencl backend: the L1/L2 and orthogonal
penalties and the norm constraints (kernels/regularize.cl), a mixin of OpenCLBackend using its
_run1d, _scratch_tensor and _check helpers. Every tensor stays on the device."""

from ..base import norm_layout, orthogonal_layout
from .training_ops import REDUCE_MIN_CHUNK, REDUCE_PARTS


class RegularizerOps:
    """l1_l2_penalty, l1_l2_gradient, orthogonal_penalty / gradient and norm_constraint of OpenCLBackend."""

    def l1_l2_penalty(self, out, w, l1, l2, accumulate=False):
        self._check("l1_l2_penalty", "out", out, (1,))
        chunk = max(REDUCE_MIN_CHUNK, -(-w.size // REDUCE_PARTS))
        parts = max(1, -(-w.size // chunk))
        partial = self._scratch_tensor("l1_l2_partial", (parts,))
        self._run1d("regularize.cl", "l1_l2_partial", parts, partial, w, float(l1), float(l2), w.size, parts,
                    chunk)
        self.rt.launch(self._kernel("regularize.cl", "l1_l2_finish"), (1,), None, out, partial, parts,
                       int(bool(accumulate)))

    def l1_l2_gradient(self, g, w, l1, l2):
        self._check_same_size("l1_l2_gradient", ("g", "w"), (g, w))
        self._run1d("regularize.cl", "l1_l2_gradient", g.size, g, w, float(l1), float(l2), g.size)

    def norm_constraint(self, w, axis, min_value, max_value, rate):
        outer, reduce, inner = norm_layout(w.shape, axis, "opencl norm_constraint")
        self._run1d("regularize.cl", "norm_constraint", outer * inner, w, outer, reduce, inner,
                    float(min_value), float(max_value), float(rate))

    def _orthogonal_normalized(self, op, w, mode):
        m, k, sv, se = orthogonal_layout(w.shape, mode, f"opencl {op}")
        n = self._scratch_tensor("orthogonal_n", (m, k))
        inv = self._scratch_tensor("orthogonal_inv", (m,))
        self._run1d("regularize.cl", "orthogonal_normalize", m, n, inv, w, m, k, sv, se)
        return n, inv, (m, k, sv, se)

    def orthogonal_penalty(self, out, w, factor, mode, accumulate=False):
        self._check("orthogonal_penalty", "out", out, (1,))
        n, _, (m, k, _, _) = self._orthogonal_normalized("orthogonal_penalty", w, mode)
        partial = self._scratch_tensor("orthogonal_partial", (m,))
        scale = factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0
        self._run1d("regularize.cl", "orthogonal_partial", m, partial, n, m, k, float(scale))
        self.rt.launch(self._kernel("regularize.cl", "l1_l2_finish"), (1,), None, out, partial, m,
                       int(bool(accumulate)))

    def orthogonal_gradient(self, g, w, factor, mode):
        self._check("orthogonal_gradient", "g", g, w.shape)
        n, inv, (m, k, sv, se) = self._orthogonal_normalized("orthogonal_gradient", w, mode)
        d = self._scratch_tensor("orthogonal_d", (m, k))
        c2 = 2.0 * factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0
        self._run1d("regularize.cl", "orthogonal_gradient", m, g, d, n, inv, m, k, sv, se, float(c2))
