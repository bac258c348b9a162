"""image_displace_forward / _backward on the opencl backend (kernels/image_displace.cl); a mixin
of OpenCLBackend, which provides _run1d. The contract checked the arguments
(contract/images.py) and passes the interpolation and fill-mode codes."""

import numpy as np

_CL = "image_displace.cl"


class OpenCLDisplaceOps:
    """Mixed into OpenCLBackend."""

    def _image_displace_forward(self, out, x, field, interpolation, fill_mode, fill_value, low, high):
        n, h, w, c = x.shape
        self._run1d(_CL, "image_displace_forward", n * h * w, out, x, field, np.int32(interpolation),
                    np.int32(fill_mode), np.float32(fill_value), np.float32(low), np.float32(high),
                    *(np.int32(v) for v in (n, h, w, c)))

    def _image_displace_backward(self, dx, dout, field, interpolation, fill_mode):
        n, h, w, c = dx.shape
        self._run1d(_CL, "image_displace_backward", n * c, dx, dout, field, np.int32(interpolation),
                    np.int32(fill_mode), *(np.int32(v) for v in (n, h, w, c)))


__all__ = ["OpenCLDisplaceOps"]
