"""The 1-D poolings (channels_last): MaxPooling1D, AveragePooling1D on the 2-D pooling ops through
(N, 1, L, C) views (conv1d.Lifted1D), and GlobalAveragePooling1D / GlobalMaxPooling1D.

GlobalAveragePooling1D honours a mask as Keras 3 does: the mean over the unmasked steps only
(a sample with every step masked gives 0/0, as in Keras). GlobalMaxPooling1D does not take a
mask in Keras 3 (it drops it), nor here.
"""

from .base import Layer
from .conv1d import Lifted1D, check_channels_last, normalize_single
from .pooling import AveragePooling2D, GlobalMaxPooling2D, MaxPooling2D


class _Pooling1D(Lifted1D):
    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None,
                 trainable=True):
        self.name = name or "pooling1d"   # for messages before Layer.__init__ names the layer
        check_channels_last(data_format, self.name)
        pool = normalize_single(pool_size, "pool_size", self.name)
        stride = normalize_single(strides, "strides", self.name, allow_none=True)
        super().__init__((1, pool), None if stride is None else (1, stride), padding, name=name,
                         trainable=trainable)

    def get_config(self):
        config = super().get_config()
        config.update(pool_size=[self.pool_size[1]], strides=[self.strides[1]],
                      data_format="channels_last")
        return config


class MaxPooling1D(_Pooling1D, MaxPooling2D):
    """Window maxima over the steps; pool_size 2, strides pool_size by default."""


class AveragePooling1D(_Pooling1D, AveragePooling2D):
    """Window means over the steps (padded steps are not counted, as in Keras)."""

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 trainable=True):
        super().__init__(pool_size, strides, padding, data_format, name, trainable)


class GlobalAveragePooling1D(Layer):
    """(N, L, C) -> (N, C) (or (N, 1, C) with keepdims=True), the mean over the steps; with a
    mask (N, L), the mean over the unmasked steps."""

    supports_masking = True

    def __init__(self, data_format=None, keepdims=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.keepdims = bool(keepdims)

    def get_config(self):
        return dict(super().get_config(), data_format="channels_last", keepdims=self.keepdims)

    def build(self, input_shape):
        self.expect_rank(input_shape, 2, "(steps, channels)")

    def compute_output_shape(self, input_shape):
        return (1, input_shape[1]) if self.keepdims else (input_shape[1],)

    def output_has_mask(self, input_masked):
        return False

    def compute_mask(self, inputs, mask=None):
        return None   # the steps are gone

    def forward(self, call, x, training):
        b = self.backend
        n, steps, c = call.x_shape = b.shape(x)
        mask = call.mask
        out = call.buffer("out", (n, c))
        if mask is None:
            call.step_weights = None
            b.global_avg_pool_forward(out, b.reshape(x, (n, 1, steps, c)))
        else:
            # out = sum_t m_t x_t / sum_t m_t: the mask scaled per sample, then a weighted sum
            count = call.buffer("count", (n, 1))
            b.reduce(count, mask, "sum")
            call.step_weights = call.buffer("weights", (n, steps, 1))
            b.binary(b.reshape(call.step_weights, (n, steps)), mask, count, "divide")
            weighted = call.buffer("weighted", (n, steps, c))
            b.binary(weighted, x, call.step_weights, "multiply")
            b.reduce(b.reshape(out, (n, 1, c)), weighted, "sum")
        return b.reshape(out, (n,) + self.compute_output_shape((steps, c)))

    def backward(self, call, dout):
        b = self.backend
        n, steps, c = call.x_shape
        dx = call.buffer("dx", (n, steps, c))
        if call.step_weights is None:
            b.global_avg_pool_backward(b.reshape(dx, (n, 1, steps, c)), b.reshape(dout, (n, c)))
        else:   # dx_t = dout * m_t / sum m
            b.binary(dx, b.reshape(dout, (n, 1, c)), call.step_weights, "multiply")
        return dx


class GlobalMaxPooling1D(Lifted1D, GlobalMaxPooling2D):
    """(N, L, C) -> (N, C) (or (N, 1, C) with keepdims=True), the maximum over the steps."""

    def __init__(self, data_format=None, keepdims=False, name=None, trainable=True):
        self.name = name or "global_max_pooling1d"
        check_channels_last(data_format, self.name)
        super().__init__(keepdims, name=name, trainable=trainable)

    def get_config(self):
        return dict(super().get_config(), data_format="channels_last")

    def compute_output_shape(self, input_shape):
        if len(input_shape) == 3:
            return GlobalMaxPooling2D.compute_output_shape(self, input_shape)
        return (1, input_shape[1]) if self.keepdims else (input_shape[1],)

    def forward(self, call, x, training):
        b = self.backend
        n, steps, c = b.shape(x)
        plan = self.plan(call, n, (n, 1, steps, c))
        out = call.buffer("out", plan.out_shape)
        call.argmax = call.buffer("argmax", plan.out_shape, "int32")
        b.max_pool2d_forward(out, call.argmax, b.reshape(x, (n, 1, steps, c)), plan)
        return b.reshape(out, (n,) + self.compute_output_shape((steps, c)))

    def backward(self, call, dout):
        b = self.backend
        plan = call.plan
        dx = call.buffer("dx", plan.in_shape)
        b.max_pool2d_backward(dx, b.reshape(dout, plan.out_shape), call.argmax, plan)
        return self._drop_axis(b, dx)


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D

__all__ = ["MaxPooling1D", "AveragePooling1D", "GlobalAveragePooling1D", "GlobalMaxPooling1D",
           "MaxPool1D", "AvgPool1D", "GlobalAvgPool1D", "GlobalMaxPool1D"]
