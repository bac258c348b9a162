"""BatchNormalization (statistics per channel, over the batch) and LayerNormalization (per sample)."""

import warnings

from ..arguments import number
from . import batchnorm_sync
from .base import Layer, count_elements, format_shape


class AffineNormalization(Layer):
    """A normalization layer with optional gamma / beta: `_affine` holds (gamma, beta) tensors
    for its ops, constants where scale / center are off (affine_parameters); a call's backward
    writes their gradients where affine_grads says."""

    @property
    def _affine(self):
        """(gamma, beta) for the ops, made again whenever the backend or the weights' tensors
        change: after attach, and after a custom layer's shape probe gave this layer zero
        weights without attaching it (custom_call._attach)."""
        key = (self.backend,) + tuple(getattr(w, "value", None) for w in
                                      (getattr(self, "gamma", None), getattr(self, "beta", None)))
        held = getattr(self, "_affine_held", None)
        if held is None or len(held[0]) != len(key) or any(
                a is not b for a, b in zip(held[0], key)):
            held = self._affine_held = (key, affine_parameters(self, self.backend,
                                                                self._features()))
        return held[1]

    def _features(self):
        """The length of gamma and beta as the ops see them (flat)."""
        return self.input_shape[-1]

    def affine_grads(self, call):
        """(dgamma, dbeta) flat (c,) tensors for this call's backward: call.grad of gamma and
        beta, or scratch nobody reads where a weight is off (scale / center False) or the
        layer is frozen (the ops write both gradients regardless)."""
        b, c = self.backend, self._features()

        def target(weight, role):
            if weight is None or weight.grad is None or not self.trainable:
                return call.buffer(role, (c,))
            grad = call.grad(weight)
            # LayerNormalization over several axes has gamma (d1, d2, ...): the ops see (c,)
            return grad if tuple(b.shape(grad)) == (c,) else b.reshape(grad, (c,))
        return (target(getattr(self, "gamma", None), "unused_dgamma"),
                target(getattr(self, "beta", None), "unused_dbeta"))


