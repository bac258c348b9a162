"""RMSNormalization, UnitNormalization, GroupNormalization and Identity (Keras 3's), built from
the backends' tensor ops and layer-normalization kernels."""

from ..arguments import number
from .base import Layer, count_elements, format_shape


def _last_axis(layer, axis, input_shape):
    rank = len(input_shape) + 1
    axis = axis[0] if isinstance(axis, (list, tuple)) and len(axis) == 1 else axis
    if axis not in (-1, rank - 1):
        raise ValueError(f"{layer.describe()}: minidl normalizes over the last axis (-1 or {rank - 1}) "
                         f"for inputs of shape {format_shape(input_shape)}, got axis={axis!r}")


class _RowScaling(Layer):
    """y = x * r per row of x (M, C) over the last axis, r (M, 1) a function of sum(x^2); the
    backward pass is dx = r g - x r'(s) 2 sum(g x) with g = dL/d(x r)."""

    def _row_scale(self, r, sum_squares, c):
        raise NotImplementedError

    def _slope(self, call, coef, r, c):
        """coef (M, 1) *= -d r / d sum(x^2) / (r 2) ... written per subclass: coef = r^3 / c'."""
        raise NotImplementedError

    def forward(self, call, x, training):
        b = self.backend
        shape = b.shape(x)
        c = shape[-1]
        rows = count_elements(shape[:-1])
        x2 = call.x2 = b.reshape(x, (rows, c))
        squares = call.buffer("squares", (rows, c))
        b.binary(squares, x2, x2, "multiply")
        total = call.buffer("sum_squares", (rows, 1))
        b.reduce(total, squares, "sum")
        call.r = call.buffer("r", (rows, 1))
        self._row_scale(call.r, total, c)
        normed = call.normed = call.buffer("normed", (rows, c))
        b.binary(normed, x2, call.r, "multiply")
        return b.reshape(self._scaled(call, normed), shape)

    def _scaled(self, call, normed):
        return normed

    def _dnormed(self, call, dout2):
        return dout2

    def backward(self, call, dout):
        b = self.backend
        shape = b.shape(dout)
        rows, c = b.shape(call.x2)
        g = self._dnormed(call, b.reshape(dout, (rows, c)))
        product = call.buffer("g_x", (rows, c))
        b.binary(product, g, call.x2, "multiply")
        dot = call.buffer("g_dot_x", (rows, 1))
        b.reduce(dot, product, "sum")
        coef = call.buffer("coef", (rows, 1))
        self._slope(call, coef, call.r, c)
        b.binary(coef, coef, dot, "multiply")
        dx = call.buffer("dx", (rows, c))
        b.binary(dx, g, call.r, "multiply")
        b.binary(product, call.x2, coef, "multiply")
        b.binary(dx, dx, product, "subtract")
        return b.reshape(dx, shape)


