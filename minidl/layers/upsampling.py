"""UpSampling2D (channels_last): repeats or bilinearly interpolates rows and columns."""

from .base import Layer
from .conv import normalize_pair

INTERPOLATIONS = ("nearest", "bilinear")


class UpSampling2D(Layer):
    """Upsamples images by size = (rows, cols): "nearest" repeats each pixel (Keras's
    ops.repeat), "bilinear" interpolates with half-pixel centers (Keras's ops.image.resize,
    no antialiasing). The backward pass routes gradients along the same weights."""

    def __init__(self, size=(2, 2), interpolation="nearest", name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.size = normalize_pair(size, "size", self.describe())
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"{self.describe()}: interpolation must be one of {list(INTERPOLATIONS)}, "
                             f"got {interpolation!r}")
        self.interpolation = interpolation

    def get_config(self):
        return dict(super().get_config(), size=list(self.size), interpolation=self.interpolation)

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")

    def compute_output_shape(self, input_shape):
        """An unknown (None) height or width stays unknown."""
        h, w, c = input_shape
        return (None if h is None else h * self.size[0], None if w is None else w * self.size[1], c)

    def forward(self, call, x, training):
        out = call.buffer("out", self.batch_output_shape(call, x))
        self.backend.upsample2d_forward(out, x, self.size, self.interpolation)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", self.batch_input_shape(call, dout))
        self.backend.upsample2d_backward(dx, dout, self.size, self.interpolation)
        return dx
