"""The numpy reference of the mixing augmentation ops (contract/images.py; base.Backend,
"images"): batch_mix_forward, image_paste_forward, image_filter_blend_forward, computed in
float32 in the order of csrc/image_mix.c and kernels/image_mix.cl."""

import numpy as np


f32 = np.float32


def _sources(table, column, count):
    """int source index of each row, clamped to [0, count) as the kernels clamp it."""
    return np.clip(table[:, column], 0, count - 1).astype(np.int64)


class NumpyImageMixOps:
    """Mixed into NumpyBackend."""

    def _batch_mix_forward(self, out, x, mix, *, sizes):
        n, _ = sizes
        shape = (n,) + (1,) * (x.ndim - 1)
        a, b = mix[:, 0].reshape(shape), mix[:, 1].reshape(shape)
        out[...] = a * x + b * x[_sources(mix, 2, n)]

    def _image_paste_forward(self, out, x, boxes, source, clip, *, sizes):
        low, high = sizes
        n, h, w, _ = x.shape
        m, sh, sw, _ = source.shape
        cols, rows = np.arange(w, dtype=f32)[None, None, :], np.arange(h, dtype=f32)[None, :, None]
        b = boxes[:, :, None, None]
        inside = (cols >= b[:, 0]) & (cols < b[:, 1]) & (rows >= b[:, 2]) & (rows < b[:, 3])
        offsets = np.clip(np.nan_to_num(np.floor(boxes[:, 5:7])), -2 ** 30, 2 ** 30).astype(np.int64)   # (dx, dy); NaN: 0
        src_rows = np.clip(np.arange(h)[None, :, None] + offsets[:, 1, None, None], 0, sh - 1)
        src_cols = np.clip(np.arange(w)[None, None, :] + offsets[:, 0, None, None], 0, sw - 1)
        k = _sources(boxes, 4, m)[:, None, None]
        pasted = np.clip(source[k, src_rows, src_cols], f32(low), f32(high))
        out[...] = np.where(inside[..., None], pasted, x)

    def _image_filter_blend_forward(self, out, x, kernel, weights, value_range, *, sizes):
        low, high = sizes
        n, h, w, _ = x.shape
        kh, kw = kernel.shape
        padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
        filtered = np.zeros(x.shape, x.dtype)
        for i in range(kh):   # in the kernels' order: rows, then columns of the window
            for j in range(kw):
                filtered += kernel[i, j] * padded[:, i:i + h, j:j + w, :]
        weight = weights.reshape(n, 1, 1, 1)
        blended = np.where(weight == 0, x, x + weight * (filtered - x))   # weight 0: x, unfiltered
        out[...] = np.clip(blended, f32(low), f32(high))


__all__ = ["NumpyImageMixOps"]
