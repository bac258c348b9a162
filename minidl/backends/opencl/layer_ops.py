"""The layer-ops section of the contract (contract/layer_ops.py, which checked every tensor) on
the opencl backend: PReLU, Gaussian noise, spatial dropout's channel mask and transpose.

A mixin of OpenCLBackend (backend.py), which provides _run1d and _column_sums. Everything runs on the device (kernels/prelu.cl, dropout.cl and
reduce.cl's column sums).
"""

import numpy as np


class LayerOps:
    """PReLU, Gaussian noise and the channel mask of OpenCLBackend."""

    def _transpose(self, out, x, axes):
        geometry = self._transpose_geometry(x.shape, axes)
        self._run1d("transpose.cl", "transpose", x.size, out, x, geometry, len(x.shape), x.size)

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

    def _prelu_forward(self, out, x, alpha, rows, k):
        self._run1d("prelu.cl", "prelu_forward", x.size, out, x, alpha, k, x.size)

    def _prelu_backward(self, dx, dalpha, dout, x, alpha, rows, k):
        total = x.size
        self._run1d("prelu.cl", "prelu_dalpha_terms", total, dx, dout, x, total)
        self._column_sums(dalpha, dx, 1.0, accumulate=False)
        self._run1d("prelu.cl", "prelu_backward_dx", total, dx, dout, x, alpha, k, total)

    def _gaussian_noise(self, out, x, stddev, seed):
        self._run1d("dropout.cl", "gaussian_noise", -(-x.size // 4), out, x, stddev,
                    np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32), x.size)

    def _channel_mask_multiply(self, out, x, mask):
        _, k, c = x.shape
        self._run1d("dropout.cl", "channel_mask_multiply", x.size, out, x, mask, k, c, x.size)