class RMSNormalization(_RowScaling):
    """Keras RMSNormalization: x * scale / sqrt(mean(x^2) + epsilon) over the last axis, weight
    `scale` (C,) initialized to ones."""

    def __init__(self, axis=-1, epsilon=1e-6, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.axis = axis
        self.epsilon = number(epsilon, "epsilon", self.describe(), low=0)

    def get_config(self):
        return dict(super().get_config(), axis=self.axis, epsilon=self.epsilon)

    def build(self, input_shape):
        _last_axis(self, self.axis, input_shape)
        self.scale = self.add_weight("scale", (input_shape[-1],), "ones")

    def _row_scale(self, r, sum_squares, c):
        b = self.backend
        b.binary(r, sum_squares, 1.0 / c, "multiply")
        b.binary(r, r, float(self.epsilon), "add")
        b.unary(r, r, "sqrt")
        b.unary(r, r, "reciprocal")

    def _slope(self, call, coef, r, c):
        # r = (s / c + eps)^-1/2: dr/ds = -r^3 / (2c), and d(sum x^2)/dx = 2x
        b = self.backend
        b.binary(coef, r, 3.0, "power")
        b.binary(coef, coef, 1.0 / c, "multiply")

    def _scaled(self, call, normed):
        out = call.buffer("out", self.backend.shape(normed))
        self.backend.binary(out, normed, self.scale.value, "multiply")
        return out

    def _dnormed(self, call, dout2):
        b = self.backend
        if self.trainable:
            product = call.buffer("dout_normed", b.shape(dout2))
            b.binary(product, dout2, call.normed, "multiply")
            b.bias_grad(call.grad(self.scale), product)
        g = call.buffer("dnormed", b.shape(dout2))
        b.binary(g, dout2, self.scale.value, "multiply")
        return g


class UnitNormalization(_RowScaling):
    """Keras UnitNormalization: x / ||x|| over the last axis, as x * min(1 / ||x||, 1e12)."""

    EPSILON = 1e-12

    def __init__(self, axis=-1, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.axis = axis

    def get_config(self):
        return dict(super().get_config(), axis=self.axis)

    def build(self, input_shape):
        _last_axis(self, self.axis, input_shape)

    def _row_scale(self, r, sum_squares, c):
        b = self.backend
        b.unary(r, sum_squares, "sqrt")
        b.unary(r, r, "reciprocal")
        b.binary(r, r, 1.0 / self.EPSILON, "minimum")

    def _slope(self, call, coef, r, c):
        # r = s^-1/2 gives r^3; where the 1e12 cap holds r is constant and the slope 0
        b = self.backend
        b.binary(coef, r, 3.0, "power")
        uncapped = call.buffer("uncapped", b.shape(r))
        b.binary(uncapped, r, 1.0 / self.EPSILON, "less")
        b.binary(coef, coef, uncapped, "multiply")


class GroupNormalization(Layer):
    """Keras GroupNormalization: channels (last axis) split into `groups`; each sample's group
    is normalized over its positions and channels (biased variance, epsilon inside the root),
    then scaled by gamma and shifted by beta (C,)."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, name=None,
                 trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise ValueError(f"{self.describe()}: groups must be a positive int, got {groups!r}")
        self.groups, self.axis = groups, axis
        self.epsilon = number(epsilon, "epsilon", self.describe(), low=0, low_inclusive=False)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint

    def get_config(self):
        return dict(super().get_config(), groups=self.groups, axis=self.axis, epsilon=self.epsilon,
                    center=self.center, scale=self.scale,
                    beta_initializer=str(self.beta_initializer),
                    gamma_initializer=str(self.gamma_initializer))

    def build(self, input_shape):
        _last_axis(self, self.axis, input_shape)
        c = input_shape[-1]
        if c is None or c % self.groups:
            raise ValueError(f"{self.describe()}: the channels ({c}) must be a known multiple of groups "
                             f"({self.groups}), got input shape {format_shape(input_shape)}")
        self.gamma = self.add_weight("gamma", (c,), self.gamma_initializer, regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", (c,), self.beta_initializer, regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None

    def _layout(self, shape):
        """(n, positions, groups, channels per group) of a batch of `shape`."""
        return shape[0], count_elements(shape[1:-1]), self.groups, shape[-1] // self.groups

    def _constants(self, call, width):
        """ones and zeros (width,): layernorm's gamma / beta, which the group statistics need none of."""
        b = self.backend
        ones, zeros = call.buffer("ones", (width,)), call.buffer("zeros", (width,))
        b.fill(ones, 1.0)
        b.fill(zeros, 0.0)
        return ones, zeros

    def forward(self, call, x, training):
        b = self.backend
        shape = call.x_shape = b.shape(x)
        n, s, g, cg = self._layout(shape)
        grouped = call.buffer("grouped", (n, g, s, cg))
        b.transpose(grouped, b.reshape(x, (n, s, g, cg)), (0, 2, 1, 3))
        call.rows = b.reshape(grouped, (n * g, s * cg))
        normed = call.buffer("normed_rows", (n * g, s * cg))
        call.mean, call.invstd = call.buffer("mean", (n * g,)), call.buffer("invstd", (n * g,))
        ones, zeros = self._constants(call, s * cg)
        b.layernorm_forward(normed, call.mean, call.invstd, call.rows, ones, zeros, self.epsilon)
        xhat = call.xhat = call.buffer("xhat", (n, s, g, cg))
        b.transpose(xhat, b.reshape(normed, (n, g, s, cg)), (0, 2, 1, 3))
        xhat2 = b.reshape(xhat, (n * s, g * cg))
        out = call.buffer("out", (n * s, g * cg))
        if self.gamma is not None:
            b.binary(out, xhat2, self.gamma.value, "multiply")
        else:
            b.copy(out, xhat2)
        if self.beta is not None:
            b.bias_add(out, out, self.beta.value)
        return b.reshape(out, shape)

    def backward(self, call, dout):
        b = self.backend
        n, s, g, cg = self._layout(call.x_shape)
        dout2 = b.reshape(dout, (n * s, g * cg))
        if self.trainable and self.beta is not None:
            b.bias_grad(call.grad(self.beta), dout2)
        dxhat = call.buffer("dxhat", (n * s, g * cg))
        if self.gamma is not None:
            if self.trainable:
                b.binary(dxhat, dout2, b.reshape(call.xhat, (n * s, g * cg)), "multiply")
                b.bias_grad(call.grad(self.gamma), dxhat)
            b.binary(dxhat, dout2, self.gamma.value, "multiply")
        else:
            b.copy(dxhat, dout2)
        drows = call.buffer("drows", (n, g, s, cg))
        b.transpose(drows, b.reshape(dxhat, (n, s, g, cg)), (0, 2, 1, 3))
        ones, _ = self._constants(call, s * cg)
        dgamma, dbeta = call.buffer("dgamma_rows", (s * cg,)), call.buffer("dbeta_rows", (s * cg,))
        dx_rows = call.buffer("dx_rows", (n * g, s * cg))
        b.layernorm_backward(dx_rows, dgamma, dbeta, b.reshape(drows, (n * g, s * cg)), call.rows,
                             call.mean, call.invstd, ones)
        dx = call.buffer("dx", (n, s, g, cg))
        b.transpose(dx, b.reshape(dx_rows, (n, g, s, cg)), (0, 2, 1, 3))
        return b.reshape(dx, call.x_shape)


class Identity(Layer):
    """Keras Identity: returns its input (a placeholder layer)."""

    def forward(self, call, x, training):
        return x

    def backward(self, call, dout):
        return dout
