"""The convolution section of the contract: Conv2D's plan and its forward, input-gradient and
kernel-gradient ops (and the transposed convolution's plan, whose ops are the same three). The
public ops check the plan's geometry and every tensor against it once; a backend implements the
underscore names (numpy_backend.py / numpy_ops/windows.py, cpu/linalg.py, opencl/conv.py) and may
attach its scratch to a new plan in _conv2d_plan."""

from ..window import make_window, transpose_window
from .checks import check_precision, optional_shape, same_shape


class ConvolutionSection:
    """The contract's conv2d ops; a backend implements the underscore names."""

    # precision (gemm and the conv2d ops): None computes in float32; "bfloat16" / "float16"
    # computes as a low-precision kernel with float32 accumulation does (base.py's gemm).
    def conv2d_plan(self, in_shape, kernel_shape, strides, padding, dilation_rate=(1, 1), groups=1):
        """A Window2D for input (N, H, W, C) and a kernel (kh, kw, C / groups, filters)."""
        kh, kw, cg, filters = kernel_shape
        if len(in_shape) != 4 or groups < 1 or in_shape[3] != cg * groups or filters % groups:
            raise ValueError(f"conv2d_plan: input shape {tuple(in_shape)} must be (N, H, W, {cg * groups}) "
                             f"for kernel shape {tuple(kernel_shape)} and groups={groups} (filters "
                             f"divisible by groups)")
        plan = make_window(in_shape, (kh, kw), strides, padding, filters, dilation_rate, groups)
        if plan.oh < 1 or plan.ow < 1:
            raise ValueError(f"conv2d_plan: kernel {(kh, kw)} with strides {tuple(strides)}, dilation "
                             f"{tuple(dilation_rate)} and padding {padding!r} leaves no output for input "
                             f"{tuple(in_shape)}")
        return self._conv2d_plan(plan)

    def conv2d_transpose_plan(self, in_shape, kernel_shape, strides, padding, output_padding=None,
                              dilation_rate=(1, 1)):
        """The plan of a transposed convolution of x (N, H, W, Cin) with kernel (kh, kw, filters,
        Cin): the Window2D of the convolution it is the adjoint of (plan.out_shape is x's shape,
        plan.in_shape the transposed output's). Its forward is conv2d_backward_data, its input
        gradient conv2d_forward, its kernel gradient conv2d_backward_filter with x as dout."""
        if len(in_shape) != 4 or in_shape[3] != kernel_shape[3]:
            raise ValueError(f"conv2d_transpose_plan: input shape {tuple(in_shape)} must be "
                             f"(N, H, W, {kernel_shape[3]}) for kernel shape {tuple(kernel_shape)}")
        return self._conv2d_plan(transpose_window(in_shape, kernel_shape, strides, padding, output_padding,
                                                  dilation_rate))

    def _conv2d_plan(self, plan):
        """A backend's hook on a new conv plan (the cpu backend attaches its scratch); the plan."""
        return plan

    def conv2d_forward(self, out, x, weight, bias, plan, precision=None):
        """out (N, OH, OW, F) = conv(x (N, H, W, C), weight (KH, KW, C, F)) + bias (F,) or None."""
        op = "conv2d_forward"
        check_precision(op, precision)
        same_shape(op, "out", out, plan.out_shape)
        same_shape(op, "x", x, plan.in_shape)
        same_shape(op, "weight", weight, plan.kernel_shape)
        optional_shape(op, "bias", bias, (plan.oc,))
        self._conv2d_forward(out, x, weight, bias, plan, precision)

    def conv2d_backward_data(self, dx, dout, weight, plan, precision=None):
        """dx (N, H, W, C) = gradient of the conv output dout (N, OH, OW, F) w.r.t. its input."""
        op = "conv2d_backward_data"
        check_precision(op, precision)
        same_shape(op, "dx", dx, plan.in_shape)
        same_shape(op, "dout", dout, plan.out_shape)
        same_shape(op, "weight", weight, plan.kernel_shape)
        self._conv2d_backward_data(dx, dout, weight, plan, precision)

    def conv2d_backward_filter(self, dweight, dbias, dout, x, plan, precision=None):
        """dweight (KH, KW, C, F) and dbias (F,) or None from dout and the forward input x
        (dbias from the float32 dout whatever the precision)."""
        op = "conv2d_backward_filter"
        check_precision(op, precision)
        same_shape(op, "dweight", dweight, plan.kernel_shape)
        optional_shape(op, "dbias", dbias, (plan.oc,))
        same_shape(op, "dout", dout, plan.out_shape)
        same_shape(op, "x", x, plan.in_shape)
        self._conv2d_backward_filter(dweight, dbias, dout, x, plan, precision)
