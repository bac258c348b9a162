"""The histogram and perspective image ops of the opencl backend (kernels/image_equalize.cl);
a mixin of OpenCLBackend, which provides _run1d and _scratch_tensor. Everything stays on the
device: the histograms and CDF tables live in scratch tensors kept between calls."""

import math

import numpy as np

from ..contract.images import clahe_tiles
from .images import _seed_halves

_CL = "image_equalize.cl"


class EqualizeOps:
    """equalize_forward, clahe_forward, image_perspective_transforms."""

    def _equalize_forward(self, out, x, value_range, bins, *, sizes):
        low, high, bins = sizes
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
        chunk = self.profile.equalize_chunk
        if chunk and bins <= 256:   # the private tables of equalize_histogram_chunks (LEVELS)
            self._run1d(_CL, "equalize_histogram_chunks", -(-pixels // chunk), hist, x, *to255,
                        bins, np.int64(pixels), c, chunk)
        else:
            self._run1d(_CL, "equalize_histogram", pixels, hist, x, *to255, bins,
                        np.int64(pixels), c)
        self._run1d(_CL, "equalize_tables", c, lut, hist, bins, c)
        self._run1d(_CL, "equalize_apply", pixels * c, out, x, lut, *to255, *from255, bins,
                    np.int64(pixels * c), c)

    def _clahe_forward(self, out, x, value_range, clip_limit, tile_grid_size, *, sizes):
        low, high, clip, gh, gw = sizes
        n, h, w, c = x.shape
        tile_h, tile_w = clahe_tiles(h, w, gh, gw)
        identity = int(low == 0.0 and high == 255.0)
        # Keras's torch backend counts in int64: its clip limit is truncated to an integer
        limit = np.float32(math.trunc(clip * tile_h * tile_w / 256.0)) if clip > 0 else np.float32(0)
        tiles = n * gh * gw * c
        area = tile_h * tile_w
        if area <= self.profile.clahe_tile_area and n * h * w * c < 2 ** 31:   # int indices
            corners = self._scratch_tensor("clahe_corners", (n, h, w, c, 4))
            self._run1d(_CL, "clahe_tile_corners", tiles, corners, x, np.float32(low),
                        np.float32(high), identity, np.float32(clip), limit, gh, gw, tile_h,
                        tile_w, n, h, w, c)
            self._run1d(_CL, "clahe_apply_corners", n * h * w, out, corners, np.float32(low),
                        np.float32(high), identity, gh, gw, tile_h, tile_w, n, h, w, c)
            return
        cdfs = self._scratch_tensor("clahe_cdfs", (n, gh, gw, c, 256))
        counts = self._scratch_tensor("clahe_counts", (tiles, 256))
        self._run1d(_CL, "equalize_clear", tiles * 256, counts, tiles * 256)
        padded = n * gh * tile_h * gw * tile_w * c
        self._run1d(_CL, "clahe_histogram", padded, counts, x, np.float32(low), np.float32(high),
                    identity, gh, gw, tile_h, tile_w, n, h, w, c, np.int64(padded))
        self._run1d(_CL, "clahe_tiles", tiles, cdfs, counts, np.float32(clip), limit, gh, gw,
                    tile_h, tile_w, n, c)
        self._run1d(_CL, "clahe_apply", n * h * w, out, x, cdfs, np.float32(low), np.float32(high),
                    identity, gh, gw, tile_h, tile_w, n, h, w, c)

    def _image_perspective_transforms(self, transforms, probability, scale, height, width, seed, *, sizes):
        lower, upper, scale = sizes
        n = transforms.shape[0]
        self._run1d(_CL, "image_perspective_transforms", n, transforms, np.float32(lower),
                    np.float32(upper), np.float32(scale), *_seed_halves(seed), n, int(height),
                    int(width))
