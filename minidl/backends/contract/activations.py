"""The activations section of the contract: the activation functions of minidl.activations
(linear, relu, leaky_relu, sigmoid, softmax, gelu ...) and their gradients. The public ops check
the name (its kernels' code is looked up once, here), the shapes and, for the activations whose
derivative needs it, the forward input; a backend implements the underscore names
(numpy_ops/activations.py, cpu/activations.py, opencl/activations.py)."""

from ...activation_codes import NEEDS_INPUT, code as kernel_code
from ..checks import require_input
from .checks import same_shape


class ActivationsSection:
    """The contract's activation ops; a backend implements the underscore names, which receive
    the name and its code (the position in activations.ACTIVATIONS, the kernels' number)."""

    # name is one of minidl.activations.ACTIVATIONS; softmax works along the last axis;
    # leaky_relu uses `alpha` as its negative slope, elu as its alpha (activations.default_alpha
    # gives Keras's defaults); the others ignore alpha.
    # NaN propagates as in numpy: f(NaN) = NaN, and a NaN in x, y or dout gives NaN in dx
    # (relu-like selects excepted, which pass dout or 0 as numpy's where does).
    def activation_forward(self, out, x, name, alpha=0.0):
        """out = f(x). out may alias x."""
        op = "activation_forward"
        code = kernel_code(op, name)
        same_shape(op, "out", out, x.shape)
        self._activation_forward(out, x, name, code, float(alpha))

    def activation_backward(self, dx, dout, y, name, alpha=0.0, x=None):
        """dx = dout * f'(x), from the forward output y = f(x) and, for the activations in
        activations.NEEDS_INPUT (gelu, silu, elu, softplus, hard_silu, mish), the forward
        input x (same shape; required for those, ignored by the others: the implementation
        receives None). dx may alias dout."""
        op = "activation_backward"
        code = kernel_code(op, name)
        same_shape(op, "dout", dout, y.shape)
        same_shape(op, "dx", dx, y.shape)
        if name in NEEDS_INPUT:
            require_input(op, name, x, y.shape)
        else:
            x = None
        self._activation_backward(dx, dout, y, x, name, code, float(alpha))
