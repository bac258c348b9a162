"""BatchNormalization over the last (channel) axis."""

from ..arguments import number
from .base import Layer, count_elements


class BatchNormalization(Layer):
    """Keras BatchNormalization: batch statistics in training, moving statistics in inference.

    Weights in Keras order: gamma, beta, moving_mean, moving_variance; the moving ones are
    updated as moving = moving * momentum + batch * (1 - momentum).
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        if axis not in (-1,):
            raise ValueError(f"{self.describe()}: only axis=-1 (channels_last) is supported, "
                             f"got axis={axis!r}")
        self.axis = axis
        self.momentum = number(momentum, "momentum", self.describe(), low=0, high=1)
        self.epsilon = number(epsilon, "epsilon", self.describe(), low=0,
                                    low_inclusive=False)

    def get_config(self):
        return dict(super().get_config(), axis=self.axis, momentum=self.momentum,
                    epsilon=self.epsilon)

    def build(self, input_shape):
        c = input_shape[-1]
        self.gamma = self.add_weight("gamma", (c,), "ones")
        self.beta = self.add_weight("beta", (c,), "zeros")
        self.moving_mean = self.add_weight("moving_mean", (c,), "zeros", trainable=False)
        self.moving_variance = self.add_weight("moving_variance", (c,), "ones", trainable=False)

    def forward(self, x, training):
        b = self.backend
        shape = b.shape(x)
        c = shape[-1]
        x2 = b.reshape(x, (count_elements(shape[:-1]), c))
        out = self.buffer("out", b.shape(x2))
        # A frozen layer (trainable=False) normalizes with its moving statistics, as Keras.
        self._training = bool(training) and self.trainable
        if self._training:
            self._x2 = x2
            self._mean = self.buffer("mean", (c,))
            self._invstd = self.buffer("invstd", (c,))
            b.batchnorm_forward_train(out, self._mean, self._invstd, x2, self.gamma.value,
                                      self.beta.value, self.moving_mean.value,
                                      self.moving_variance.value, self.momentum, self.epsilon)
        else:
            b.batchnorm_forward_infer(out, x2, self.gamma.value, self.beta.value,
                                      self.moving_mean.value, self.moving_variance.value,
                                      self.epsilon)
        return b.reshape(out, shape)

    def backward(self, dout):
        b = self.backend
        shape = b.shape(dout)
        if not self._training:
            return self._backward_frozen(dout)
        dout2 = b.reshape(dout, b.shape(self._x2))
        dx = self.buffer("dx", b.shape(self._x2))
        b.batchnorm_backward(dx, self.gamma.grad, self.beta.grad, dout2, self._x2, self._mean,
                             self._invstd, self.gamma.value)
        return b.reshape(dx, shape)

    def _backward_frozen(self, dout):
        """dx of the inference-mode transform (a frozen layer inside a trained model):
        dx = dout * gamma / sqrt(moving_var + eps), i.e. the inference op with zero mean/beta."""
        b = self.backend
        shape = b.shape(dout)
        c = shape[-1]
        dout2 = b.reshape(dout, (count_elements(shape[:-1]), c))
        zeros = self.buffer("zeros", (c,))
        b.fill(zeros, 0.0)
        dx = self.buffer("dx", b.shape(dout2))
        b.batchnorm_forward_infer(dx, dout2, self.gamma.value, zeros, zeros,
                                  self.moving_variance.value, self.epsilon)
        return b.reshape(dx, shape)
