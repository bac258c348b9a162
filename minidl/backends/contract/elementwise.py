"""The elementwise section of the contract: sums and products of same-shaped tensors, the bias
of a dense or conv layer (broadcast over the last axis) and its gradient, the concatenation of
tensors along the last axis, and dropout's mask. The public ops check every shape once (and
dropout's rate and seed); a backend implements the underscore names (numpy_ops/elementwise.py,
cpu/elementwise.py, opencl/elementwise.py)."""

from ..checks import check_concat, check_dropout_args
from .checks import same_shape


class ElementwiseSection:
    """The contract's elementwise ops; a backend implements the underscore names."""

    def add(self, out, a, b):
        """out = a + b (same shapes). out may alias a or b."""
        same_shape("add", "b", b, a.shape)
        same_shape("add", "out", out, a.shape)
        self._add(out, a, b)

    def axpby(self, out, alpha, x, beta, y):
        """out = alpha * x + beta * y (same shapes). out may alias x or y."""
        same_shape("axpby", "y", y, x.shape)
        same_shape("axpby", "out", out, x.shape)
        self._axpby(out, float(alpha), x, float(beta), y)

    def multiply(self, out, a, b):
        """out = a * b elementwise (same shapes). out may alias a or b."""
        same_shape("multiply", "b", b, a.shape)
        same_shape("multiply", "out", out, a.shape)
        self._multiply(out, a, b)

    def bias_add(self, out, x, bias):
        """out = x + bias, bias of shape (C,) broadcast over the last axis. out may alias x."""
        same_shape("bias_add", "bias", bias, x.shape[-1:])
        same_shape("bias_add", "out", out, x.shape)
        self._bias_add(out, x, bias)

    def bias_grad(self, dbias, dout):
        """dbias (C,) = sum of dout over every axis but the last."""
        same_shape("bias_grad", "dbias", dbias, dout.shape[-1:])
        self._bias_grad(dbias, dout)

    def concat_forward(self, out, xs):
        """out = the tensors xs concatenated along the last axis (their other axes equal out's)."""
        check_concat("concat_forward", xs, out, "xs", "out")
        self._concat_forward(out, xs)

    def concat_backward(self, dxs, dout):
        """Split dout along the last axis into the tensors dxs (the inverse of concat_forward)."""
        check_concat("concat_backward", dxs, dout, "dxs", "dout")
        self._concat_backward(dxs, dout)

    def dropout_forward(self, out, mask, x, rate, seed):
        """mask = keep / (1 - rate) where keep ~ Bernoulli(1 - rate) drawn from a counter-based
        generator keyed by the int `seed` (same seed -> same mask on a backend; rate in [0, 1));
        out = x * mask. Dropout's backward is multiply(dx, dout, mask)."""
        op = "dropout_forward"
        check_dropout_args(op, rate, seed)
        same_shape(op, "mask", mask, x.shape)
        same_shape(op, "out", out, x.shape)
        self._dropout_forward(out, mask, x, float(rate), int(seed))
