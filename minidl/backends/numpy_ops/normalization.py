"""The normalization section on the numpy backend: batch and layer normalization in plain numpy,
the reference of the other backends. The contract (minidl/backends/contract/normalization.py)
checked every shape."""

import numpy as np


class NumpyNormalizationOps:
    """batchnorm and layernorm of NumpyBackend."""

    def _layernorm_forward(self, out, mean, invstd, x, gamma, beta, epsilon, centered=True):
        m = x.mean(axis=1, keepdims=True)
        inv = 1 / np.sqrt(((x - m) ** 2).mean(axis=1, keepdims=True) + epsilon)
        out[...] = (x - (m if centered else 0)) * inv * gamma + beta
        mean[...] = m[:, 0]
        invstd[...] = inv[:, 0]

    def _layernorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma, centered=True):
        inv = invstd[:, None]
        xhat = (x - mean[:, None]) * inv
        g = dout * gamma
        scaled = xhat if centered else x * inv   # what gamma multiplies in forward
        dgamma[...] = (dout * scaled).sum(axis=0)
        dbeta[...] = dout.sum(axis=0)
        dx[...] = inv * (g - (g.mean(axis=1, keepdims=True) if centered else 0)
                         - xhat * (g * scaled).mean(axis=1, keepdims=True))

    def _batchnorm_forward_train(self, out, mean, invstd, x, gamma, beta,
                                moving_mean, moving_var, momentum, epsilon):
        channels = x.shape[-1]
        rows = x.reshape(-1, channels)                      # (M, C)
        batch_mean = rows.mean(axis=0)
        batch_var = np.square(rows - batch_mean).mean(axis=0)   # biased, as Keras
        batch_invstd = 1 / np.sqrt(batch_var + epsilon)
        out[...] = self._normalize(rows, batch_mean, batch_invstd, gamma, beta).reshape(x.shape)
        mean[...] = batch_mean
        invstd[...] = batch_invstd
        moving_mean[...] = moving_mean * momentum + batch_mean * (1 - momentum)
        moving_var[...] = moving_var * momentum + batch_var * (1 - momentum)

    @staticmethod
    def _normalize(rows, mean, invstd, gamma, beta):
        """gamma * (rows - mean) * invstd + beta; gamma/beta None mean 1 and 0 (scale/center off)."""
        scale = invstd if gamma is None else gamma * invstd
        result = (rows - mean) * scale
        if beta is not None:
            result += beta
        return result

    def _batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon):
        invstd = 1 / np.sqrt(moving_var + epsilon)
        out[...] = self._normalize(x, moving_mean, invstd, gamma, beta)

    def _batchnorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma):
        channels = x.shape[-1]
        rows = x.reshape(-1, channels)                      # (M, C)
        drows = dout.reshape(-1, channels)
        count = rows.shape[0]
        xhat = (rows - mean) * invstd
        sum_dout = drows.sum(axis=0)
        sum_dout_xhat = (drows * xhat).sum(axis=0)
        scale = invstd if gamma is None else gamma * invstd
        grad = scale / count * (count * drows - sum_dout - xhat * sum_dout_xhat)
        dx[...] = grad.reshape(x.shape)
        if dgamma is not None:
            dgamma[...] = sum_dout_xhat
        if dbeta is not None:
            dbeta[...] = sum_dout
