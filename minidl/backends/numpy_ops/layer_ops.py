"""The numpy reference of the ops behind PReLU, GaussianNoise and SpatialDropout2D (a mixin of
NumpyBackend; see minidl/backends/base.py for each op's contract)."""

import numpy as np

from ..checks import check_shape


def _check_rows(op, x, vector, vector_name):
    if x.ndim != 2 or vector.shape != x.shape[1:]:
        raise ValueError(f"{op}: x must be (rows, K) and {vector_name} (K,), got x {tuple(x.shape)} "
                         f"and {vector_name} {tuple(vector.shape)}")


def check_seed(op, seed):
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{op}: seed must be an int, got {type(seed).__name__}")


def check_channel_mask(op, out, x, mask):
    if x.ndim != 3 or mask.shape != (x.shape[0], x.shape[2]):
        raise ValueError(f"{op}: x must be (N, K, C) and mask (N, C), got x {tuple(x.shape)} and "
                         f"mask {tuple(mask.shape)}")
    check_shape(op, "out", out, x.shape)


def check_axes(op, out, x, axes):
    """axes as a tuple of ints after checking it permutes x's axes and out has the result's shape."""
    axes = tuple(int(a) for a in axes)
    if sorted(axes) != list(range(x.ndim)) or not 1 <= x.ndim <= 8:
        raise ValueError(f"{op}: axes {axes} must permute the {x.ndim} axes of x {tuple(x.shape)} "
                         f"(rank 1 to 8)")
    check_shape(op, "out", out, tuple(x.shape[a] for a in axes))
    return axes


class NumpyLayerOps:
    def transpose(self, out, x, axes):
        out[...] = np.transpose(x, check_axes("transpose", out, x, axes))

    def prelu_forward(self, out, x, alpha):
        op = "prelu_forward"
        _check_rows(op, x, alpha, "alpha")
        check_shape(op, "out", out, x.shape)
        out[...] = np.where(x > 0, x, alpha * x)

    def prelu_backward(self, dx, dalpha, dout, x, alpha):
        op = "prelu_backward"
        _check_rows(op, x, alpha, "alpha")
        for name, t in (("dx", dx), ("dout", dout)):
            check_shape(op, name, t, x.shape)
        check_shape(op, "dalpha", dalpha, alpha.shape)
        negative = x < 0
        dalpha[...] = np.where(negative, x * dout, 0).sum(axis=0)
        # Keras's relu(x) - alpha * relu(-x): both parts have slope 0 at x = 0
        dx[...] = np.where(x > 0, dout, np.where(negative, alpha * dout, 0))

    def gaussian_noise(self, out, x, stddev, seed):
        op = "gaussian_noise"
        check_seed(op, seed)
        check_shape(op, "out", out, x.shape)
        generator = np.random.Generator(np.random.Philox(key=int(seed) % 2 ** 64))
        out[...] = x + stddev * generator.standard_normal(x.shape)

    def channel_mask_multiply(self, out, x, mask):
        check_channel_mask("channel_mask_multiply", out, x, mask)
        np.multiply(x, mask[:, None, :], out=out)
