"""UpSampling3D, ZeroPadding3D, Cropping3D and SpatialDropout3D (channels_last, (N, D, H, W, C)).

UpSampling3D repeats (nearest) with the backend's upsample2d twice: (H, W) of the (N * D, H, W, C)
view, then D of the result viewed as (N, D, H' * W' * C, 1). Padding and cropping move the
interior with the strided gather / scatter-add ops (strided_copy, strided_add), which are each
other's gradients.
"""

from .base import Layer, format_shape
from .conv1d import check_channels_last
from .core import Dropout
from .pooling3d import normalize_triple


class UpSampling3D(Layer):
    """Repeats each voxel size = (d, h, w) times along depth, height and width."""

    def __init__(self, size=(2, 2, 2), data_format=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.size = normalize_triple(size, "size", self.describe())

    def get_config(self):
        return dict(super().get_config(), size=list(self.size), data_format="channels_last")

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")

    def compute_output_shape(self, input_shape):
        return tuple(None if s is None else s * k for s, k in zip(input_shape[:3], self.size)) + (
            input_shape[3],)

    def _views(self, shape):
        n, d, h, w, c = shape
        sd, sh, sw = self.size
        rest = h * sh * w * sw * c
        return (n * d, h, w, c), (n * d, h * sh, w * sw, c), (n, d, rest, 1), (n, d * sd, rest, 1)

    def forward(self, call, x, training):
        b = self.backend
        shape = call.x_shape = b.shape(x)
        x4, mid4, mid_d, out_d = self._views(shape)
        mid = call.buffer("mid", mid4)
        b.upsample2d_forward(mid, b.reshape(x, x4), self.size[1:], "nearest")
        out = call.buffer("out", out_d)
        b.upsample2d_forward(out, b.reshape(mid, mid_d), (self.size[0], 1), "nearest")
        n, d, h, w, c = shape
        return b.reshape(out, (n,) + self.compute_output_shape((d, h, w, c)))

    def backward(self, call, dout):
        b = self.backend
        x4, mid4, mid_d, out_d = self._views(call.x_shape)
        dmid = call.buffer("dmid", mid_d)
        b.upsample2d_backward(dmid, b.reshape(dout, out_d), (self.size[0], 1), "nearest")
        dx = call.buffer("dx", x4)
        b.upsample2d_backward(dx, b.reshape(dmid, mid4), self.size[1:], "nearest")
        return b.reshape(dx, call.x_shape)


def _pads(value, what, owner):
    """int, (d, h, w) or ((d0, d1), (h0, h1), (w0, w1)) -> the last form."""
    def ok(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0
    if ok(value):
        return ((value, value),) * 3
    try:
        items = tuple(value)
        if len(items) == 3 and all(ok(v) for v in items):
            return tuple((v, v) for v in items)
        pairs = tuple(tuple(p) for p in items)
        if len(pairs) == 3 and all(len(p) == 2 and ok(p[0]) and ok(p[1]) for p in pairs):
            return pairs
    except TypeError:
        pass
    raise ValueError(f"{owner}: {what} must be an int >= 0, a triple of them or "
                     f"((d0, d1), (h0, h1), (w0, w1)), got {value!r}")


def _strides(shape):
    """Element strides of a contiguous tensor of `shape`."""
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


class ZeroPadding3D(Layer):
    """Pads depth, height and width with zeros."""

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.padding = _pads(padding, "padding", self.describe())

    def get_config(self):
        return dict(super().get_config(), padding=[list(p) for p in self.padding],
                    data_format="channels_last")

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")
        self.compute_output_shape(input_shape)

    def compute_output_shape(self, input_shape):
        return tuple(None if s is None else s + a + z
                     for s, (a, z) in zip(input_shape[:3], self.padding)) + (input_shape[3],)

    def _interior(self, big):
        """(offset, strides) of the inner block in a tensor of the padded shape `big`."""
        strides = _strides(big)
        offset = sum(p[0] * s for p, s in zip(self.padding, strides[1:4]))
        return offset, strides

    def forward(self, call, x, training):
        b = self.backend
        n, *rest = call.x_shape = b.shape(x)
        out = call.buffer("out", (n,) + self.compute_output_shape(tuple(rest)))
        b.fill(out, 0.0)
        b.strided_add(out, x, *self._interior(b.shape(out)))
        return out

    def backward(self, call, dout):
        b = self.backend
        dx = call.buffer("dx", call.x_shape)
        b.strided_copy(dx, dout, *self._interior(b.shape(dout)))
        return dx


class Cropping3D(ZeroPadding3D):
    """Removes voxels at the borders of depth, height and width."""

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, name=None, trainable=True):
        Layer.__init__(self, name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.cropping = _pads(cropping, "cropping", self.describe())

    @property
    def padding(self):   # the offsets of the kept block, as ZeroPadding3D's of its interior
        return self.cropping

    def get_config(self):
        return dict(Layer.get_config(self), cropping=[list(p) for p in self.cropping],
                    data_format="channels_last")

    def compute_output_shape(self, input_shape):
        out = []
        for s, (a, z) in zip(input_shape[:3], self.cropping):
            if s is not None and a + z >= s:
                raise ValueError(f"{self.describe()}: cropping {self.cropping} leaves nothing of "
                                 f"input shape {format_shape(input_shape)}")
            out.append(None if s is None else s - a - z)
        return tuple(out) + (input_shape[3],)

    def forward(self, call, x, training):
        b = self.backend
        n, *rest = call.x_shape = b.shape(x)
        out = call.buffer("out", (n,) + self.compute_output_shape(tuple(rest)))
        b.strided_copy(out, x, *self._interior(call.x_shape))
        return out

    def backward(self, call, dout):
        b = self.backend
        dx = call.buffer("dx", call.x_shape)
        b.fill(dx, 0.0)
        b.strided_add(dx, dout, *self._interior(call.x_shape))
        return dx


class SpatialDropout3D(Dropout):
    """Dropout of whole channels of volumes: Dropout with noise_shape (None, 1, 1, 1, channels)."""

    def __init__(self, rate, data_format=None, seed=None, name=None, trainable=True):
        super().__init__(rate, seed=seed, name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())

    def get_config(self):
        config = super().get_config()
        del config["noise_shape"]
        return dict(config, data_format="channels_last")

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")
        self._shared = (0, 1, 2)


__all__ = ["UpSampling3D", "ZeroPadding3D", "Cropping3D", "SpatialDropout3D"]
