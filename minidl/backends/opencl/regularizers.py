"""The regularizers section on the opencl backend: the L1/L2 and orthogonal penalties and the norm
constraints (kernels/regularize.cl), a mixin of OpenCLBackend using its _run1d, _kernel,
_scratch_tensor and rt. minidl/backends/contract/regularizers.py checked the shapes and worked
out the layouts. Every tensor stays on the device."""

from .metrics import REDUCE_MIN_CHUNK, REDUCE_PARTS


def _orthogonal_scale(m, factor):
    return factor * 0.5 / (m * (m - 1) * 0.5) if m > 1 else 0.0


class RegularizerOps:
    """The regularizers section of OpenCLBackend."""

    def _l1_l2_penalty(self, out, w, l1, l2, accumulate):
        chunk = max(REDUCE_MIN_CHUNK, -(-w.size // REDUCE_PARTS))
        parts = max(1, -(-w.size // chunk))
        partial = self._scratch_tensor("l1_l2_partial", (parts,))
        self._run1d("regularize.cl", "l1_l2_partial", parts, partial, w, float(l1), float(l2), w.size, parts,
                    chunk)
        self.rt.launch(self._kernel("regularize.cl", "l1_l2_finish"), (1,), None, out, partial, parts,
                       int(accumulate))

    def _l1_l2_gradient(self, g, w, l1, l2):
        self._run1d("regularize.cl", "l1_l2_gradient", g.size, g, w, float(l1), float(l2), g.size)

    def _norm_constraint(self, w, layout, min_value, max_value, rate):
        outer, reduce, inner = layout
        self._run1d("regularize.cl", "norm_constraint", outer * inner, w, outer, reduce, inner,
                    float(min_value), float(max_value), float(rate))

    def _orthogonal_normalized(self, w, layout):
        m, k, sv, se = layout
        n = self._scratch_tensor("orthogonal_n", (m, k))
        inv = self._scratch_tensor("orthogonal_inv", (m,))
        self._run1d("regularize.cl", "orthogonal_normalize", m, n, inv, w, m, k, sv, se)
        return n, inv

    def _orthogonal_penalty(self, out, w, factor, mode, layout, accumulate):
        m, k = layout[:2]
        n, _ = self._orthogonal_normalized(w, layout)
        partial = self._scratch_tensor("orthogonal_partial", (m,))
        self._run1d("regularize.cl", "orthogonal_partial", m, partial, n, m, k, float(_orthogonal_scale(m, factor)))
        self.rt.launch(self._kernel("regularize.cl", "l1_l2_finish"), (1,), None, out, partial, m,
                       int(accumulate))

    def _orthogonal_gradient(self, g, w, factor, mode, layout):
        m, k, sv, se = layout
        n, inv = self._orthogonal_normalized(w, layout)
        d = self._scratch_tensor("orthogonal_d", (m, k))
        self._run1d("regularize.cl", "orthogonal_gradient", m, g, d, n, inv, m, k, sv, se,
                    float(2.0 * _orthogonal_scale(m, factor)))
