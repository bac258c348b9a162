"""The layer-ops section of the contract (contract/layer_ops.py, which checked every tensor) on
the numpy backend: the reference of PReLU, Gaussian noise, the channel mask and transpose."""

import numpy as np


class NumpyLayerOps:
    def _transpose(self, out, x, axes):
        out[...] = np.transpose(x, axes)

    def _prelu_forward(self, out, x, alpha, rows, k):
        out[...] = np.where(x > 0, x, alpha * x)

    def _prelu_backward(self, dx, dalpha, dout, x, alpha, rows, k):
        negative = x < 0
        dalpha[...] = np.where(negative, x * dout, 0).sum(axis=0)
        # Keras's relu(x) - alpha * relu(-x): both parts have slope 0 at x = 0
        dx[...] = np.where(x > 0, dout, np.where(negative, alpha * dout, 0))

    def _gaussian_noise(self, out, x, stddev, seed):
        generator = np.random.Generator(np.random.Philox(key=seed))
        out[...] = x + stddev * generator.standard_normal(x.shape)

    def _channel_mask_multiply(self, out, x, mask):
        np.multiply(x, mask[:, None, :], out=out)
