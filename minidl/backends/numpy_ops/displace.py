"""image_displace_forward / _backward on the numpy backend, the reference of csrc/image_displace.c
and kernels/image_displace.cl: Keras 3's map_coordinates along a displacement field, in the
backend's dtype, the taps added in the kernels' order. The contract checked the arguments and
passes the interpolation and fill-mode codes (contract/images.py)."""

import numpy as np

TAP_CAP = 1e9   # coordinates are capped here before becoming integer tap indices, as in C


def fix_index(i, size, fill_mode):
    """Tap indices mapped inside an axis of `size` by the fill mode code; -1: the constant."""
    inside = (i >= 0) & (i < size)
    if fill_mode == 0:
        return np.where(inside, i, -1)
    if fill_mode == 1:
        return np.clip(i, 0, size - 1)
    if fill_mode == 2:
        return np.mod(i, size)
    if fill_mode == 3:                       # d c b a | a b c d | d c b a
        m = np.mod(i, 2 * size)
        return np.where(m >= size, 2 * size - 1 - m, m)
    if size == 1:                            # mirror: c d c b | a b c d | c b a b
        return np.zeros_like(i)
    return np.abs(np.mod(i + size - 1, 2 * (size - 1)) - (size - 1))


def taps(field, interpolation, fill_mode):
    """(weights, flat pixel offsets (-1: the constant), NaN mask) of every output pixel: lists
    of (N, H, W) arrays, one per tap in the kernels' order."""
    n, h, w, _ = field.shape
    py = np.arange(h, dtype=field.dtype)[None, :, None] + field[..., 0]
    px = np.arange(w, dtype=field.dtype)[None, None, :] + field[..., 1]
    nan = np.isnan(py) | np.isnan(px)
    py, px = np.where(nan, 0, py), np.where(nan, 0, px)

    def index(p):
        return np.clip(p, -TAP_CAP, TAP_CAP).astype(np.int64)

    if interpolation == 0:
        iy, ix = fix_index(index(np.rint(py)), h, fill_mode), fix_index(index(np.rint(px)), w, fill_mode)
        return [np.ones_like(py)], [np.where((iy < 0) | (ix < 0), -1, iy * w + ix)], nan
    y0, x0 = np.floor(py), np.floor(px)
    fy, fx = py - y0, px - x0
    ys = [fix_index(index(y0), h, fill_mode), fix_index(index(y0) + 1, h, fill_mode)]
    xs = [fix_index(index(x0), w, fill_mode), fix_index(index(x0) + 1, w, fill_mode)]
    wy, wx = [1 - fy, fy], [1 - fx, fx]
    weights, offsets = [], []
    for a in range(2):
        for b in range(2):
            weights.append(wy[a] * wx[b])
            offsets.append(np.where((ys[a] < 0) | (xs[b] < 0), -1, ys[a] * w + xs[b]))
    return weights, offsets, nan


class NumpyDisplaceOps:
    """Mixed into NumpyBackend."""

    def _image_displace_forward(self, out, x, field, interpolation, fill_mode, fill_value, low, high):
        n, h, w, c = x.shape
        flat = x.reshape(n, h * w, c)
        weights, offsets, nan = taps(field, interpolation, fill_mode)
        total = np.zeros(x.shape, x.dtype)
        fill = x.dtype.type(fill_value)
        for weight, offset in zip(weights, offsets):
            values = np.take_along_axis(flat, np.maximum(offset, 0).reshape(n, h * w, 1), axis=1)
            values = np.where(offset.reshape(n, h * w, 1) < 0, fill, values).reshape(x.shape)
            weight = weight[..., None]
            total += np.where(weight != 0, weight * values, 0)   # taps of weight 0 are skipped
        total = np.where(nan[..., None], np.nan, total)
        out[...] = np.clip(total, low, high)

    def _image_displace_backward(self, dx, dout, field, interpolation, fill_mode):
        n, h, w, c = dx.shape
        flat = np.zeros((n, h * w, c), dx.dtype)
        weights, offsets, nan = taps(field, interpolation, fill_mode)
        g = dout.reshape(n, h * w, c)
        images = np.repeat(np.arange(n), h * w)
        for weight, offset in zip(weights, offsets):
            offset = offset.reshape(n, h * w)
            keep = ((offset >= 0) & (weight.reshape(n, h * w) != 0) & ~nan.reshape(n, h * w)).reshape(-1)
            contribution = (weight.reshape(n, h * w, 1) * g).reshape(-1, c)
            np.add.at(flat, (images[keep], offset.reshape(-1)[keep]), contribution[keep])
        dx[...] = flat.reshape(dx.shape)


__all__ = ["NumpyDisplaceOps"]
