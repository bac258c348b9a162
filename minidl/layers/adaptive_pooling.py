"""AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D (Keras 3's, channels_last): pool to a
fixed output_size whatever the input size. Bin i of an axis of length L covers the steps
[floor(i * L / out), ceil((i + 1) * L / out)) (PyTorch's and Keras's bins).

The bins of an axis have at most two sizes. For each size s, the backend pools every window of
s steps (stride 1, the 2-D pooling ops on a (N, 1, L, C) view) and takes (gathers) the windows
that start a bin of that size; with two sizes, `where` picks each bin's. Backward reverses the
steps: take_backward scatters each bin's gradient to its window, the pooling's backward
spreads it over the steps. A 2-D or 3-D layer pools its last axis, then the one before, ...
(bins are products of the axes' bins, so the mean of means and the max of maxes are the
layer's), each on a (before, length, after) view.
"""

import math

import numpy as np

from .base import Layer
from .conv1d import check_channels_last


def bins(length, out):
    """(starts, sizes) of the `out` bins of an axis of `length`."""
    i = np.arange(out)
    starts = (i * length) // out
    ends = -((-(i + 1) * length) // out)
    return starts, ends - starts


class _Stage:
    """Adaptive pooling of the middle axis of a (N, L, C) view to `out` bins, for one call of
    `layer`: the plans and bin indices of the call's latest shape, its buffers on the call
    (roles prefixed by `tag`)."""

    def __init__(self, layer, call, tag, out, use_max):
        self.layer, self.call, self.tag, self.out, self.use_max = layer, call, tag, out, use_max
        self.shape = self.backend = None
        self.argmax = {}   # bin size index -> the argmax its max pooling routes gradients by

    def _prepare(self, shape):
        b = self.layer.backend
        if self.shape == shape and self.backend is b:
            return
        n, length, c = shape
        if length < self.out:
            raise ValueError(f"{self.layer.describe()}: output_size {self.out} is larger than the "
                             f"input's {length} steps along an axis (input shape {shape})")
        starts, sizes = bins(length, self.out)
        self.plans = []
        for s in sorted(set(sizes.tolist())):
            plan = b.pool2d_plan((n, 1, length, c), (1, s), (1, 1), "valid")
            # the bins of another size read window 0 (where drops them): in range for every s
            indices = b.from_numpy(np.where(sizes == s, starts, 0).astype(np.int32))
            self.plans.append((s, plan, indices))
        self.big = None
        if len(self.plans) == 2:   # 1.0 where the bin has the larger size
            big = (sizes == self.plans[1][0]).astype(np.float32).reshape(1, self.out, 1)
            self.big = b.from_numpy(big)
            self.small = b.from_numpy(1.0 - big)
        self.shape, self.backend = shape, b

    def forward(self, x):
        call, b = self.call, self.layer.backend
        shape = b.shape(x)
        self._prepare(shape)
        n, length, c = shape
        x4 = b.reshape(x, (n, 1, length, c))
        taken = []
        for k, (s, plan, indices) in enumerate(self.plans):
            pooled = call.buffer(f"{self.tag}pooled{k}", plan.out_shape)
            if self.use_max:
                self.argmax[k] = call.buffer(f"{self.tag}argmax{k}", plan.out_shape, "int32")
                b.max_pool2d_forward(pooled, self.argmax[k], x4, plan)
            else:
                b.avg_pool2d_forward(pooled, x4, plan)
            t = call.buffer(f"{self.tag}taken{k}", (n, self.out, c))
            b.take(t, b.reshape(pooled, (n, plan.ow, c)), indices, 1)
            taken.append(t)
        if len(taken) == 1:
            return taken[0]
        out = call.buffer(f"{self.tag}out", (n, self.out, c))
        b.where(out, self.big, taken[1], taken[0])
        return out

    def backward(self, dout):
        call, b = self.call, self.layer.backend
        n, length, c = self.shape
        dx = call.buffer(f"{self.tag}dx", self.shape)
        for k, (s, plan, indices) in enumerate(self.plans):
            d = dout
            if self.big is not None:
                d = call.buffer(f"{self.tag}dtaken{k}", (n, self.out, c))
                b.binary(d, dout, self.big if k else self.small, "multiply")
            dpooled = call.buffer(f"{self.tag}dpooled{k}", (n, plan.ow, c))
            b.fill(dpooled, 0.0)
            b.take_backward(dpooled, d, indices, 1)
            target = dx if k == 0 else call.buffer(f"{self.tag}dpart", self.shape)
            dpooled4 = b.reshape(dpooled, plan.out_shape)
            target4 = b.reshape(target, plan.in_shape)
            if self.use_max:
                b.max_pool2d_backward(target4, dpooled4, self.argmax[k], plan)
            else:
                b.avg_pool2d_backward(target4, dpooled4, plan)
            if k:
                b.add(dx, dx, target)
        return dx


def _output_size(value, rank, owner):
    items = (value,) * rank if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        items = tuple(items)
    except TypeError:
        items = ()
    if len(items) != rank or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                     for v in items):
        raise ValueError(f"{owner}: output_size must be a positive int or a tuple of {rank}, got "
                         f"{value!r}")
    return items


