"""Histogram ops of the numpy reference backend: Keras 3's Equalization (equalize_forward) and
ContrastLimitedAdaptiveHistogramEqualization (clahe_forward), in float32 in the order of
Keras 3.15's torch code, so that the C and OpenCL kernels can be checked against it."""

import numpy as np

from ..contract.images import clahe_tiles

f32 = np.float32


def _to_255(x, low, high):
    """Keras's Equalization._scale_values to 0..255 (scale and offset rounded to float32)."""
    scale = 255.0 / (high - low)
    return x * f32(scale) + f32(-low * scale)


def _from_255(v, low, high):
    scale = (high - low) / 255.0
    return v * f32(scale) + f32(low - 0.0 * scale)


def _index(v, scale_first, bins):
    """Bin of each value in 0..255: Keras's int32 cast (truncation) clipped to [0, bins - 1];
    a NaN falls in bin 0. scale_first: ((v * (bins - 1)) / 255), else ((v / 255) * (bins - 1)),
    the two orders Keras uses for the histogram and the look-up."""
    if scale_first:
        scaled = (v * f32(bins - 1)) / f32(255)
    else:
        scaled = (v / f32(255)) * f32(bins - 1)
    scaled = np.nan_to_num(np.clip(scaled, 0, bins - 1), nan=0.0)
    return scaled.astype(np.int64)


def equalize_forward(out, x, value_range, bins):
    """Keras's Equalization: one histogram per channel over the whole batch."""
    low, high = value_range
    v = _to_255(x.astype(np.float32), low, high)
    result = np.empty_like(v)
    for k in range(x.shape[3]):
        channel = v[..., k]
        hist = np.bincount(_index(channel, True, bins).ravel(), minlength=bins)
        if np.count_nonzero(hist) <= 1:
            result[..., k] = channel
            continue
        cdf = np.cumsum(hist)
        cdf_min = cdf[np.nonzero(cdf)[0][0]]
        denominator = cdf[-1] - cdf_min or 1
        # Keras (torch) divides the int64 counts in float32, then rounds half to even
        lut = np.clip(np.round(f32((cdf - cdf_min) * 255) / f32(denominator)), 0, 255).astype(f32)
        result[..., k] = lut[_index(channel, False, bins)]
    out[...] = _from_255(result, low, high)


def _tile_cdfs(pixels, clip_limit, tile_h, tile_w, grid_h, grid_w):
    """(N, grid_h, grid_w, C, 256) normalised, clipped CDFs of the padded images' tiles."""
    n, _, _, c = pixels.shape
    tiles = pixels.reshape(n, grid_h, tile_h, grid_w, tile_w, c).transpose(0, 1, 3, 5, 2, 4)
    tiles = tiles.reshape(n, grid_h, grid_w, c, tile_h * tile_w)
    hists = np.zeros((n, grid_h, grid_w, c, 256), np.float32)
    for p in range(tile_h * tile_w):
        np.add.at(hists, (*np.indices(tiles.shape[:4]), tiles[..., p]), f32(1))
    area = tile_h * tile_w
    if clip_limit > 0:
        # Keras's torch one_hot counts in int64, so the limit is truncated to an integer
        limit = f32(np.trunc(clip_limit * area / 256.0))
        clipped = np.minimum(hists, limit)
        excess = np.sum(hists - clipped, axis=-1, keepdims=True, dtype=np.float32)
        hists = clipped + excess / f32(256)
    cdf = np.cumsum(hists, axis=-1, dtype=np.float32)
    cdf_min = cdf.min(axis=-1, keepdims=True)
    denominator = f32(area) - cdf_min
    denominator = np.where(denominator == 0, f32(1), denominator)
    return np.clip(((cdf - cdf_min) * f32(255)) / denominator, 0, 255)


def _grid_weights(size, tile, grid):
    """(tile index below, tile index above, weight of the one above) of each row (column),
    Keras's grid: (i - tile / 2) / tile + 1 over the CDFs padded by one tile each side."""
    g = (np.arange(size, dtype=np.float32) - f32(tile / 2.0)) / f32(tile) + f32(1)
    g0 = np.floor(g)
    weight = g - g0
    below = np.clip(g0, 0, grid + 1).astype(np.int64)
    above = np.clip(g0 + 1, 0, grid + 1).astype(np.int64)
    return np.clip(below - 1, 0, grid - 1), np.clip(above - 1, 0, grid - 1), weight


def clahe_forward(out, x, value_range, clip_limit, tile_grid_size):
    """Keras's ContrastLimitedAdaptiveHistogramEqualization of each image and channel."""
    low, high = value_range
    grid_h, grid_w = tile_grid_size
    n, h, w, c = x.shape
    tile_h, tile_w = clahe_tiles(h, w, grid_h, grid_w)
    v = x.astype(np.float32)
    if (low, high) != (0.0, 255.0):
        v = ((v - f32(low)) / (f32(high) - f32(low))) * f32(255) + f32(0)
    # Keras pads to whole tiles with mode "symmetric", which its torch backend runs as
    # "replicate" (a b c | c c): the edge pixel repeated, as here
    rows = np.minimum(np.arange(tile_h * grid_h), h - 1)
    cols = np.minimum(np.arange(tile_w * grid_w), w - 1)
    padded = v[:, rows][:, :, cols]
    pixels = np.clip(np.nan_to_num(np.clip(padded, -1, 256), nan=0.0).astype(np.int64), 0, 255)
    cdfs = _tile_cdfs(pixels, clip_limit, tile_h, tile_w, grid_h, grid_w)
    y0, y1, wy = (a[:h, None, None] for a in _grid_weights(tile_h * grid_h, tile_h, grid_h))
    x0, x1, wx = (a[None, :w, None] for a in _grid_weights(tile_w * grid_w, tile_w, grid_w))
    p = pixels[:, :h, :w]
    b = np.arange(n)[:, None, None, None]
    k = np.arange(c)[None, None, None, :]
    nw, ne = cdfs[b, y0, x0, k, p], cdfs[b, y0, x1, k, p]
    sw, se = cdfs[b, y1, x0, k, p], cdfs[b, y1, x1, k, p]
    top = nw * (f32(1) - wx) + ne * wx
    bottom = sw * (f32(1) - wx) + se * wx
    result = top * (f32(1) - wy) + bottom * wy
    if (low, high) != (0.0, 255.0):
        result = ((result - f32(0)) / f32(255)) * (f32(high) - f32(low)) + f32(low)
    out[...] = result


class NumpyEqualizeOps:
    """Mixed into NumpyBackend: equalize_forward, clahe_forward."""

    def _equalize_forward(self, out, x, value_range, bins, *, sizes):
        low, high, bins = sizes
        equalize_forward(out, x, (low, high), bins)

    def _clahe_forward(self, out, x, value_range, clip_limit, tile_grid_size, *, sizes):
        low, high, clip, gh, gw = sizes
        clahe_forward(out, x, (low, high), clip, (gh, gw))
