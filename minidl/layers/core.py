"""Dense, activations, Flatten, Reshape and Dropout."""

from .. import activations
from . import function_activation
from ..arguments import number
from ..mixed_precision import backward_precision, compute_precision
from .base import Layer, count_elements, format_shape, int_tuple


class ActivationMixin:
    """A fused activation after a layer's affine part.

    `forward` keeps the pre-activation z in `call.preactivation` so that a model can fuse
    a final softmax or sigmoid into its cross-entropy loss (backward_preactivation then
    starts from dL/dz). `alpha` None means the activation's Keras default
    (activations.default_alpha: leaky_relu's slope 0.2, elu's alpha 1.0).
    """

    # layer.activation is the function (as Keras); the kernels read the name in _activation
    activation = activations.ActivationAttribute("linear")
    alpha = None

    def _activation_alpha(self):
        return activations.default_alpha(self._activation) if self.alpha is None else self.alpha

    def _activate(self, call, z):
        call.preactivation = z
        act = self._activation
        if callable(act):
            call.activated = function_activation.forward(call, act, z)
            return call.activated
        if act == "linear":
            call.activated = z
            return z
        y = call.buffer("activated", self.backend.shape(z))
        self.backend.activation_forward(y, z, act, self._activation_alpha())
        call.activated = y
        return y

    def _deactivate(self, call, dout):
        act = self._activation
        if callable(act):
            return function_activation.backward(call, dout)
        if act == "linear":
            return dout
        dz = call.buffer("dpreactivation", self.backend.shape(dout))
        # z is passed for the activations whose derivative needs the input (gelu, silu ...)
        self.backend.activation_backward(dz, dout, call.activated, act,
                                         self._activation_alpha(), call.preactivation)
        return dz

    def backward(self, call, dout):
        return self.backward_preactivation(call, self._deactivate(call, dout))

    def backward_preactivation(self, call, dz):
        raise NotImplementedError


