"""The mixing augmentation ops of the cpu backend (csrc/image_mix.c; image_mix_args.py)."""

import math

from .. import image_mix_args
from ._ffi import checked, output


class CpuImageMixOps:
    """Mixed into CpuBackend: batch_mix_forward, image_paste_forward,
    image_filter_blend_forward. Needs self._lib."""

    def batch_mix_forward(self, out, x, mix):
        op = "batch_mix_forward"
        n, size = image_mix_args.check_batch_mix(op, out, x, mix)
        self._lib.minidl_batch_mix_forward(output(op, "out", out), checked(op, "x", x),
                                           checked(op, "mix", mix), n, size)

    def image_paste_forward(self, out, x, boxes, source, clip=(-math.inf, math.inf)):
        op = "image_paste_forward"
        low, high = image_mix_args.check_paste(op, out, x, boxes, source, clip)
        self._lib.minidl_image_paste_forward(output(op, "out", out), checked(op, "x", x),
                                             checked(op, "boxes", boxes),
                                             checked(op, "source", source), low, high,
                                             *x.shape, *source.shape[:3])

    def image_filter_blend_forward(self, out, x, kernel, weights, value_range):
        op = "image_filter_blend_forward"
        low, high = image_mix_args.check_filter_blend(op, out, x, kernel, weights, value_range)
        self._lib.minidl_image_filter_blend_forward(output(op, "out", out), checked(op, "x", x),
                                                    checked(op, "kernel", kernel),
                                                    checked(op, "weights", weights), low, high,
                                                    *x.shape, *kernel.shape)


__all__ = ["CpuImageMixOps"]
