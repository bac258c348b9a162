"""The numpy reference of the mixing augmentation ops (image_mix_args.py; base.Backend,
"images"): batch_mix_forward, image_paste_forward, image_filter_blend_forward, computed in
float32 in the order of csrc/image_mix.c and kernels/image_mix.cl."""

import numpy as np

from .. import image_mix_args

f32 = np.float32


def _sources(table, column, count):
    """int source index of each row, clamped to [0, count) as the kernels clamp it."""
    return np.clip(table[:, column], 0, count - 1).astype(np.int64)


class NumpyImageMixOps:
    """Mixed into NumpyBackend."""

    def batch_mix_forward(self, out, x, mix):
        n, _ = image_mix_args.check_batch_mix("batch_mix_forward", out, x, mix)
        shape = (n,) + (1,) * (x.ndim - 1)
        a, b = mix[:, 0].reshape(shape), mix[:, 1].reshape(shape)
        out[...] = a * x + b * x[_sources(mix, 2, n)]

    def image_paste_forward(self, out, x, boxes, source, clip=(-np.inf, np.inf)):
        low, high = image_mix_args.check_paste("image_paste_forward", out, x, boxes, source, clip)
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

    def image_filter_blend_forward(self, out, x, kernel, weights, value_range):
        low, high = image_mix_args.check_filter_blend("image_filter_blend_forward", out, x, kernel,
                                                      weights, value_range)
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
