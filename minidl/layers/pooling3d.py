"""The 3-D poolings (channels_last, (N, D, H, W, C)): MaxPooling3D, AveragePooling3D,
GlobalAveragePooling3D, GlobalMaxPooling3D, on the backend's 2-D pooling ops.

A 3-D window is separable: pooling over (H, W) of the (N * D, H, W, C) view, then over D of the
result viewed as (N, D, OH * OW, C) with a (pool_d, 1) window, gives the 3-D window's maximum,
and its mean as well (padded positions are left out of both counts, and the counts multiply).
The backward passes run the two stages' backward ops in reverse order (the max stages route the
gradient through each stage's winner).
"""

from ..backends.window import conv_output_length
from .base import Layer, format_shape
from .conv1d import check_channels_last
from .conv import normalize_padding


def normalize_triple(value, what, owner, minimum=1):
    """An int or a triple of ints -> a triple of ints >= minimum."""
    triple = (value,) * 3 if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        triple = tuple(triple)
    except TypeError:
        triple = ()
    if len(triple) != 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum
                                   for v in triple):
        raise ValueError(f"{owner}: {what} must be an int >= {minimum} or a triple of them, "
                         f"got {value!r}")
    return triple


class _Pooling3D(Layer):
    _max = True

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, name=None,
                 trainable=True):
        super().__init__(name=name, trainable=trainable)
        owner = self.describe()
        check_channels_last(data_format, owner)
        self.pool_size = normalize_triple(pool_size, "pool_size", owner)
        self.strides = normalize_triple(self.pool_size if strides is None else strides, "strides", owner)
        self.padding = normalize_padding(padding, owner)

    def get_config(self):
        return dict(super().get_config(), pool_size=tuple(self.pool_size), strides=tuple(self.strides),
                    padding=self.padding, data_format="channels_last")

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")
        self.compute_output_shape(input_shape)

    def compute_output_shape(self, input_shape):
        out = []
        for size, k, s in zip(input_shape[:3], self.pool_size, self.strides):
            if size is not None and self.padding == "valid" and size < k:
                raise ValueError(f"{self.describe()}: pool_size {self.pool_size} is larger than its "
                                 f"input {format_shape(input_shape)} with padding 'valid'")
            out.append(None if size is None else conv_output_length(size, k, s, self.padding))
        return tuple(out) + (input_shape[3],)

    def _stages(self, call, shape):
        """The two Window2D plans for a batch of `shape`: (H, W) of (N * D, H, W, C), then D of
        (N, D, OH * OW, C); kept on the call for its latest shape (call.stages)."""
        held = getattr(call, "stages", None)
        if held is None or held[0] != shape or held[1] is not self.backend:
            n, d, h, w, c = shape
            b = self.backend
            first = b.pool2d_plan((n * d, h, w, c), self.pool_size[1:], self.strides[1:], self.padding)
            second = b.pool2d_plan((n, d, first.oh * first.ow, c), (self.pool_size[0], 1),
                                   (self.strides[0], 1), self.padding)
            held = call.stages = (shape, self.backend, first, second)
        return held[2:]

    def forward(self, call, x, training):
        b = self.backend
        n, *_ = call.x_shape = b.shape(x)
        first, second = self._stages(call, call.x_shape)
        mid = call.buffer("mid", first.out_shape)
        out = call.buffer("out", second.out_shape)
        x4 = b.reshape(x, first.in_shape)
        mid4 = b.reshape(mid, second.in_shape)
        if self._max:
            call.argmax = (call.buffer("argmax1", first.out_shape, "int32"),
                           call.buffer("argmax2", second.out_shape, "int32"))
            b.max_pool2d_forward(mid, call.argmax[0], x4, first)
            b.max_pool2d_forward(out, call.argmax[1], mid4, second)
        else:
            b.avg_pool2d_forward(mid, x4, first)
            b.avg_pool2d_forward(out, mid4, second)
        return b.reshape(out, (n, second.oh, first.oh, first.ow, first.oc))

    def backward(self, call, dout):
        b = self.backend
        first, second = self._stages(call, call.x_shape)
        dmid = call.buffer("dmid", second.in_shape)
        dx = call.buffer("dx", first.in_shape)
        dout4 = b.reshape(dout, second.out_shape)
        if self._max:
            b.max_pool2d_backward(dmid, dout4, call.argmax[1], second)
            b.max_pool2d_backward(dx, b.reshape(dmid, first.out_shape), call.argmax[0], first)
        else:
            b.avg_pool2d_backward(dmid, dout4, second)
            b.avg_pool2d_backward(dx, b.reshape(dmid, first.out_shape), first)
        return b.reshape(dx, call.x_shape)


