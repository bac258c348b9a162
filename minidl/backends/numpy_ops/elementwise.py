"""The elementwise section of the contract (contract/elementwise.py) in numpy: the reference
the C and OpenCL kernels are tested against. The contract checked every shape."""

import numpy as np


class NumpyElementwiseOps:
    """Mixin of NumpyBackend: the elementwise ops."""

    def _add(self, out, a, b):
        np.add(a, b, out=out)

    def _axpby(self, out, alpha, x, beta, y):
        out[...] = alpha * x + beta * y

    def _multiply(self, out, a, b):
        np.multiply(a, b, out=out)

    def _bias_add(self, out, x, bias):
        np.add(x, bias, out=out)

    def _bias_grad(self, dbias, dout):
        dbias[...] = dout.reshape(-1, dout.shape[-1]).sum(axis=0)

    def _concat_forward(self, out, xs):
        np.concatenate(xs, axis=-1, out=out)

    def _concat_backward(self, dxs, dout):
        start = 0
        for dx in dxs:
            dx[...] = dout[..., start:start + dx.shape[-1]]
            start += dx.shape[-1]

    def _dropout_forward(self, out, mask, x, rate, seed):
        # Philox is counter-based: the key alone fixes the stream, whatever ran before.
        # Uniforms are drawn in float64 so float32 and float64 backends drop the same units.
        generator = np.random.Generator(np.random.Philox(key=seed % 2 ** 64))
        keep = generator.random(x.shape) < 1 - rate
        mask[...] = keep / (1 - rate)
        np.multiply(x, mask, out=out)
