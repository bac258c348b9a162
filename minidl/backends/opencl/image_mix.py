"""The mixing augmentation ops of the opencl backend (kernels/image_mix.cl; contract/images.py);
a mixin of OpenCLBackend, which provides _run1d."""


import numpy as np


_CL = "image_mix.cl"
MIX_RUN = 256   # elements per work-item of batch_mix_forward (image_mix.cl)


class OpenCLImageMixOps:
    """batch_mix_forward, image_paste_forward, image_filter_blend_forward."""

    def _batch_mix_forward(self, out, x, mix, *, sizes):
        n, size = sizes
        runs = -(-size // MIX_RUN)
        self._run1d(_CL, "batch_mix_forward", n * runs, out, x, mix, np.int32(n), np.int64(size))

    def _image_paste_forward(self, out, x, boxes, source, clip, *, sizes):
        low, high = sizes
        n, h, w, c = x.shape
        self._run1d(_CL, "image_paste_forward", n * h, out, x, boxes, source, np.float32(low),
                    np.float32(high), *(np.int32(v) for v in (n, h, w, c, *source.shape[:3])))

    def _image_filter_blend_forward(self, out, x, kernel, weights, value_range, *, sizes):
        low, high = sizes
        n, h, w, c = x.shape
        self._run1d(_CL, "image_filter_blend_forward", n * h, out, x, kernel, weights,
                    np.float32(low), np.float32(high), *(np.int32(v) for v in (n, h, w, c)),
                    *(np.int32(v) for v in kernel.shape))


__all__ = ["OpenCLImageMixOps"]