class BatchNormalization(AffineNormalization):
    """Keras BatchNormalization: batch statistics in training, moving statistics in inference.

    Weights in Keras order: gamma (when scale), beta (when center), moving_mean,
    moving_variance; the moving ones are updated as moving = moving * momentum + batch *
    (1 - momentum). scale=False / center=False drop gamma / beta: the layer then normalizes
    with a constant gamma of ones / beta of zeros that nothing trains. synchronized=True: under
    minidl.distributed with several ranks, training uses the statistics of every rank's batch
    (batchnorm_sync.py); elsewhere it changes nothing.
    """

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 synchronized=False, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.synchronized = bool(synchronized)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"{self.describe()}: axis must be an int (the channel axis), "
                             f"got axis={axis!r}")
        self.axis = axis
        self.momentum = number(momentum, "momentum", self.describe(), low=0, high=1)
        self.epsilon = number(epsilon, "epsilon", self.describe(), low=0,
                                    low_inclusive=False)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer

    def get_config(self):
        return dict(super().get_config(), axis=self.axis, momentum=self.momentum,
                    epsilon=self.epsilon, center=self.center, scale=self.scale,
                    beta_initializer=str(self.beta_initializer),
                    gamma_initializer=str(self.gamma_initializer),
                    moving_mean_initializer=str(self.moving_mean_initializer),
                    moving_variance_initializer=str(self.moving_variance_initializer),
                    synchronized=self.synchronized)

    def build(self, input_shape):
        rank = len(input_shape) + 1
        if self.axis not in (-1, rank - 1):
            raise ValueError(f"{self.describe()}: only the last (channel) axis, -1 or {rank - 1}, "
                             f"is supported for inputs of shape {format_shape(input_shape)}, "
                             f"got axis={self.axis}")
        c = input_shape[-1]
        self.gamma = self.add_weight("gamma", (c,), self.gamma_initializer) if self.scale else None
        self.beta = self.add_weight("beta", (c,), self.beta_initializer) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", (c,), self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", (c,),
                                               self.moving_variance_initializer, trainable=False)

    def forward(self, call, x, training):
        b = self.backend
        shape = b.shape(x)
        c = shape[-1]
        x2 = b.reshape(x, (count_elements(shape[:-1]), c))
        out = call.buffer("out", b.shape(x2))
        # A frozen layer (trainable=False) normalizes with its moving statistics, as Keras.
        call.batch_statistics = bool(training) and self.trainable
        call.x2 = x2
        gamma, beta = self._affine
        if call.batch_statistics and batchnorm_sync.is_active(self):
            batchnorm_sync.forward_train(self, call, out, x2)
        elif call.batch_statistics:
            call.mean = call.buffer("mean", (c,))
            call.invstd = call.buffer("invstd", (c,))
            b.batchnorm_forward_train(out, call.mean, call.invstd, x2, gamma, beta,
                                      self.moving_mean.value, self.moving_variance.value,
                                      self.momentum, self.epsilon)
        else:
            b.batchnorm_forward_infer(out, x2, gamma, beta,
                                      self.moving_mean.value, self.moving_variance.value,
                                      self.epsilon)
        return b.reshape(out, shape)

    def backward(self, call, dout):
        b = self.backend
        shape = b.shape(dout)
        if not call.batch_statistics:
            return self._backward_frozen(call, dout)
        dout2 = b.reshape(dout, b.shape(call.x2))
        dx = call.buffer("dx", b.shape(call.x2))
        if batchnorm_sync.is_active(self):
            batchnorm_sync.backward(self, call, dx, dout2)
            return b.reshape(dx, shape)
        dgamma, dbeta = self.affine_grads(call)
        b.batchnorm_backward(dx, dgamma, dbeta, dout2, call.x2, call.mean, call.invstd,
                             self._affine[0])
        return b.reshape(dx, shape)

    def _backward_frozen(self, call, dout):
        """dx of the inference-mode transform (a frozen layer inside a trained model):
        dx = dout * gamma / sqrt(moving_var + eps), i.e. the inference op with zero mean/beta."""
        b = self.backend
        shape = b.shape(dout)
        c = shape[-1]
        dout2 = b.reshape(dout, (count_elements(shape[:-1]), c))
        zeros = call.buffer("zeros", (c,))
        b.fill(zeros, 0.0)
        dx = call.buffer("dx", b.shape(dout2))
        b.batchnorm_forward_infer(dx, dout2, self._affine[0], zeros, zeros,
                                  self.moving_variance.value, self.epsilon)
        if self.trainable:
            # trainable but run in inference mode (called with training=False, as Keras's
            # fine-tuning guide does): gamma and beta still learn, through the moving-
            # statistics transform: dbeta = sum(dout), dgamma = sum(dout * x_hat)
            ones = call.buffer("ones", (c,))
            b.fill(ones, 1.0)
            x_hat = call.buffer("x_hat", b.shape(dout2))
            b.batchnorm_forward_infer(x_hat, call.x2, ones, zeros, self.moving_mean.value,
                                      self.moving_variance.value, self.epsilon)
            b.multiply(x_hat, x_hat, dout2)
            dgamma, dbeta = self.affine_grads(call)   # scratch where scale / center are off
            b.bias_grad(dgamma, x_hat)
            b.bias_grad(dbeta, dout2)
        return b.reshape(dx, shape)


def affine_parameters(layer, backend, c):
    """(gamma, beta) (c,) tensors of a normalization layer for its ops: its weights where it
    has them, else constants (ones, zeros) where scale / center are False."""
    gamma, beta = getattr(layer, "gamma", None), getattr(layer, "beta", None)
    ones = backend.zeros((c,))
    backend.fill(ones, 1.0)

    def flat(tensor):
        # LayerNormalization over several axes has gamma (d1, d2, ...): the ops see (c,) views
        return tensor if tuple(backend.shape(tensor)) == (c,) else backend.reshape(tensor, (c,))
    return (flat(gamma.value) if gamma else ones, flat(beta.value) if beta else backend.zeros((c,)))