class _Adaptive(Layer):
    _max = False
    _rank = 1

    def __init__(self, output_size, data_format=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        check_channels_last(data_format, self.describe())
        self.output_size = _output_size(output_size, self._rank, self.describe())

    def get_config(self):
        return dict(super().get_config(), output_size=list(self.output_size), data_format="channels_last")

    def build(self, input_shape):
        what = {1: "(steps, channels)", 2: "(height, width, channels)",
                3: "(depth, height, width, channels)"}[self._rank]
        self.expect_rank(input_shape, self._rank + 1, what)

    def compute_output_shape(self, input_shape):
        return tuple(self.output_size) + (input_shape[-1],)

    def _stage_views(self, shape):
        """For each stage, last axis first: (axis, its (before, length, after) view)."""
        n, *spatial, c = shape
        views = []
        for axis in range(self._rank - 1, -1, -1):
            before = n * math.prod(spatial[:axis])
            views.append((axis, (before, spatial[axis], math.prod(spatial[axis + 1:]) * c)))
            spatial[axis] = self.output_size[axis]
        return views

    def _stages(self, call):
        """The call's stages, one per axis (made at its first forward)."""
        stages = getattr(call, "stages", None)
        if stages is None:
            stages = call.stages = [_Stage(self, call, f"axis{i}_", o, self._max)
                                    for i, o in enumerate(self.output_size)]
        return stages

    def forward(self, call, x, training):
        b = self.backend
        shape = call.x_shape = b.shape(x)
        stages = self._stages(call)
        out = x
        for axis, view in self._stage_views(shape):   # the last axis first, then the others
            out = stages[axis].forward(b.reshape(out, view))
        return b.reshape(out, (shape[0],) + self.output_size + (shape[-1],))

    def backward(self, call, dout):
        b = self.backend
        stages = self._stages(call)
        d = dout
        for axis, view in reversed(self._stage_views(call.x_shape)):
            out_view = (view[0], self.output_size[axis], view[2])
            d = stages[axis].backward(b.reshape(d, out_view))
        return b.reshape(d, call.x_shape)


class AdaptiveAveragePooling1D(_Adaptive):
    """(N, L, C) -> (N, output_size, C), the mean of each bin."""


class AdaptiveMaxPooling1D(_Adaptive):
    """(N, L, C) -> (N, output_size, C), the maximum of each bin."""
    _max = True


class AdaptiveAveragePooling2D(_Adaptive):
    """(N, H, W, C) -> (N, oh, ow, C), the mean of each bin."""
    _rank = 2


class AdaptiveMaxPooling2D(_Adaptive):
    """(N, H, W, C) -> (N, oh, ow, C), the maximum of each bin."""
    _rank = 2
    _max = True


class AdaptiveAveragePooling3D(_Adaptive):
    """(N, D, H, W, C) -> (N, od, oh, ow, C), the mean of each bin."""
    _rank = 3


class AdaptiveMaxPooling3D(_Adaptive):
    """(N, D, H, W, C) -> (N, od, oh, ow, C), the maximum of each bin."""
    _rank = 3
    _max = True


__all__ = ["AdaptiveAveragePooling1D", "AdaptiveMaxPooling1D", "AdaptiveAveragePooling2D",
           "AdaptiveMaxPooling2D", "AdaptiveAveragePooling3D", "AdaptiveMaxPooling3D"]
