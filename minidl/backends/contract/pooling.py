"""The pooling section of the contract: max and average pooling over a window plan, global
average pooling and zero padding of images (N, H, W, C). The public ops check every tensor
against the plan (or the pads) once; a backend implements the underscore names
(numpy_backend.py with numpy_ops/windows.py, cpu/backend.py, opencl/backend.py)."""

import numpy as np

from ..checks import check_pixels
from .checks import same_shape

INT32 = np.dtype(np.int32)


def _argmax(op, argmax, plan):
    same_shape(op, "argmax", argmax, plan.out_shape)
    if argmax.dtype != INT32:
        raise ValueError(f"{op}: argmax must be int32, got {argmax.dtype}")


def _images(op, name, t):
    """(N, H, W, C) of an image tensor, which must have at least one pixel."""
    if len(t.shape) != 4:
        raise ValueError(f"{op}: {name} must be a 4-D (N, H, W, C) tensor, got shape {tuple(t.shape)}")
    check_pixels(op, name, t.shape)
    return t.shape


def _pads(op, pads):
    if len(pads) != 4 or any(int(p) != p or p < 0 for p in pads):
        raise ValueError(f"{op}: pads must be 4 non-negative ints (top, bottom, left, right), got {pads!r}")
    return tuple(int(p) for p in pads)


class PoolingSection:
    """The contract's pooling and padding ops; a backend implements the underscore names."""

    def max_pool2d_forward(self, out, argmax, x, plan):
        """out (N, OH, OW, C) = window maxima of x; argmax (int32, out's shape) records the
        winner of each window in a backend-defined encoding that max_pool2d_backward reads.
        Padded positions never win."""
        op = "max_pool2d_forward"
        same_shape(op, "out", out, plan.out_shape)
        _argmax(op, argmax, plan)
        same_shape(op, "x", x, plan.in_shape)
        self._max_pool2d_forward(out, argmax, x, plan)

    def max_pool2d_backward(self, dx, dout, argmax, plan):
        """dx (N, H, W, C) = dout routed to each window's winner (overlapping windows add)."""
        op = "max_pool2d_backward"
        same_shape(op, "dx", dx, plan.in_shape)
        same_shape(op, "dout", dout, plan.out_shape)
        _argmax(op, argmax, plan)
        self._max_pool2d_backward(dx, dout, argmax, plan)

    def avg_pool2d_forward(self, out, x, plan):
        """out = window means of x; padded positions are excluded from the count (as TensorFlow)."""
        op = "avg_pool2d_forward"
        same_shape(op, "out", out, plan.out_shape)
        same_shape(op, "x", x, plan.in_shape)
        self._avg_pool2d_forward(out, x, plan)

    def avg_pool2d_backward(self, dx, dout, plan):
        """dx = gradient of avg_pool2d_forward."""
        op = "avg_pool2d_backward"
        same_shape(op, "dx", dx, plan.in_shape)
        same_shape(op, "dout", dout, plan.out_shape)
        self._avg_pool2d_backward(dx, dout, plan)

    def global_avg_pool_forward(self, out, x):
        """out (N, C) = mean of x (N, H, W, C) over H and W."""
        op = "global_avg_pool_forward"
        n, _, _, c = _images(op, "x", x)
        same_shape(op, "out", out, (n, c))
        self._global_avg_pool_forward(out, x)

    def global_avg_pool_backward(self, dx, dout):
        """dx (N, H, W, C) = dout (N, C) / (H * W) broadcast over H and W."""
        op = "global_avg_pool_backward"
        n, _, _, c = _images(op, "dx", dx)
        same_shape(op, "dout", dout, (n, c))
        self._global_avg_pool_backward(dx, dout)

    def pad2d_forward(self, out, x, pads):
        """out (N, H+t+b, W+l+r, C) = x zero-padded by pads = (top, bottom, left, right)."""
        op = "pad2d_forward"
        top, bottom, left, right = pads = _pads(op, pads)
        if len(x.shape) != 4:
            raise ValueError(f"{op}: x must be a 4-D (N, H, W, C) tensor, got shape {tuple(x.shape)}")
        n, h, w, c = x.shape
        same_shape(op, "out", out, (n, h + top + bottom, w + left + right, c))
        self._pad2d_forward(out, x, pads)

    def pad2d_backward(self, dx, dout, pads):
        """dx (N, H, W, C) = the interior of dout."""
        op = "pad2d_backward"
        top, bottom, left, right = pads = _pads(op, pads)
        if len(dx.shape) != 4:
            raise ValueError(f"{op}: dx must be a 4-D (N, H, W, C) tensor, got shape {tuple(dx.shape)}")
        n, h, w, c = dx.shape
        same_shape(op, "dout", dout, (n, h + top + bottom, w + left + right, c))
        self._pad2d_backward(dx, dout, pads)
