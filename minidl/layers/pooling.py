"""Max, average, global average and global max pooling (channels_last)."""

from .base import Layer
from .conv1d import check_channels_last
from .conv import (WindowPlanMixin, check_window_fits, normalize_padding, normalize_pair,
                   window_output_shape)


class _Pooling2D(WindowPlanMixin, Layer):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.pool_size = normalize_pair(pool_size, "pool_size", self.describe())
        self.strides = normalize_pair(strides if strides is not None else self.pool_size,
                                      "strides", self.describe())
        self.padding = normalize_padding(padding, self.describe())

    def get_config(self):
        return dict(super().get_config(), pool_size=tuple(self.pool_size),
                    strides=tuple(self.strides), padding=self.padding)

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")
        check_window_fits(self, input_shape, self.pool_size, "pool_size")

    def compute_output_shape(self, input_shape):
        check_window_fits(self, input_shape, self.pool_size, "pool_size")   # a batch's shape
        return window_output_shape(input_shape, self.pool_size, self.strides, self.padding,
                                   input_shape[2])

    def _make_plan(self, in_shape):
        return self.backend.pool2d_plan(in_shape, self.pool_size, self.strides, self.padding)


class MaxPooling2D(_Pooling2D):
    def backward_reads_input(self):
        return False   # the argmax routes the gradient; the output is its own buffer

    def forward(self, call, x, training):
        plan = self.batch_plan(call, x)
        out = call.buffer("out", plan.out_shape)
        call.argmax = call.buffer("argmax", plan.out_shape, "int32")   # routes the gradient
        self.backend.max_pool2d_forward(out, call.argmax, x, plan)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", call.plan.in_shape)
        self.backend.max_pool2d_backward(dx, dout, call.argmax, call.plan)
        return dx


class AveragePooling2D(_Pooling2D):
    def backward_reads_input(self):
        return False   # the gradient is spread from dout alone

    def forward(self, call, x, training):
        plan = self.batch_plan(call, x)
        out = call.buffer("out", plan.out_shape)
        self.backend.avg_pool2d_forward(out, x, plan)
        return out

    def backward(self, call, dout):
        dx = call.buffer("dx", call.plan.in_shape)
        self.backend.avg_pool2d_backward(dx, dout, call.plan)
        return dx


class GlobalAveragePooling2D(Layer):
    """(N, H, W, C) -> (N, C), or (N, 1, 1, C) with keepdims=True: the mean over height and
    width. data_format comes first, as Keras's (only channels_last)."""

    def __init__(self, data_format=None, keepdims=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.keepdims = bool(keepdims)

    def get_config(self):
        return dict(super().get_config(), keepdims=self.keepdims)

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")

    def compute_output_shape(self, input_shape):
        return (1, 1, input_shape[2]) if self.keepdims else (input_shape[2],)

    def forward(self, call, x, training):
        n, h, w, c = self.backend.shape(x)
        if h * w < 1:   # a mean over no pixel: Keras gives NaN, minidl says so
            raise ValueError(f"{self.describe()}: averages over height and width, got images of "
                             f"{h}x{w} pixels (input {tuple(self.backend.shape(x))})")
        call.x_shape = (n, h, w, c)     # backward's dx shape
        out = call.buffer("out", (n, c))
        self.backend.global_avg_pool_forward(out, x)
        return self.backend.reshape(out, (n,) + self.output_shape) if self.keepdims else out

    def backward(self, call, dout):
        b = self.backend
        n, _, _, c = call.x_shape
        dx = call.buffer("dx", call.x_shape)
        b.global_avg_pool_backward(dx, b.reshape(dout, (n, c)) if self.keepdims else dout)
        return dx


class GlobalMaxPooling2D(WindowPlanMixin, Layer):
    """(N, H, W, C) -> (N, C), or (N, 1, 1, C) with keepdims=True: the maximum over height and
    width, as max_pool2d with one window covering the whole image (its argmax routes the
    gradient to each channel's winner)."""

    def __init__(self, keepdims=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.keepdims = bool(keepdims)

    def get_config(self):
        return dict(super().get_config(), keepdims=self.keepdims)

    def build(self, input_shape):
        self.expect_rank(input_shape, 3, "(height, width, channels)")

    def compute_output_shape(self, input_shape):
        return (1, 1, input_shape[2]) if self.keepdims else (input_shape[2],)

    def _make_plan(self, in_shape):
        return self.backend.pool2d_plan(in_shape, in_shape[1:3], (1, 1), "valid")

    def forward(self, call, x, training):
        b = self.backend
        plan = self.batch_plan(call, x)
        out = call.buffer("out", plan.out_shape)
        call.argmax = call.buffer("argmax", plan.out_shape, "int32")
        b.max_pool2d_forward(out, call.argmax, x, plan)
        return b.reshape(out, (plan.n,) + self.output_shape)

    def backward(self, call, dout):
        b = self.backend
        plan = call.plan
        dx = call.buffer("dx", plan.in_shape)
        b.max_pool2d_backward(dx, b.reshape(dout, plan.out_shape), call.argmax, plan)
        return dx
