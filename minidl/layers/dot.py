"""Dot and layers.dot (Keras's batch-wise dot product of two tensors), written with minidl.ops:
the backend's GEMM for stacks of matrices, its elementwise ops and reductions otherwise."""

from .. import ops
from .base import Layer, format_shape


class Dot(Layer):
    """Keras Dot(axes, normalize=False): for each sample, the dot product of inputs [x, y] along
    axes (an int for both, or a pair; the batch axis 0 excluded), the other axes of x then of y
    remaining: (B, n) . (B, n) -> (B, 1); (B, T, d) . (B, S, d) with axes=2 -> (B, T, S).
    normalize=True L2-normalizes both along their axes first (cosine similarity). Inputs of
    rank 2 or 3."""

    multiple_inputs = True

    def __init__(self, axes, normalize=False, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        pair = (axes, axes) if isinstance(axes, int) and not isinstance(axes, bool) else tuple(axes)
        if len(pair) != 2 or not all(isinstance(a, int) and not isinstance(a, bool) for a in pair):
            raise ValueError(f"{self.describe()}: axes must be an int or a pair of ints, got {axes!r}")
        self.axes, self.normalize = axes, bool(normalize)
        self._pair = pair

    def get_config(self):
        return dict(super().get_config(), axes=self.axes, normalize=self.normalize)

    def _resolved(self, shapes):
        """Each input's contracted axis as a positive index, after checking the shapes."""
        if len(shapes) != 2:
            raise ValueError(f"{self.describe()} takes a list of 2 inputs, got {len(shapes)}")
        ranks = [len(s) for s in shapes]
        axes = [a % r if -r <= a < r else None for a, r in zip(self._pair, ranks)]
        if (any(r not in (2, 3) for r in ranks) or None in axes or 0 in axes
                or shapes[0][axes[0]] != shapes[1][axes[1]]):
            raise ValueError(f"{self.describe()}: inputs of rank 2 or 3 whose axes {self.axes!r} (not the "
                             "batch axis) have one length needed, got "
                             + " and ".join(format_shape(s[1:]) for s in shapes))
        return axes

    def build(self, input_shape):
        self._resolved([tuple(s) for s in input_shape])   # with the batch axis (a call layer)

    def compute_output_shape(self, input_shape):
        shapes = [tuple(s) for s in input_shape]
        a0, a1 = self._resolved(shapes)
        rest = [d for i, d in enumerate(shapes[0]) if i not in (0, a0)] + \
               [d for i, d in enumerate(shapes[1]) if i not in (0, a1)]
        return (shapes[0][0],) + (tuple(rest) if rest else (1,))

    def call(self, inputs, training=None):
        x, y = inputs
        a0, a1 = self._resolved([x.shape, y.shape])
        if self.normalize:
            x, y = ops.normalize(x, axis=a0), ops.normalize(y, axis=a1)
        if len(x.shape) == 2 and len(y.shape) == 2:
            return ops.sum(x * y, axis=1, keepdims=True)
        # (B, m, c) @ (B, c, n): the contracted axis last in x, in the middle of y
        x3 = ops.moveaxis(x, a0, -1) if len(x.shape) == 3 else ops.expand_dims(x, 1)
        y3 = ops.moveaxis(y, a1, 1) if len(y.shape) == 3 else ops.expand_dims(y, 2)
        out = ops.matmul(x3, y3)
        if len(x.shape) == 2:
            out = ops.squeeze(out, 1)
        elif len(y.shape) == 2:
            out = ops.squeeze(out, 2)
        return out


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """Keras's functional form: Dot(axes, normalize)(inputs)."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
