"""The histogram and perspective image ops of the opencl backend (kernels/image_equalize.cl);
a mixin of OpenCLBackend, which provides _run1d and _scratch_tensor. Everything stays on the
device: the histograms and CDF tables live in scratch tensors kept between calls."""

import math

import numpy as np

from .. import equalize_args
from .images import _seed_halves

_CL = "image_equalize.cl"


class EqualizeOps:
    """equalize_forward, clahe_forward, image_perspective_transforms."""

    def equalize_forward(self, out, x, value_range, bins):
        op = "opencl equalize_forward"
        low, high, bins = equalize_args.check_equalize(op, out, x, value_range, bins)
        c = x.shape[3]
        pixels = math.prod(x.shape[:3])
        # Keras's _scale_values to 0..255 and back, scale and offset rounded to float32
        scale = 255.0 / (high - low)
        back = (high - low) / 255.0
        to255 = (np.float32(scale), np.float32(-low * scale))
        from255 = (np.float32(back), np.float32(low - 0.0 * back))
        hist = self._scratch_tensor("equalize_hist", (c, bins))
        lut = self._scratch_tensor("equalize_lut", (c, bins + 1))
        self._run1d(_CL, "equalize_clear", c * bins, hist, c * bins)
        self._run1d(_CL, "equalize_histogram", pixels, hist, x, *to255, bins, np.int64(pixels), c)
        self._run1d(_CL, "equalize_tables", c, lut, hist, bins, c)
        self._run1d(_CL, "equalize_apply", pixels * c, out, x, lut, *to255, *from255, bins,
                    np.int64(pixels * c), c)

    def clahe_forward(self, out, x, value_range, clip_limit, tile_grid_size):
        op = "opencl clahe_forward"
        low, high, clip, gh, gw = equalize_args.check_clahe(op, out, x, value_range, clip_limit,
                                                            tile_grid_size)
        n, h, w, c = x.shape
        tile_h, tile_w = equalize_args.clahe_tiles(h, w, gh, gw)
        identity = int(low == 0.0 and high == 255.0)
        # Keras's torch backend counts in int64: its clip limit is truncated to an integer
        limit = np.float32(math.trunc(clip * tile_h * tile_w / 256.0)) if clip > 0 else np.float32(0)
        cdfs = self._scratch_tensor("clahe_cdfs", (n, gh, gw, c, 256))
        self._run1d(_CL, "clahe_tiles", n * gh * gw * c, cdfs, x, np.float32(low), np.float32(high),
                    identity, np.float32(clip), limit, gh, gw, tile_h, tile_w, n, h, w, c)
        self._run1d(_CL, "clahe_apply", n * h * w, out, x, cdfs, np.float32(low), np.float32(high),
                    identity, gh, gw, tile_h, tile_w, n, h, w, c)

    def image_perspective_transforms(self, transforms, probability, scale, height, width, seed):
        op = "opencl image_perspective_transforms"
        lower, upper, scale = equalize_args.check_perspective(op, transforms, probability, scale,
                                                              height, width)
        n = transforms.shape[0]
        self._run1d(_CL, "image_perspective_transforms", n, transforms, np.float32(lower),
                    np.float32(upper), np.float32(scale), *_seed_halves(seed), n, int(height),
                    int(width))
