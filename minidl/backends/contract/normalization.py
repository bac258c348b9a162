"""The normalization section of the contract: batch normalization (statistics per channel, the
last axis) and layer normalization (statistics per row). The public ops check every shape once;
a backend implements the underscore names (numpy_ops/normalization.py, cpu/normalization.py,
opencl/normalization.py)."""

from .checks import optional_shape, same_shape


def _rows(op, x):
    """(M, C) of x viewed as rows of its last axis."""
    if len(x.shape) < 1 or x.shape[-1] < 1:
        raise ValueError(f"{op}: x must have at least one channel on its last axis, got shape {tuple(x.shape)}")
    return x.size // x.shape[-1], x.shape[-1]


class NormalizationSection:
    """The contract's normalization ops; a backend implements the underscore names."""

    # x is viewed as (M, C): statistics are per channel (the last axis). gamma and beta may be
    # None (scale / center off: 1 and 0).
    def batchnorm_forward_train(self, out, mean, invstd, x, gamma, beta,
                                moving_mean, moving_var, momentum, epsilon):
        """Normalize with the batch statistics: mean (C,) and invstd (C,) = 1/sqrt(var + eps)
        are saved for backward; moving_mean/var are updated in place as
        moving = moving * momentum + batch * (1 - momentum) (biased batch variance)."""
        op = "batchnorm_forward_train"
        _, c = _rows(op, x)
        same_shape(op, "out", out, x.shape)
        for name, t in (("mean", mean), ("invstd", invstd), ("moving_mean", moving_mean),
                        ("moving_var", moving_var)):
            same_shape(op, name, t, (c,))
        optional_shape(op, "gamma", gamma, (c,))
        optional_shape(op, "beta", beta, (c,))
        self._batchnorm_forward_train(out, mean, invstd, x, gamma, beta, moving_mean, moving_var,
                                      momentum, epsilon)

    def batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon):
        """out = gamma * (x - moving_mean) / sqrt(moving_var + eps) + beta."""
        op = "batchnorm_forward_infer"
        _, c = _rows(op, x)
        same_shape(op, "out", out, x.shape)
        same_shape(op, "moving_mean", moving_mean, (c,))
        same_shape(op, "moving_var", moving_var, (c,))
        optional_shape(op, "gamma", gamma, (c,))
        optional_shape(op, "beta", beta, (c,))
        self._batchnorm_forward_infer(out, x, gamma, beta, moving_mean, moving_var, epsilon)

    def batchnorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma):
        """Gradients of batchnorm_forward_train with respect to x, gamma and beta (dgamma and
        dbeta may be None: not computed)."""
        op = "batchnorm_backward"
        _, c = _rows(op, x)
        same_shape(op, "dx", dx, x.shape)
        same_shape(op, "dout", dout, x.shape)
        same_shape(op, "mean", mean, (c,))
        same_shape(op, "invstd", invstd, (c,))
        for name, t in (("dgamma", dgamma), ("dbeta", dbeta), ("gamma", gamma)):
            optional_shape(op, name, t, (c,))
        self._batchnorm_backward(dx, dgamma, dbeta, dout, x, mean, invstd, gamma)

    # x is (M, C): statistics are per row (Keras LayerNormalization, axis=-1).
    def layernorm_forward(self, out, mean, invstd, x, gamma, beta, epsilon, centered=True):
        """out (M, C) = (x - mean) * invstd * gamma + beta, gamma and beta (C,); each row's mean
        (M,) and invstd (M,) = 1/sqrt(var + eps) (biased variance) are saved for backward.
        centered=False: out = x * invstd * gamma + beta (Keras's rms_scaling)."""
        op = "layernorm_forward"
        rows, c = self._layernorm_rows(op, x)
        same_shape(op, "out", out, x.shape)
        same_shape(op, "mean", mean, (rows,))
        same_shape(op, "invstd", invstd, (rows,))
        same_shape(op, "gamma", gamma, (c,))
        same_shape(op, "beta", beta, (c,))
        self._layernorm_forward(out, mean, invstd, x, gamma, beta, epsilon, bool(centered))

    def layernorm_backward(self, dx, dgamma, dbeta, dout, x, mean, invstd, gamma, centered=True):
        """dx (M, C), dgamma (C,) and dbeta (C,): the gradients of layernorm_forward."""
        op = "layernorm_backward"
        rows, c = self._layernorm_rows(op, x)
        same_shape(op, "dx", dx, x.shape)
        same_shape(op, "dout", dout, x.shape)
        same_shape(op, "mean", mean, (rows,))
        same_shape(op, "invstd", invstd, (rows,))
        for name, t in (("gamma", gamma), ("dgamma", dgamma), ("dbeta", dbeta)):
            same_shape(op, name, t, (c,))
        self._layernorm_backward(dx, dgamma, dbeta, dout, x, mean, invstd, gamma, bool(centered))

    @staticmethod
    def _layernorm_rows(op, x):
        if len(x.shape) != 2:
            raise ValueError(f"{op}: x must be 2-D (rows, channels), got shape {tuple(x.shape)}")
        return x.shape
