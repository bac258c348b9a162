"""Layers that merge several tensors: Add and Concatenate."""

from .base import Layer, format_shape


class Add(Layer):
    """Elementwise sum of inputs of identical shape (residual connections)."""

    multiple_inputs = True

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(f"{self.describe()} needs at least 2 inputs, got {len(input_shape)}")
        if any(s != input_shape[0] for s in input_shape):
            raise ValueError(f"{self.describe()} needs inputs of one shape, got "
                             + ", ".join(format_shape(s) for s in input_shape))

    def compute_output_shape(self, input_shape):
        return input_shape[0]

    def forward(self, xs, training):
        b = self.backend
        out = self.buffer("out", b.shape(xs[0]))
        b.add(out, xs[0], xs[1])
        for x in xs[2:]:
            b.add(out, out, x)
        return out

    def backward(self, dout):
        # d(sum)/d(each input) is the identity: every input receives dout itself.
        return [dout] * len(self.input_shape)


class Concatenate(Layer):
    """Concatenation along the last (channel) axis."""

    multiple_inputs = True

    def __init__(self, axis=-1, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.axis = axis

    def get_config(self):
        return dict(super().get_config(), axis=self.axis)

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(f"{self.describe()} needs at least 2 inputs, got {len(input_shape)}")
        rank = len(input_shape[0])
        if self.axis not in (-1, rank):
            raise ValueError(f"{self.describe()}: only the last axis (axis=-1) is supported, "
                             f"got axis={self.axis}")
        if any(len(s) != rank or s[:-1] != input_shape[0][:-1] for s in input_shape):
            raise ValueError(f"{self.describe()} needs inputs that match except in the last "
                             "axis, got " + ", ".join(format_shape(s) for s in input_shape))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (sum(s[-1] for s in input_shape),)

    def forward(self, xs, training):
        out = self.buffer("out", (self.backend.shape(xs[0])[0],) + self.output_shape)
        self.backend.concat_forward(out, xs)
        return out

    def backward(self, dout):
        n = self.backend.shape(dout)[0]
        dxs = [self.buffer(("dx", i), (n,) + tuple(s)) for i, s in enumerate(self.input_shape)]
        self.backend.concat_backward(dxs, dout)
        return dxs
