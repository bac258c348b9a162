"""The mixing augmentation ops of the cpu backend (csrc/image_mix.c; contract/images.py)."""


from ._ffi import checked, output


class CpuImageMixOps:
    """Mixed into CpuBackend: batch_mix_forward, image_paste_forward,
    image_filter_blend_forward. Needs self._lib."""

    def _batch_mix_forward(self, out, x, mix, *, sizes):
        op = "batch_mix_forward"
        n, size = sizes
        self._lib.minidl_batch_mix_forward(output(op, "out", out), checked(op, "x", x),
                                           checked(op, "mix", mix), n, size)

    def _image_paste_forward(self, out, x, boxes, source, clip, *, sizes):
        op = "image_paste_forward"
        low, high = sizes
        self._lib.minidl_image_paste_forward(output(op, "out", out), checked(op, "x", x),
                                             checked(op, "boxes", boxes),
                                             checked(op, "source", source), low, high,
                                             *x.shape, *source.shape[:3])

    def _image_filter_blend_forward(self, out, x, kernel, weights, value_range, *, sizes):
        op = "image_filter_blend_forward"
        low, high = sizes
        self._lib.minidl_image_filter_blend_forward(output(op, "out", out), checked(op, "x", x),
                                                    checked(op, "kernel", kernel),
                                                    checked(op, "weights", weights), low, high,
                                                    *x.shape, *kernel.shape)


__all__ = ["CpuImageMixOps"]
