"""The pooling section of the contract (contract/pooling.py, which checked every tensor against
the plan or the pads) on the numpy backend: window maxima and means through numpy_ops/windows.py,
global average pooling and zero padding as array expressions."""

from . import windows


class NumpyPoolingOps:
    """Mixin of NumpyBackend: the pooling ops."""

    def _max_pool2d_forward(self, out, argmax, x, plan):
        windows.max_pool2d_forward(out, argmax, x, plan)

    def _max_pool2d_backward(self, dx, dout, argmax, plan):
        windows.max_pool2d_backward(dx, dout, argmax, plan)

    def _avg_pool2d_forward(self, out, x, plan):
        windows.avg_pool2d_forward(out, x, plan)

    def _avg_pool2d_backward(self, dx, dout, plan):
        windows.avg_pool2d_backward(dx, dout, plan)

    def _global_avg_pool_forward(self, out, x):
        out[...] = x.mean(axis=(1, 2))

    def _global_avg_pool_backward(self, dx, dout):
        _, h, w, _ = dx.shape
        dx[...] = (dout / (h * w))[:, None, None, :]

    def _pad2d_forward(self, out, x, pads):
        top, _, left, _ = pads
        _, h, w, _ = x.shape
        out[...] = 0
        out[:, top:top + h, left:left + w, :] = x

    def _pad2d_backward(self, dx, dout, pads):
        top, _, left, _ = pads
        _, h, w, _ = dx.shape
        dx[...] = dout[:, top:top + h, left:left + w, :]
