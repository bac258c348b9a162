"""The image ops of the cpu backend (csrc/image_transform.c, csrc/image_adjust.c, csrc/upsample.c)."""

import math

from .. import image_args
from ._ffi import checked, ffi, output, raise_for_status


class ImageOps:
    """Mixed into CpuBackend: image_transform_*, random transforms, contrast, brightness,
    upsample2d_*, channel_scale_shift. Needs self._lib. Only image_transform_* can fail: on an
    empty image, which image_args refuses first."""

    @staticmethod
    def _transform_args(op, out_shape, x_shape, transforms, interpolation, fill_mode):
        """(transforms pointer, codes, sizes) of an image_transform_* call."""
        codes = image_args.check_transform(op, out_shape, x_shape, transforms.shape,
                                           interpolation, fill_mode)
        n, h, w, c = x_shape
        sizes = (n, h, w, c, out_shape[1], out_shape[2], transforms.shape[0])
        return checked(op, "transforms", transforms), codes, sizes

    def image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        op = "image_transform_forward"
        pt, codes, sizes = self._transform_args(op, out.shape, x.shape, transforms, interpolation,
                                                fill_mode)
        status = self._lib.minidl_image_transform_forward(
            output(op, "out", out), checked(op, "x", x), pt, *codes, float(fill_value), *sizes)
        if status:
            raise_for_status(op, status, f"images {tuple(x.shape)} -> {tuple(out.shape)}")

    def image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        op = "image_transform_backward"
        pt, codes, sizes = self._transform_args(op, dout.shape, dx.shape, transforms,
                                                interpolation, fill_mode)
        status = self._lib.minidl_image_transform_backward(
            output(op, "dx", dx), checked(op, "dout", dout), pt, *codes, *sizes)
        if status:
            raise_for_status(op, status, f"images {tuple(dx.shape)} -> {tuple(dout.shape)}")

    def image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        op = "image_random_transforms"
        code = image_args.check_random_transforms(op, transforms, kind, ranges, height, width)
        cranges = ffi.new("float[4]", [float(r) for r in ranges])
        self._lib.minidl_image_random_transforms(output(op, "transforms", transforms), cranges, code,
                                                 int(seed) % 2 ** 64, transforms.shape[0],
                                                 int(height), int(width))

    def random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        op = "random_contrast_forward"
        image_args.check_images(op, out, x)
        low, high = image_args.check_value_range(op, value_range)
        n, h, w, c = x.shape
        self._lib.minidl_random_contrast_forward(output(op, "out", out), checked(op, "x", x),
                                                 float(lower), float(upper), low, high,
                                                 int(seed) % 2 ** 64, n, h * w, c)

    def random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        op = "random_brightness_forward"
        image_args.check_images(op, out, x)
        low, high = image_args.check_value_range(op, value_range)
        n = x.shape[0]
        self._lib.minidl_random_brightness_forward(output(op, "out", out), checked(op, "x", x),
                                                   float(lower), float(upper), low, high,
                                                   int(seed) % 2 ** 64, n, x.size // max(n, 1))

    def upsample2d_forward(self, out, x, size, interpolation):
        op = "upsample2d_forward"
        sh, sw, bilinear = image_args.check_upsample(op, x.shape, out.shape, size, interpolation)
        self._lib.minidl_upsample2d_forward(output(op, "out", out), checked(op, "x", x), sh, sw, bilinear,
                                            *x.shape)

    def upsample2d_backward(self, dx, dout, size, interpolation):
        op = "upsample2d_backward"
        sh, sw, bilinear = image_args.check_upsample(op, dx.shape, dout.shape, size, interpolation)
        self._lib.minidl_upsample2d_backward(output(op, "dx", dx), checked(op, "dout", dout), sh, sw,
                                             bilinear, *dx.shape)

    def channel_scale_shift(self, out, x, scale, shift):
        op = "channel_scale_shift"
        c = x.shape[-1] if x.ndim else 1
        self._lib.minidl_channel_scale_shift(
            output(op, "out", out, x.shape), checked(op, "x", x), checked(op, "scale", scale, (c,)),
            checked(op, "shift", shift, (c,)), math.prod(x.shape[:-1]), c)
