"""The image ops of the opencl backend (kernels/images.cl, kernels/upsample.cl); a mixin of
OpenCLBackend, which provides _run1d and _check. Nothing is computed on the host: transforms stay on the device."""

import numpy as np

from .. import color_args, image_args

_CL = "images.cl"
BRIGHTNESS_RUN = 256   # elements per work-item of random_brightness_forward (images.cl)
COLOR_RUN = 64         # pixels per work-item of random_color_forward (image_color.cl)


def _seed_halves(seed):
    lo, hi = image_args.split_seed(seed)
    return np.uint32(lo), np.uint32(hi)


class ImageOps:
    """image_transform_*, random transforms, contrast, brightness, upsample2d_*, channel_scale_shift."""

    def _transform(self, kernel, out_shape, x_shape, written, read, transforms, interpolation,
                   fill_mode, *scalars):
        codes = image_args.check_transform(f"opencl {kernel}", out_shape, x_shape, transforms.shape,
                                           interpolation, fill_mode)
        n, h, w, c = x_shape
        # the forward runs one work-item per output pixel, the backward one per (image, channel)
        items = n * out_shape[1] * out_shape[2] if kernel.endswith("forward") else n * c
        self._run1d(_CL, kernel, items, written, read, transforms, *codes, *scalars, n, h, w, c,
                    out_shape[1], out_shape[2], transforms.shape[0])

    def image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        self._transform("image_transform_forward", out.shape, x.shape, out, x, transforms,
                        interpolation, fill_mode, np.float32(fill_value))

    def image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        self._transform("image_transform_backward", dout.shape, dx.shape, dx, dout, transforms,
                        interpolation, fill_mode)

    def image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        op = "opencl image_random_transforms"
        code = image_args.check_random_transforms(op, transforms, kind, ranges, height, width)
        n = transforms.shape[0]
        self._run1d(_CL, "image_random_transforms", n, transforms,
                    *(np.float32(r) for r in ranges), code, *_seed_halves(seed), n, int(height),
                    int(width))

    def _adjust(self, kernel, out, x, lower, upper, value_range, seed):
        op = f"opencl {kernel}"
        image_args.check_images(op, out, x)
        low, high = image_args.check_value_range(op, value_range)
        n, h, w, c = x.shape
        scalars = (np.float32(lower), np.float32(upper), np.float32(low), np.float32(high),
                   *_seed_halves(seed))
        if kernel == "random_contrast_forward":
            self._run1d(_CL, kernel, n * c, out, x, *scalars, n, h * w, c)
        else:
            runs = -(-(h * w * c) // BRIGHTNESS_RUN)
            self._run1d(_CL, kernel, n * runs, out, x, *scalars, n, h * w * c)

    def random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        self._adjust("random_contrast_forward", out, x, lower, upper, value_range, seed)

    def random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        self._adjust("random_brightness_forward", out, x, lower, upper, value_range, seed)

    def random_color_forward(self, out, x, kind, params, value_range, seed):
        op = "opencl random_color_forward"
        code, params = color_args.check_random_color(op, out, x, kind, params)
        low, high = color_args.check_value_range(op, value_range)
        n, h, w, c = x.shape
        runs = -(-(h * w) // COLOR_RUN)
        self._run1d("image_color.cl", "random_color_forward", n * runs, out, x,
                    *(np.float32(p) for p in params), code, np.float32(low), np.float32(high),
                    *_seed_halves(seed), n, h * w, c)

    def auto_contrast_forward(self, out, x, value_range):
        op = "opencl auto_contrast_forward"
        image_args.check_images(op, out, x)
        low, high = image_args.check_value_range(op, value_range)
        n, h, w, c = x.shape
        self._run1d("image_color.cl", "auto_contrast_forward", n * c, out, x, np.float32(low),
                    np.float32(high), n, h * w, c)

    def upsample2d_forward(self, out, x, size, interpolation):
        sh, sw, bilinear = image_args.check_upsample("opencl upsample2d_forward", x.shape, out.shape,
                                                     size, interpolation)
        pixels = out.size // max(x.shape[3], 1)   # one work-item per output pixel
        self._run1d("upsample.cl", "upsample2d_forward", pixels, out, x, sh, sw, bilinear, *x.shape,
                    pixels)

    def upsample2d_backward(self, dx, dout, size, interpolation):
        sh, sw, bilinear = image_args.check_upsample("opencl upsample2d_backward", dx.shape, dout.shape,
                                                     size, interpolation)
        pixels = dx.size // max(dx.shape[3], 1)   # one work-item per input pixel (a gather)
        self._run1d("upsample.cl", "upsample2d_backward", pixels, dx, dout, sh, sw, bilinear, *dx.shape,
                    pixels)

    def channel_scale_shift(self, out, x, scale, shift):
        op = "channel_scale_shift"
        c = x.shape[-1]
        self._check(op, "scale", scale, (c,))
        self._check(op, "shift", shift, (c,))
        self._check(op, "out", out, x.shape)
        self._run1d(_CL, "channel_scale_shift", x.size, out, x, scale, shift, x.size, c)
