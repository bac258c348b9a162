"""The images section on the opencl backend (kernels/images.cl, kernels/image_color.cl,
kernels/upsample.cl): a mixin of OpenCLBackend (its _run1d). The contract
(minidl/backends/contract/images.py) checked every argument and passes the checked names, the
value range as two floats and the 64-bit seed. Nothing is computed on the host: transforms stay
on the device."""

import numpy as np

from ..contract.images import COLOR_KINDS, FILL_MODES, INTERPOLATIONS, TRANSFORM_KINDS, split_seed

_CL = "images.cl"
BRIGHTNESS_RUN = 256   # elements per work-item of random_brightness_forward (images.cl)
COLOR_RUN = 64         # pixels per work-item of random_color_forward (image_color.cl)


def _seed_halves(seed):
    lo, hi = split_seed(seed)
    return np.uint32(lo), np.uint32(hi)


class ImageOps:
    """The image ops of OpenCLBackend."""

    def _transform(self, kernel, out_shape, x_shape, written, read, transforms, interpolation,
                   fill_mode, *scalars):
        n, h, w, c = x_shape
        # the forward runs one work-item per output pixel, the backward one per (image, channel)
        items = n * out_shape[1] * out_shape[2] if kernel.endswith("forward") else n * c
        self._run1d(_CL, kernel, items, written, read, transforms, INTERPOLATIONS.index(interpolation),
                    FILL_MODES.index(fill_mode), *scalars, n, h, w, c, out_shape[1], out_shape[2],
                    transforms.shape[0])

    def _image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        self._transform("image_transform_forward", out.shape, x.shape, out, x, transforms,
                        interpolation, fill_mode, np.float32(fill_value))

    def _image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        self._transform("image_transform_backward", dout.shape, dx.shape, dx, dout, transforms,
                        interpolation, fill_mode)

    def _image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        n = transforms.shape[0]
        self._run1d(_CL, "image_random_transforms", n, transforms, *(np.float32(r) for r in ranges),
                    TRANSFORM_KINDS.index(kind), *_seed_halves(seed), n, height, width)

    def _adjust(self, kernel, out, x, lower, upper, value_range, seed):
        n, h, w, c = x.shape
        low, high = value_range
        scalars = (np.float32(lower), np.float32(upper), np.float32(low), np.float32(high),
                   *_seed_halves(seed))
        if kernel == "random_contrast_forward":
            self._run1d(_CL, kernel, n * c, out, x, *scalars, n, h * w, c)
        else:
            runs = -(-(h * w * c) // BRIGHTNESS_RUN)
            self._run1d(_CL, kernel, n * runs, out, x, *scalars, n, h * w * c)

    def _random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        self._adjust("random_contrast_forward", out, x, lower, upper, value_range, seed)

    def _random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        self._adjust("random_brightness_forward", out, x, lower, upper, value_range, seed)

    def _random_color_forward(self, out, x, kind, params, value_range, seed):
        low, high = value_range
        n, h, w, c = x.shape
        runs = -(-(h * w) // COLOR_RUN)
        self._run1d("image_color.cl", "random_color_forward", n * runs, out, x,
                    *(np.float32(p) for p in params), COLOR_KINDS[kind], np.float32(low), np.float32(high),
                    *_seed_halves(seed), n, h * w, c, defines={"COLOR_KIND": COLOR_KINDS[kind]})

    def _auto_contrast_forward(self, out, x, value_range):
        low, high = value_range
        n, h, w, c = x.shape
        self._run1d("image_color.cl", "auto_contrast_forward", n * c, out, x, np.float32(low),
                    np.float32(high), n, h * w, c)

    def _upsample2d_forward(self, out, x, sh, sw, bilinear):
        pixels = out.size // max(x.shape[3], 1)   # one work-item per output pixel
        self._run1d("upsample.cl", "upsample2d_forward", pixels, out, x, sh, sw, bilinear, *x.shape,
                    pixels)

    def _upsample2d_backward(self, dx, dout, sh, sw, bilinear):
        pixels = dx.size // max(dx.shape[3], 1)   # one work-item per input pixel (a gather)
        self._run1d("upsample.cl", "upsample2d_backward", pixels, dx, dout, sh, sw, bilinear, *dx.shape,
                    pixels)

    def _channel_scale_shift(self, out, x, scale, shift):
        self._run1d(_CL, "channel_scale_shift", x.size, out, x, scale, shift, x.size, x.shape[-1])
