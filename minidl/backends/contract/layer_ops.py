"""The layer-ops section of the contract: the ops behind PReLU (prelu_forward/backward),
GaussianNoise / GaussianDropout (gaussian_noise), SpatialDropout (channel_mask_multiply) and
Permute (transpose). The public ops check every tensor once; a backend implements the
underscore names (numpy_ops/layer_ops.py, cpu/layer_ops.py, opencl/layer_ops.py)."""

import numbers

from .checks import same_shape


def _rows(op, x, alpha):
    """(rows, K) of PReLU's x (rows, K) with its slopes alpha (K,)."""
    if len(x.shape) != 2 or tuple(alpha.shape) != tuple(x.shape[1:]):
        raise ValueError(f"{op}: x must be (rows, K) and alpha (K,), got x {tuple(x.shape)} and "
                         f"alpha {tuple(alpha.shape)}")
    return x.shape[0], x.shape[1]


def _seed(op, seed):
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{op}: seed must be an int, got {type(seed).__name__}")
    return int(seed) % 2 ** 64


class LayerOpsSection:
    """The contract's layer ops; a backend implements the underscore names."""

    def transpose(self, out, x, axes):
        """out = x with its axes permuted (numpy.transpose(x, axes)): out axis i is x axis
        axes[i]; rank 1 to 8. out must not alias x. The implementation gets axes as ints."""
        op = "transpose"
        axes = tuple(int(a) for a in axes)
        rank = len(x.shape)
        if sorted(axes) != list(range(rank)) or not 1 <= rank <= 8:
            raise ValueError(f"{op}: axes {axes} must permute the {rank} axes of x {tuple(x.shape)} "
                             f"(rank 1 to 8)")
        same_shape(op, "out", out, tuple(x.shape[a] for a in axes))
        self._transpose(out, x, axes)

    def prelu_forward(self, out, x, alpha):
        """out = x where x > 0, else alpha * x; x (rows, K), alpha (K,) one slope per column."""
        op = "prelu_forward"
        rows, k = _rows(op, x, alpha)
        same_shape(op, "out", out, tuple(x.shape))
        self._prelu_forward(out, x, alpha, rows, k)

    def prelu_backward(self, dx, dalpha, dout, x, alpha):
        """dx = dout where x > 0, alpha * dout where x < 0, 0 at 0 (Keras's relu(x) - alpha *
        relu(-x)); dalpha (K,) = the column sums of x * dout where x < 0."""
        op = "prelu_backward"
        rows, k = _rows(op, x, alpha)
        same_shape(op, "dx", dx, tuple(x.shape))
        same_shape(op, "dout", dout, tuple(x.shape))
        same_shape(op, "dalpha", dalpha, (k,))
        self._prelu_backward(dx, dalpha, dout, x, alpha, rows, k)

    def gaussian_noise(self, out, x, stddev, seed):
        """out = x + stddev * z, z ~ N(0, 1) drawn from a counter-based generator keyed by the
        int `seed` (same seed -> same noise on a backend). out may alias x. The implementation
        gets the seed as an unsigned 64-bit int."""
        op = "gaussian_noise"
        seed = _seed(op, seed)
        same_shape(op, "out", out, tuple(x.shape))
        self._gaussian_noise(out, x, float(stddev), seed)

    def channel_mask_multiply(self, out, x, mask):
        """out (N, K, C) = x (N, K, C) * mask (N, C) broadcast over K (SpatialDropout's
        channels, Dropout's shared noise_shape)."""
        op = "channel_mask_multiply"
        if len(x.shape) != 3 or tuple(mask.shape) != (x.shape[0], x.shape[2]):
            raise ValueError(f"{op}: x must be (N, K, C) and mask (N, C), got x {tuple(x.shape)} and "
                             f"mask {tuple(mask.shape)}")
        same_shape(op, "out", out, tuple(x.shape))
        self._channel_mask_multiply(out, x, mask)
