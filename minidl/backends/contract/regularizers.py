"""The regularizers section of the contract: Keras's L1/L2 and orthogonal penalties with their
gradients, and the norm constraints (MaxNorm, MinMaxNorm, UnitNorm). The public ops check the
shapes and work out the layout every backend uses (orthogonal_layout, norm_layout); a backend
implements the underscore names (numpy_ops/regularizers.py, cpu/regularizers.py,
opencl/regularizers.py)."""

import math

from .checks import same_shape


def orthogonal_layout(shape, mode, op):
    """(m, k, sv, se) of orthogonal_penalty: m vectors of k elements, element t of vector i
    at flat index i * sv + t * se."""
    if len(shape) != 2:
        raise ValueError(f"{op}: inputs to OrthogonalRegularizer must have rank 2, got shape {tuple(shape)}")
    if mode not in ("rows", "columns"):
        raise ValueError(f"{op}: mode must be 'rows' or 'columns', got {mode!r}")
    rows, cols = shape
    return (rows, cols, cols, 1) if mode == "rows" else (cols, rows, 1, cols)


def norm_layout(shape, axis, op="norm_constraint"):
    """(outer, reduce, inner) of a tensor of `shape` whose norms run over `axis` (an int or a
    list of consecutive axes, negative allowed): the layout norm_constraint works on."""
    rank = len(shape)
    axes = sorted({a % rank if -rank <= a < rank else a for a in ([axis] if isinstance(axis, int) else axis)})
    if not axes or axes[0] < 0 or axes[-1] >= rank or axes != list(range(axes[0], axes[-1] + 1)):
        raise ValueError(f"{op}: axis={axis!r} must name consecutive axes of a tensor of shape {tuple(shape)}")
    return (math.prod(shape[:axes[0]]), math.prod(shape[axes[0]:axes[-1] + 1]),
            math.prod(shape[axes[-1] + 1:]))


class RegularizersSection:
    """The contract's penalty and constraint ops; a backend implements the underscore names."""

    def l1_l2_penalty(self, out, w, l1, l2, accumulate=False):
        """out (1,) = l1 * sum|w| + l2 * sum w^2 (plus out when accumulate): Keras's L1L2."""
        same_shape("l1_l2_penalty", "out", out, (1,))
        self._l1_l2_penalty(out, w, l1, l2, bool(accumulate))

    def l1_l2_gradient(self, g, w, l1, l2):
        """g += l1 * sign(w) + 2 * l2 * w (the penalty's gradient, added in place)."""
        same_shape("l1_l2_gradient", "w", w, g.shape)
        self._l1_l2_gradient(g, w, l1, l2)

    def orthogonal_penalty(self, out, w, factor, mode, accumulate=False):
        """out (1,) = Keras's OrthogonalRegularizer of the 2-D w (plus out when accumulate): the
        rows (mode "rows") or columns ("columns") l2-normalized (squared norm floored at 1e-12),
        factor / 2 * sum over pairs i != j of |n_i . n_j| / (m (m - 1) / 2) for m vectors."""
        op = "orthogonal_penalty"
        same_shape(op, "out", out, (1,))
        self._orthogonal_penalty(out, w, factor, mode, orthogonal_layout(w.shape, mode, op), bool(accumulate))

    def orthogonal_gradient(self, g, w, factor, mode):
        """g += the gradient of orthogonal_penalty with respect to w."""
        op = "orthogonal_gradient"
        layout = orthogonal_layout(w.shape, mode, op)
        same_shape(op, "g", g, w.shape)
        self._orthogonal_gradient(g, w, factor, mode, layout)

    def norm_constraint(self, w, axis, min_value, max_value, rate):
        """Keras's MinMaxNorm in place (MaxNorm: min 0, rate 1; UnitNorm: min = max = rate = 1):
        norms over `axis` (consecutive axes, see norm_layout), w *= desired / (1e-7 + norm),
        desired = rate * clip(norm, min_value, max_value) + (1 - rate) * norm."""
        self._norm_constraint(w, norm_layout(w.shape, axis), min_value, max_value, rate)
