"""The histogram and perspective image ops of the cpu backend (csrc/image_equalize.c,
csrc/image_perspective.c)."""

from ._ffi import checked, output, raise_for_status


class EqualizeOps:
    """Mixed into CpuBackend: equalize_forward, clahe_forward, image_perspective_transforms.
    Needs self._lib."""

    def _equalize_forward(self, out, x, value_range, bins, *, sizes):
        op = "equalize_forward"
        low, high, bins = sizes
        n, h, w, c = x.shape
        status = self._lib.minidl_equalize_forward(output(op, "out", out), checked(op, "x", x),
                                                   low, high, bins, n * h * w, c)
        if status:
            raise_for_status(op, status, f"images {tuple(x.shape)}, bins={bins}")

    def _clahe_forward(self, out, x, value_range, clip_limit, tile_grid_size, *, sizes):
        op = "clahe_forward"
        low, high, clip, gh, gw = sizes
        status = self._lib.minidl_clahe_forward(output(op, "out", out), checked(op, "x", x), low,
                                                high, clip, gh, gw, *x.shape)
        if status:
            raise_for_status(op, status, f"images {tuple(x.shape)}, tile_grid_size={(gh, gw)}")

    def _image_perspective_transforms(self, transforms, probability, scale, height, width, seed, *, sizes):
        op = "image_perspective_transforms"
        lower, upper, scale = sizes
        self._lib.minidl_image_perspective_transforms(output(op, "transforms", transforms), lower,
                                                      upper, scale, int(seed) % 2 ** 64,
                                                      transforms.shape[0], int(height), int(width))