class Dense(ActivationMixin, Layer):
    """y = activation(x @ kernel + bias) over the last axis; kernel (in, units), bias (units,)."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, name=None,
                 trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"{self.describe()}: units must be a positive int, got {units!r}")
        self.units = units
        self.activation = activations.resolve(activation, self.describe())
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def get_config(self):
        return dict(super().get_config(), units=self.units, activation=activations.config_name(self._activation),
                    use_bias=self.use_bias, kernel_initializer=str(self.kernel_initializer),
                    bias_initializer=str(self.bias_initializer), **self._weight_options_config())

    def build(self, input_shape):
        if len(input_shape) < 1:
            raise ValueError(f"{self.describe()} needs inputs with a feature axis, "
                             f"got shape {format_shape(input_shape)}")
        if input_shape[-1] is None:   # Keras: the kernel's shape needs it
            raise ValueError(f"{self.describe()}: the last dimension of its input must be known "
                             f"(it sizes the kernel), got input shape {format_shape(input_shape)}")
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def forward(self, call, x, training):
        b = self.backend
        shape = call.x_shape = b.shape(x)
        rows = count_elements(shape[:-1])
        call.precision = compute_precision(self)   # the dtype policy's
        call.x2 = b.reshape(x, (rows, shape[-1]))
        call.kernel = self._kernel_for(call)   # (minidl.larq's QuantDense multiplies another)
        z = call.buffer("z", (rows, self.units))
        b.gemm(z, call.x2, call.kernel, precision=call.precision)
        if self.use_bias:
            b.bias_add(z, z, self.bias.value)
        return b.reshape(self._activate(call, z), shape[:-1] + (self.units,))

    def _kernel_for(self, call):
        """The kernel this call multiplies by (a quantized layer's is another tensor)."""
        return self.kernel.value

    def _deactivate(self, call, dout):
        rows = count_elements(self.backend.shape(dout)[:-1])
        return super()._deactivate(call, self.backend.reshape(dout, (rows, self.units)))

    def backward_preactivation(self, call, dz):
        b = self.backend
        rows = count_elements(b.shape(dz)[:-1])
        dz = b.reshape(dz, (rows, self.units))
        if self.trainable:
            b.gemm(call.grad(self.kernel), call.x2, dz, trans_a=True,
                   precision=backward_precision(call.precision))
            if self.use_bias:
                b.bias_grad(call.grad(self.bias), dz)
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", b.shape(call.x2))
        b.gemm(dx, dz, call.kernel, trans_b=True, precision=backward_precision(call.precision))
        return b.reshape(dx, call.x_shape)


class Activation(ActivationMixin, Layer):
    """An activation applied on its own, any of minidl.activations.ACTIVATIONS (or a Keras alias)."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, activation, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.activation = activations.resolve(activation, self.describe())

    def get_config(self):
        return dict(super().get_config(), activation=activations.config_name(self._activation))

    def forward(self, call, x, training):
        return self._activate(call, x)

    def backward_preactivation(self, call, dz):
        return dz


class ReLU(Activation):
    """Keras ReLU: max(x, 0), negative_slope * x for x < 0, or min(max(x, 0), 6) with
    max_value=6 (MobileNetV2's ReLU(6.0)). Other max_value and threshold values are refused."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, name=None,
                 trainable=True):
        super().__init__("relu", name=name, trainable=trainable)
        slope = number(negative_slope, "negative_slope", self.describe(), low=0)
        cap = None if max_value is None else number(max_value, "max_value", self.describe(), low=0)
        if cap not in (None, 6.0) or (cap is not None and slope != 0) or threshold != 0:
            raise ValueError(f"{self.describe()}: minidl has max(x, 0), leaky (negative_slope) and "
                             f"capped at 6 (max_value=6); got max_value={max_value!r}, "
                             f"negative_slope={negative_slope!r}, threshold={threshold!r}")
        self.activation = "relu6" if cap is not None else ("relu" if slope == 0 else "leaky_relu")
        self.max_value, self.alpha = cap, slope

    def get_config(self):
        return {"max_value": self.max_value, "negative_slope": self.alpha, "threshold": 0.0,
                "name": self.name, "trainable": self.trainable}


class LeakyReLU(Activation):
    """x for x >= 0, negative_slope * x otherwise (Keras default slope 0.3)."""

    def __init__(self, negative_slope=0.3, name=None, trainable=True, alpha=None):
        super().__init__("leaky_relu", name=name, trainable=trainable)
        slope = negative_slope if alpha is None else alpha
        self.alpha = number(slope, "negative_slope", self.describe(), low=0)

    def get_config(self):
        return {"negative_slope": self.alpha, "name": self.name, "trainable": self.trainable}


class Flatten(Layer):
    """(N, d1, d2, ...) -> (N, d1*d2*...), a view. With an unknown (None) dimension the size
    is unknown too, (None, None) as in Keras: a Dense after it has no kernel size."""

    def compute_output_shape(self, input_shape):
        return (None if None in input_shape else count_elements(input_shape),)

    def forward(self, call, x, training):
        if self._unknown_dims:
            shape = call.x_shape = self.backend.shape(x)
            return self.backend.reshape(x, (shape[0], count_elements(shape[1:])))
        n = self.backend.shape(x)[0]
        return self.backend.reshape(x, (n,) + self.output_shape)

    def backward(self, call, dout):
        if self._unknown_dims:
            return self.backend.reshape(dout, call.x_shape)
        n = self.backend.shape(dout)[0]
        return self.backend.reshape(dout, (n,) + self.input_shape)


class Reshape(Layer):
    """Reshape to target_shape (without the batch axis; one entry may be -1), a view."""

    def __init__(self, target_shape, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.target_shape = int_tuple(target_shape, "target_shape", self.describe(),
                                      allow_minus_one=True)

    def get_config(self):
        return dict(super().get_config(), target_shape=list(self.target_shape))

    def compute_output_shape(self, input_shape):
        if None in input_shape:   # as Keras: the -1 entry is unknown, the rest checked per batch
            return tuple(None if d == -1 else d for d in self.target_shape)
        size = count_elements(input_shape)
        known = count_elements([d for d in self.target_shape if d != -1])
        if -1 in self.target_shape:
            if size % known:
                raise ValueError(f"{self.describe()} cannot reshape {format_shape(input_shape)} "
                                 f"to {format_shape(self.target_shape)}")
            return tuple(size // known if d == -1 else d for d in self.target_shape)
        if known != size:
            raise ValueError(f"{self.describe()} cannot reshape {format_shape(input_shape)} "
                             f"({size} values per sample) to {format_shape(self.target_shape)} "
                             f"({known} values)")
        return self.target_shape

    def forward(self, call, x, training):
        return self.backend.reshape(x, self.batch_output_shape(call, x))

    def backward(self, call, dout):
        return self.backend.reshape(dout, self.batch_input_shape(call, dout))


class Dropout(Layer):
    """Zeroes a fraction `rate` of the inputs during training and scales the rest by 1/(1-rate).

    noise_shape (Keras's, batch axis first) makes whole blocks share one draw: entries 1 where
    the input's axis is longer share along that axis. minidl takes the shared axes as a run
    right after the batch axis, (None, 1, ..., 1, d_k, ..., d_n): (None, 1, 1, 1) drops whole
    samples (EfficientNet's stochastic depth), (None, 1, 1, C) whole feature maps.

    The mask comes from the backend's counter-based generator; the model sets `step_seed`
    before every training step so that a resumed run draws the same masks.
    """

    supports_masking = True   # passes its input's mask on (as Keras)

    needs_step_seed = True

    def __init__(self, rate, noise_shape=None, seed=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.rate = number(rate, "rate", self.describe(), low=0, high=1)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"{self.describe()}: seed must be None or an int >= 0, got {seed!r}")
        if noise_shape is not None:
            noise_shape = tuple(noise_shape)
            if any(d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 1)
                   for d in noise_shape):
                raise ValueError(f"{self.describe()}: noise_shape entries must be None or "
                                 f"positive ints, got {noise_shape!r}")
        self.noise_shape = noise_shape
        self.seed = seed
        self.step_seed = 0
        self._shared = None   # the sample axes along which one draw is shared (noise_shape 1)

    def get_config(self):
        noise = None if self.noise_shape is None else list(self.noise_shape)
        return dict(super().get_config(), rate=self.rate, noise_shape=noise, seed=self.seed)

    def build(self, input_shape):
        if self.noise_shape is not None:
            self._shared = self._mask_layout(tuple(input_shape))

    def _mask_layout(self, input_shape):
        noise = self.noise_shape
        wrong = len(noise) != len(input_shape) + 1 or noise[0] is not None or any(
            d is not None and d not in (1, s) for d, s in zip(noise[1:], input_shape))
        # axes of length 1 can count as shared or not: only the others must be in order
        shared = [d == 1 for d, s in zip(noise[1:], input_shape) if s != 1]
        k = shared.count(True)
        if wrong or shared != [True] * k + [False] * (len(shared) - k):
            raise ValueError(f"{self.describe()}: noise_shape {noise!r} does not fit inputs of shape "
                             f"{format_shape(input_shape)}; minidl takes (None, 1, ..., 1, d_k, "
                             "..., d_n): the batch axis None, then the shared axes, then the input's")
        return tuple(i for i, d in enumerate(noise[1:]) if d == 1) if k else None

    def _layout(self, shape):
        """(shared, own) of a batch of `shape`: the values of a sample that share one draw (the
        shared axes, leading once length-1 axes are set aside) and the draws per sample."""
        shared = count_elements([shape[1 + i] for i in self._shared])
        return shared, count_elements(shape[1:]) // shared

    def forward(self, call, x, training):
        call.dropped = bool(training) and self.rate > 0
        if not call.dropped:
            return x
        b = self.backend
        shape = b.shape(x)
        if self._shared is not None:
            return self._shared_forward(call, x, shape)
        out = call.buffer("out", shape)
        call.drop_mask = call.buffer("mask", shape)
        b.dropout_forward(out, call.drop_mask, x, self.rate, call.step_seed)
        return out

    def _shared_forward(self, call, x, shape):
        # one draw per (sample, own) position, applied along the shared axes
        b = self.backend
        n, (shared, own) = shape[0], self._layout(shape)
        ones = call.buffer("ones", (n, own))
        b.fill(ones, 1.0)
        call.drop_mask = call.buffer("mask", (n, own))
        b.dropout_forward(call.buffer("kept", (n, own)), call.drop_mask, ones, self.rate,
                          call.step_seed)
        out = call.buffer("out", (n, shared, own))
        b.channel_mask_multiply(out, b.reshape(x, (n, shared, own)), call.drop_mask)
        return b.reshape(out, shape)

    def backward(self, call, dout):
        if not call.dropped:
            return dout
        b = self.backend
        shape = b.shape(dout)
        if self._shared is not None:
            n, (shared, own) = shape[0], self._layout(shape)
            dx = call.buffer("dx", (n, shared, own))
            b.channel_mask_multiply(dx, b.reshape(dout, (n, shared, own)), call.drop_mask)
            return b.reshape(dx, shape)
        dx = call.buffer("dx", shape)
        b.multiply(dx, dout, call.drop_mask)
        return dx
