"""The pooling section of the contract (contract/pooling.py, which checked every tensor against
the plan or the pads) on the opencl backend: kernels/pool.cl's window kernels, the kernel
profile's global average pooling (profiles.py) and elementwise.cl's zero padding."""

from .conv import window_args


class PoolingOps:
    """Mixin of OpenCLBackend (which provides _run1d and profile): the pooling ops."""

    def _max_pool2d_forward(self, out, argmax, x, plan):
        pixels = plan.n * plan.oh * plan.ow
        self._run1d("pool.cl", "max_pool2d_forward", pixels, out, argmax, x,
                    *window_args(plan), pixels)

    def _max_pool2d_backward(self, dx, dout, argmax, plan):
        pixels = plan.n * plan.h * plan.w
        self._run1d("pool.cl", "max_pool2d_backward", pixels, dx, dout, argmax,
                    *window_args(plan), pixels)

    def _avg_pool2d_forward(self, out, x, plan):
        pixels = plan.n * plan.oh * plan.ow
        self._run1d("pool.cl", "avg_pool2d_forward", pixels, out, x, *window_args(plan), pixels)

    def _avg_pool2d_backward(self, dx, dout, plan):
        pixels = plan.n * plan.h * plan.w
        self._run1d("pool.cl", "avg_pool2d_backward", pixels, dx, dout, *window_args(plan), pixels)

    def _global_avg_pool_forward(self, out, x):
        self.profile.global_avg_pool_forward(out, x)

    def _global_avg_pool_backward(self, dx, dout):
        self.profile.global_avg_pool_backward(dx, dout)

    def _pad2d_forward(self, out, x, pads):
        top, _, left, _ = pads
        n, h, w, c = x.shape
        image_rows = n * out.shape[1]
        self._run1d("elementwise.cl", "pad2d_forward", image_rows, out, x, h, w, c,
                    out.shape[1], out.shape[2], top, left, image_rows)

    def _pad2d_backward(self, dx, dout, pads):
        top, _, left, _ = pads
        n, h, w, c = dx.shape
        self._run1d("elementwise.cl", "pad2d_backward", n * h, dx, dout, h, w, c,
                    dout.shape[1], dout.shape[2], top, left, n * h)
