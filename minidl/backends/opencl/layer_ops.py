"""The opencl ops of the layers added with the Keras image toolbox: PReLU, Gaussian noise and
spatial dropout's channel mask (layer normalization is in normalization.py).

A mixin of OpenCLBackend (backend.py), which provides _run1d, _check, _check_same_size and
_column_sums. Everything runs on the device (kernels/prelu.cl, dropout.cl and
reduce.cl's column sums).
"""

import numpy as np


class LayerOps:
    """PReLU, Gaussian noise and the channel mask of OpenCLBackend."""

    def transpose(self, out, x, axes):
        axes = tuple(int(a) for a in axes)
        rank = len(x.shape)
        if sorted(axes) != list(range(rank)) or not 1 <= rank <= 8:
            raise ValueError(f"opencl transpose: axes {axes} must permute the {rank} axes of x {x.shape} "
                             f"(rank 1 to 8)")
        self._check("transpose", "out", out, tuple(x.shape[a] for a in axes))
        geometry = self._transpose_geometry(x.shape, axes)
        self._run1d("transpose.cl", "transpose", x.size, out, x, geometry, rank, x.size)

    def _transpose_geometry(self, shape, axes):
        """The int32 (out shape, source strides) table of a transpose, uploaded once per
        (shape, axes) and kept on the device: a training step transfers nothing."""
        tables = getattr(self, "_transpose_tables", None)
        if tables is None:
            tables = self._transpose_tables = {}
        key = (tuple(shape), axes)
        table = tables.get(key)
        if table is None:
            if len(tables) >= 64:          # batch sizes come and go: keep the table bounded
                tables.clear()
            strides = [1] * len(shape)
            for i in range(len(shape) - 2, -1, -1):
                strides[i] = strides[i + 1] * shape[i + 1]
            host = np.array([shape[a] for a in axes] + [strides[a] for a in axes], dtype=np.int32)
            table = tables[key] = self.from_numpy(host, dtype="int32")
        return table

    def _prelu_geometry(self, op, x, alpha):
        if len(x.shape) != 2 or tuple(alpha.shape) != tuple(x.shape[1:]):
            raise ValueError(f"opencl {op}: x must be (rows, K) and alpha (K,), got x {x.shape} and "
                             f"alpha {alpha.shape}")
        return x.shape[1], x.size

    def prelu_forward(self, out, x, alpha):
        self._check_same_size("prelu_forward", ("out", "x"), (out, x))
        k, total = self._prelu_geometry("prelu_forward", x, alpha)
        self._run1d("prelu.cl", "prelu_forward", total, out, x, alpha, k, total)

    def prelu_backward(self, dx, dalpha, dout, x, alpha):
        op = "prelu_backward"
        self._check_same_size(op, ("dx", "dout", "x"), (dx, dout, x))
        k, total = self._prelu_geometry(op, x, alpha)
        self._check(op, "dalpha", dalpha, (k,))
        self._run1d("prelu.cl", "prelu_dalpha_terms", total, dx, dout, x, total)
        self._column_sums(dalpha, dx, 1.0, accumulate=False)
        self._run1d("prelu.cl", "prelu_backward_dx", total, dx, dout, x, alpha, k, total)

    def gaussian_noise(self, out, x, stddev, seed):
        self._check_same_size("gaussian_noise", ("out", "x"), (out, x))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"opencl gaussian_noise: seed must be an int, got {type(seed).__name__}")
        seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self._run1d("dropout.cl", "gaussian_noise", -(-x.size // 4), out, x, float(stddev),
                    np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32), x.size)

    def channel_mask_multiply(self, out, x, mask):
        op = "channel_mask_multiply"
        if len(x.shape) != 3 or tuple(mask.shape) != (x.shape[0], x.shape[2]):
            raise ValueError(f"opencl {op}: x must be (N, K, C) and mask (N, C), got x {x.shape} and "
                             f"mask {mask.shape}")
        self._check_same_size(op, ("out", "x"), (out, x))
        _, k, c = x.shape
        self._run1d("dropout.cl", "channel_mask_multiply", x.size, out, x, mask, k, c, x.size)
