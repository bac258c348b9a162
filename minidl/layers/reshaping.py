"""Cropping2D, RepeatVector and Permute: layers that move values without arithmetic."""

from ..arguments import int_tuple

from .base import Layer, format_shape
from .conv import ZeroPadding2D


class Cropping2D(ZeroPadding2D):
    """Removes rows and columns at the borders (Keras Cropping2D, channels_last):
    cropping = int, (rows, cols) or ((top, bottom), (left, right)). The forward is
    pad2d_backward (the interior of its input) and the backward pad2d_forward."""

    def __init__(self, cropping=((0, 0), (0, 0)), name=None, trainable=True):
        Layer.__init__(self, name=name, trainable=trainable)
        self.cropping = self._normalize(cropping, "cropping")

    # ZeroPadding2D's `pads` reads `padding`: the same four numbers
    @property
    def padding(self):
        return self.cropping

    def get_config(self):
        return dict(Layer.get_config(self), cropping=[list(p) for p in self.cropping])

    def compute_output_shape(self, input_shape):
        h, w, c = input_shape
        t, b, le, r = self.pads
        if (h is not None and t + b >= h) or (w is not None and le + r >= w):
            raise ValueError(f"{self.describe()}: cropping {self.cropping} leaves nothing of input "
                             f"shape {format_shape(input_shape)} (crop less than the height and width)")
        return (None if h is None else h - t - b, None if w is None else w - le - r, c)

    def forward(self, call, x, training):
        out = call.buffer("out", self.batch_output_shape(call, x))
        self.backend.pad2d_backward(out, x, self.pads)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", self.batch_input_shape(call, dout))
        self.backend.pad2d_forward(dx, dout, self.pads)
        return dx


class RepeatVector(Layer):
    """(N, F) -> (N, n, F): the input repeated n times (Keras RepeatVector). The forward is a
    concatenation of n copies along the features; the backward sums the n slices."""

    def __init__(self, n, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{self.describe()}: n must be an int >= 1, got {n!r}")
        self.n = n

    def get_config(self):
        return dict(super().get_config(), n=self.n)

    def build(self, input_shape):
        self.expect_rank(input_shape, 1, "(features,)")

    def compute_output_shape(self, input_shape):
        return (self.n, input_shape[0])

    def forward(self, call, x, training):
        b = self.backend
        batch, f = b.shape(x)
        out = call.buffer("out", (batch, self.n * f))
        b.concat_forward(out, [x] * self.n)
        return b.reshape(out, (batch, self.n, f))

    def backward(self, call, dout):
        b = self.backend
        batch, _, f = b.shape(dout)
        dx = call.buffer("dx", (batch, f))
        if self.n == 1:
            b.copy(dx, b.reshape(dout, (batch, f)))
            return dx
        pieces = [dx] + [call.buffer(f"piece{i}", (batch, f)) for i in range(1, self.n)]
        b.concat_backward(pieces, b.reshape(dout, (batch, self.n * f)))
        for piece in pieces[1:]:
            b.add(dx, dx, piece)
        return dx


class Permute(Layer):
    """Permutes the non-batch axes (Keras Permute): dims is a permutation of 1 .. rank - 1
    (the batch axis is 0 and stays first), e.g. Permute((2, 1)) swaps the two axes of (N, A, B)."""

    def __init__(self, dims, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.dims = int_tuple(dims, "dims", self.describe())
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"{self.describe()}: dims must be a permutation of 1 .. {len(self.dims)}, "
                             f"got {dims!r}")

    def get_config(self):
        return dict(super().get_config(), dims=list(self.dims))

    def build(self, input_shape):
        if len(input_shape) != len(self.dims):
            raise ValueError(f"{self.describe()}: dims {self.dims} permute {len(self.dims)} axes, inputs "
                             f"of shape {format_shape(input_shape)} have {len(input_shape)}")

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[d - 1] for d in self.dims)

    def forward(self, call, x, training):
        out = call.buffer("out", self.batch_output_shape(call, x))
        self.backend.transpose(out, x, (0,) + self.dims)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", self.batch_input_shape(call, dout))
        inverse = [0] * (len(self.dims) + 1)
        for i, a in enumerate((0,) + self.dims):
            inverse[a] = i
        self.backend.transpose(dx, dout, tuple(inverse))
        return dx