class LayerNormalization(AffineNormalization):
    """Keras LayerNormalization: each sample is normalized over `axis` with its own mean and
    (biased) variance, then scaled by gamma and shifted by beta (weights gamma, beta of the
    normalized axes' shape, in Keras's order; scale / center False drop them). axis is the
    last axis or a list of trailing axes ([-2, -1]: gamma (d_{n-1}, d_n)). The same transform
    in training and inference. rms_scaling=True is Keras 3's deprecated variant: x * gamma /
    sqrt(var(x) + epsilon), with gamma and no beta (the variance, not the mean square, as
    Keras computes it)."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.rms_scaling = bool(rms_scaling)
        if self.rms_scaling:
            warnings.warn(f"{self.describe()}: rms_scaling=True is deprecated in Keras 3: it divides "
                          "by the standard deviation, not the root mean square (Keras's "
                          "RMSNormalization does that)", stacklevel=2)
        if isinstance(axis, (list, tuple)) and len(axis) == 1:
            axis = axis[0]
        axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        if not axes or any(isinstance(a, bool) or not isinstance(a, int) for a in axes):
            raise ValueError(f"{self.describe()}: axis must be an int or a list of ints, got {axis!r}")
        self.axis = axes if isinstance(axis, (list, tuple)) else axis
        self.epsilon = number(epsilon, "epsilon", self.describe(), low=0, low_inclusive=False)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer

    def get_config(self):
        return dict(super().get_config(), axis=self.axis, epsilon=self.epsilon, center=self.center,
                    scale=self.scale, rms_scaling=self.rms_scaling,
                    beta_initializer=str(self.beta_initializer),
                    gamma_initializer=str(self.gamma_initializer))

    def build(self, input_shape):
        rank = len(input_shape) + 1
        axes = sorted(a % rank if -rank <= a < rank else a
                      for a in (self.axis if isinstance(self.axis, list) else [self.axis]))
        if rank < 2 or axes != list(range(rank - len(axes), rank)) or 0 in axes:
            raise ValueError(f"{self.describe()}: axis must be the last axis (-1 or {rank - 1}) or a "
                             "list of trailing axes without the batch axis ([-2, -1]) for inputs of "
                             f"shape {format_shape(input_shape)}, got axis={self.axis}")
        shape = tuple(input_shape[a - 1] for a in axes)
        scale, center = self.scale or self.rms_scaling, self.center and not self.rms_scaling
        self.gamma = self.add_weight("gamma", shape, self.gamma_initializer) if scale else None
        self.beta = self.add_weight("beta", shape, self.beta_initializer) if center else None
        self._normalized = count_elements(shape)

    def _features(self):
        return self._normalized

    def forward(self, call, x, training):
        b = self.backend
        shape = b.shape(x)
        rows = count_elements(shape) // self._normalized
        call.x2 = b.reshape(x, (rows, self._normalized))
        out = call.buffer("out", b.shape(call.x2))
        call.mean = call.buffer("mean", (rows,))
        call.invstd = call.buffer("invstd", (rows,))
        gamma, beta = self._affine
        b.layernorm_forward(out, call.mean, call.invstd, call.x2, gamma, beta, self.epsilon,
                            not self.rms_scaling)
        return b.reshape(out, shape)

    def backward(self, call, dout):
        b = self.backend
        shape = b.shape(dout)
        dx = call.buffer("dx", b.shape(call.x2))
        dgamma, dbeta = self.affine_grads(call)
        b.layernorm_backward(dx, dgamma, dbeta, b.reshape(dout, b.shape(call.x2)), call.x2,
                             call.mean, call.invstd, self._affine[0], not self.rms_scaling)
        return b.reshape(dx, shape)
