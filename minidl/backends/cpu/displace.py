"""image_displace_forward / _backward on the cpu backend (csrc/image_displace.c). The contract
checked the arguments (contract/images.py) and passes the interpolation and fill-mode codes."""

from ._ffi import checked, output


class CpuDisplaceOps:
    """Mixed into CpuBackend. Needs self._lib."""

    def _image_displace_forward(self, out, x, field, interpolation, fill_mode, fill_value, low, high):
        op = "image_displace_forward"
        self._lib.minidl_image_displace_forward(output(op, "out", out), checked(op, "x", x),
                                                checked(op, "field", field), interpolation, fill_mode,
                                                fill_value, low, high, *x.shape)

    def _image_displace_backward(self, dx, dout, field, interpolation, fill_mode):
        op = "image_displace_backward"
        self._lib.minidl_image_displace_backward(output(op, "dx", dx), checked(op, "dout", dout),
                                                 checked(op, "field", field), interpolation, fill_mode,
                                                 *dx.shape)


__all__ = ["CpuDisplaceOps"]
