"""The regularizers section on the cpu backend: the L1/L2 and orthogonal penalties and the norm
constraints, a mixin of CpuBackend calling csrc/regularize.c. minidl/backends/contract/
regularizers.py checked the shapes and worked out the layouts."""

import numpy as np

from ._ffi import checked, fptr, output, raise_for_status


class CpuRegularizerOps:
    """l1_l2_penalty, l1_l2_gradient, orthogonal_penalty / gradient and norm_constraint of CpuBackend."""

    def _l1_l2_penalty(self, out, w, l1, l2, accumulate):
        op = "l1_l2_penalty"
        self._lib.minidl_l1_l2_penalty(output(op, "out", out), checked(op, "w", w), float(l1), float(l2),
                                       int(accumulate), w.size)

    def _l1_l2_gradient(self, g, w, l1, l2):
        op = "l1_l2_gradient"
        self._lib.minidl_l1_l2_gradient(output(op, "g", g), checked(op, "w", w), float(l1), float(l2), g.size)

    def _norm_constraint(self, w, layout, min_value, max_value, rate):
        self._lib.minidl_norm_constraint(output("norm_constraint", "w", w), float(min_value), float(max_value),
                                         float(rate), *layout)

    def _orthogonal_scratch(self, floats):
        """(float*, length) of scratch for the orthogonal regularizer; it grows once."""
        held = getattr(self, "_orthogonal_held", None)
        if held is None or held.size < floats:
            held = self._orthogonal_held = np.empty(floats, dtype=np.float32)
        return fptr(held), held.size

    def _orthogonal_penalty(self, out, w, factor, mode, layout, accumulate):
        op = "orthogonal_penalty"
        m, k, sv, se = layout
        status = self._lib.minidl_orthogonal_penalty(output(op, "out", out), checked(op, "w", w), float(factor),
                                                     int(bool(accumulate)), m, k, sv, se,
                                                     *self._orthogonal_scratch(m * k + m))
        if status:
            raise_for_status(op, status)

    def _orthogonal_gradient(self, g, w, factor, mode, layout):
        op = "orthogonal_gradient"
        m, k, sv, se = layout
        pg = output(op, "g", g)
        status = self._lib.minidl_orthogonal_gradient(pg, checked(op, "w", w), float(factor), m, k, sv, se,
                                                      *self._orthogonal_scratch(2 * m * k + m))
        if status:
            raise_for_status(op, status)
