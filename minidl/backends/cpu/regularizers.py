"""The regularizers and constraints section on the cpu backend: the L1/L2 and orthogonal penalties
and the norm constraints, a mixin of CpuBackend calling csrc/regularize.c."""

import numpy as np

from ..base import norm_layout, orthogonal_layout
from ._ffi import checked, fptr, output, raise_for_status


class CpuRegularizerOps:
    """l1_l2_penalty, l1_l2_gradient, orthogonal_penalty / gradient and norm_constraint of CpuBackend."""

    def l1_l2_penalty(self, out, w, l1, l2, accumulate=False):
        op = "l1_l2_penalty"
        self._lib.minidl_l1_l2_penalty(output(op, "out", out, (1,)), checked(op, "w", w), float(l1), float(l2),
                                       int(bool(accumulate)), w.size)

    def l1_l2_gradient(self, g, w, l1, l2):
        op = "l1_l2_gradient"
        pg = output(op, "g", g)
        self._lib.minidl_l1_l2_gradient(pg, checked(op, "w", w, g.shape), float(l1), float(l2), g.size)

    def norm_constraint(self, w, axis, min_value, max_value, rate):
        outer, reduce, inner = norm_layout(w.shape, axis)
        self._lib.minidl_norm_constraint(output("norm_constraint", "w", w), float(min_value), float(max_value),
                                         float(rate), outer, reduce, inner)

    def _orthogonal_scratch(self, floats):
        """(float*, length) of scratch for the orthogonal regularizer; it grows once."""
        held = getattr(self, "_orthogonal_held", None)
        if held is None or held.size < floats:
            held = self._orthogonal_held = np.empty(floats, dtype=np.float32)
        return fptr(held), held.size

    def orthogonal_penalty(self, out, w, factor, mode, accumulate=False):
        op = "orthogonal_penalty"
        m, k, sv, se = orthogonal_layout(w.shape, mode, op)
        status = self._lib.minidl_orthogonal_penalty(output(op, "out", out, (1,)), checked(op, "w", w), float(factor),
                                                     int(bool(accumulate)), m, k, sv, se,
                                                     *self._orthogonal_scratch(m * k + m))
        if status:
            raise_for_status(op, status)

    def orthogonal_gradient(self, g, w, factor, mode):
        op = "orthogonal_gradient"
        m, k, sv, se = orthogonal_layout(w.shape, mode, op)
        pg = output(op, "g", g, w.shape)
        status = self._lib.minidl_orthogonal_gradient(pg, checked(op, "w", w), float(factor), m, k, sv, se,
                                                      *self._orthogonal_scratch(2 * m * k + m))
        if status:
            raise_for_status(op, status)
