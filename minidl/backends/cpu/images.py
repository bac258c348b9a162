"""The images section on the cpu backend (csrc/image_transform.c, csrc/image_adjust.c,
csrc/image_color.c, csrc/upsample.c): a mixin of CpuBackend (its _lib). The contract
(minidl/backends/contract/images.py) checked every argument and passes the checked names, the
value range as two floats and the 64-bit seed; the pointers' checks here are the cpu tensor's
own. Only image_transform_* can fail: on an empty image, which the contract refuses first."""

import math

from ..contract.images import COLOR_KINDS, FILL_MODES, INTERPOLATIONS, TRANSFORM_KINDS
from ._ffi import checked, ffi, output, raise_for_status


def _transform_sizes(out_shape, x_shape, transforms):
    n, h, w, c = x_shape
    return n, h, w, c, out_shape[1], out_shape[2], transforms.shape[0]


class CpuImageOps:
    """The image ops of CpuBackend."""

    def _image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        op = "image_transform_forward"
        status = self._lib.minidl_image_transform_forward(
            output(op, "out", out), checked(op, "x", x), checked(op, "transforms", transforms),
            INTERPOLATIONS.index(interpolation), FILL_MODES.index(fill_mode), fill_value,
            *_transform_sizes(out.shape, x.shape, transforms))
        if status:
            raise_for_status(op, status, f"images {tuple(x.shape)} -> {tuple(out.shape)}")

    def _image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        op = "image_transform_backward"
        status = self._lib.minidl_image_transform_backward(
            output(op, "dx", dx), checked(op, "dout", dout), checked(op, "transforms", transforms),
            INTERPOLATIONS.index(interpolation), FILL_MODES.index(fill_mode),
            *_transform_sizes(dout.shape, dx.shape, transforms))
        if status:
            raise_for_status(op, status, f"images {tuple(dx.shape)} -> {tuple(dout.shape)}")

    def _image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        op = "image_random_transforms"
        self._lib.minidl_image_random_transforms(output(op, "transforms", transforms), ffi.new("float[4]", ranges),
                                                 TRANSFORM_KINDS.index(kind), seed, transforms.shape[0],
                                                 height, width)

    def _random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        op = "random_contrast_forward"
        n, h, w, c = x.shape
        self._lib.minidl_random_contrast_forward(output(op, "out", out), checked(op, "x", x), lower, upper,
                                                 *value_range, seed, n, h * w, c)

    def _random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        op = "random_brightness_forward"
        n = x.shape[0]
        self._lib.minidl_random_brightness_forward(output(op, "out", out), checked(op, "x", x), lower, upper,
                                                   *value_range, seed, n, x.size // max(n, 1))

    def _random_color_forward(self, out, x, kind, params, value_range, seed):
        op = "random_color_forward"
        n, h, w, c = x.shape
        self._lib.minidl_random_color_forward(output(op, "out", out), checked(op, "x", x),
                                              ffi.new("float[4]", params), COLOR_KINDS[kind], *value_range,
                                              seed, n, h * w, c)

    def _auto_contrast_forward(self, out, x, value_range):
        op = "auto_contrast_forward"
        n, h, w, c = x.shape
        self._lib.minidl_auto_contrast_forward(output(op, "out", out), checked(op, "x", x), *value_range,
                                               n, h * w, c)

    def _upsample2d_forward(self, out, x, sh, sw, bilinear):
        op = "upsample2d_forward"
        self._lib.minidl_upsample2d_forward(output(op, "out", out), checked(op, "x", x), sh, sw, bilinear,
                                            *x.shape)

    def _upsample2d_backward(self, dx, dout, sh, sw, bilinear):
        op = "upsample2d_backward"
        self._lib.minidl_upsample2d_backward(output(op, "dx", dx), checked(op, "dout", dout), sh, sw,
                                             bilinear, *dx.shape)

    def _channel_scale_shift(self, out, x, scale, shift):
        op = "channel_scale_shift"
        c = x.shape[-1]
        self._lib.minidl_channel_scale_shift(output(op, "out", out), checked(op, "x", x),
                                             checked(op, "scale", scale), checked(op, "shift", shift),
                                             math.prod(x.shape[:-1]), c)