class MaxPooling3D(_Pooling3D):
    """Window maxima over depth, height and width; pool_size (2, 2, 2), strides pool_size by default."""


class AveragePooling3D(_Pooling3D):
    """Window means over depth, height and width (padded positions not counted, as Keras)."""

    _max = False

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 trainable=True):
        super().__init__(pool_size, strides, padding, data_format, name, trainable)


class _GlobalPooling3D(Layer):
    def __init__(self, data_format=None, keepdims=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.keepdims = bool(keepdims)

    def get_config(self):
        return dict(super().get_config(), data_format="channels_last", keepdims=self.keepdims)

    def build(self, input_shape):
        self.expect_rank(input_shape, 4, "(depth, height, width, channels)")

    def compute_output_shape(self, input_shape):
        return (1, 1, 1, input_shape[3]) if self.keepdims else (input_shape[3],)


class GlobalAveragePooling3D(_GlobalPooling3D):
    """(N, D, H, W, C) -> (N, C) (or (N, 1, 1, 1, C) with keepdims=True), the mean over D, H, W."""

    def forward(self, call, x, training):
        b = self.backend
        n, d, h, w, c = call.x_shape = b.shape(x)
        out = call.buffer("out", (n, c))
        b.global_avg_pool_forward(out, b.reshape(x, (n, d * h, w, c)))
        return b.reshape(out, (n,) + self.compute_output_shape((d, h, w, c)))

    def backward(self, call, dout):
        b = self.backend
        n, d, h, w, c = call.x_shape
        dx = call.buffer("dx", call.x_shape)
        b.global_avg_pool_backward(b.reshape(dx, (n, d * h, w, c)), b.reshape(dout, (n, c)))
        return dx


class GlobalMaxPooling3D(_GlobalPooling3D):
    """(N, D, H, W, C) -> (N, C) (or (N, 1, 1, 1, C) with keepdims=True), the maximum over D, H, W:
    max_pool2d with one window over the (N, 1, D * H * W, C) view."""

    def forward(self, call, x, training):
        b = self.backend
        n, d, h, w, c = call.x_shape = b.shape(x)
        view = (n, 1, d * h * w, c)
        plan = call.plan
        if plan is None or plan.in_shape != view or call.plan_backend is not b:
            plan = call.plan = b.pool2d_plan(view, (1, d * h * w), (1, 1), "valid")
            call.plan_backend = b
        out = call.buffer("out", plan.out_shape)
        call.argmax = call.buffer("argmax", plan.out_shape, "int32")
        b.max_pool2d_forward(out, call.argmax, b.reshape(x, view), plan)
        return b.reshape(out, (n,) + self.compute_output_shape((d, h, w, c)))

    def backward(self, call, dout):
        b = self.backend
        plan = call.plan
        dx = call.buffer("dx", plan.in_shape)
        b.max_pool2d_backward(dx, b.reshape(dout, plan.out_shape), call.argmax, plan)
        return b.reshape(dx, call.x_shape)

MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D

__all__ = ["MaxPooling3D", "AveragePooling3D", "GlobalAveragePooling3D", "GlobalMaxPooling3D",
           "MaxPool3D", "AvgPool3D", "GlobalAvgPool3D", "GlobalMaxPool3D", "normalize_triple"]
