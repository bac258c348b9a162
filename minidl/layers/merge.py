"""Layers that merge several tensors: Add, Subtract, Multiply, Average, Maximum, Minimum and
Concatenate, and Keras's functional forms (layers.add([a, b]) is Add()([a, b]))."""

from .base import Layer, count_elements, format_shape
from .calls import LayerCall


class _Merge(Layer):
    """Elementwise merges of inputs of one shape (Keras's Add, Subtract, Multiply, ...)."""

    multiple_inputs = True
    exact_inputs = None   # Subtract takes exactly 2

    def build(self, input_shape):
        if len(input_shape) < 2 or (self.exact_inputs and len(input_shape) != self.exact_inputs):
            need = f"exactly {self.exact_inputs}" if self.exact_inputs else "at least 2"
            raise ValueError(f"{self.describe()} needs {need} inputs, got {len(input_shape)}")
        if any(s != input_shape[0] for s in input_shape):
            raise ValueError(f"{self.describe()} needs inputs of one shape, got "
                             + ", ".join(format_shape(s) for s in input_shape))

    def compute_output_shape(self, input_shape):
        return input_shape[0]

    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """Keras's: the OR of the inputs' masks when every input has one, else no mask."""
        return self.output_mask(LayerCall(self, self.backend), inputs, mask)

    def output_mask(self, call, inputs, mask):
        if mask is None or any(m is None for m in mask):
            return None
        b = self.backend
        out = call.buffer("mask", b.shape(mask[0]))
        b.binary(out, mask[0], mask[1], "maximum")
        for m in mask[2:]:
            b.binary(out, out, m, "maximum")
        return out


class Add(_Merge):
    """Elementwise sum of inputs of identical shape (residual connections)."""

    def forward(self, call, xs, training):
        b = self.backend
        out = call.buffer("out", b.shape(xs[0]))
        b.add(out, xs[0], xs[1])
        for x in xs[2:]:
            b.add(out, out, x)
        return out

    def backward(self, call, dout):
        # d(sum)/d(each input) is the identity: every input receives dout itself.
        return [dout] * len(self.input_shape)


class Subtract(_Merge):
    """inputs[0] - inputs[1] (exactly two inputs of one shape)."""

    exact_inputs = 2

    def forward(self, call, xs, training):
        b = self.backend
        out = call.buffer("out", b.shape(xs[0]))
        b.axpby(out, 1.0, xs[0], -1.0, xs[1])
        return out

    def backward(self, call, dout):
        b = self.backend
        negative = call.buffer("dx", b.shape(dout))
        b.axpby(negative, -1.0, dout, 0.0, dout)
        return [dout, negative]


class Average(_Merge):
    """The elementwise mean of the inputs."""

    def forward(self, call, xs, training):
        out = Add.forward(self, call, xs, training)
        self.backend.axpby(out, 1.0 / len(xs), out, 0.0, out)
        return out

    def backward(self, call, dout):
        b = self.backend
        dx = call.buffer("dx", b.shape(dout))
        b.axpby(dx, 1.0 / len(self.input_shape), dout, 0.0, dout)
        return [dx] * len(self.input_shape)


class Multiply(_Merge):
    """The elementwise product of the inputs. Two inputs may differ as Keras broadcasts them
    when one has 1 in leading axes where the other is longer, (H, W, C) * (1, 1, C): the
    squeeze-and-excitation product of MobileNetV3 and EfficientNet."""

    def build(self, input_shape):
        self._broadcast = None   # (index of the smaller input, how many leading axes it shares)
        if len(input_shape) == 2 and input_shape[0] != input_shape[1]:
            for small in (0, 1):
                small_shape, big_shape = input_shape[small], input_shape[1 - small]
                ones = [d == 1 and e != 1 for d, e in zip(small_shape, big_shape)]
                k = ones.count(True)
                if (k and len(big_shape) == len(small_shape)
                        and ones == [True] * k + [False] * (len(ones) - k)
                        and tuple(small_shape[k:]) == tuple(big_shape[k:])):
                    self._broadcast = small, k
                    return
        super().build(input_shape)

    def compute_output_shape(self, input_shape):
        if self._broadcast is not None:
            return input_shape[1 - self._broadcast[0]]
        return input_shape[0]

    def forward(self, call, xs, training):
        b = self.backend
        call.xs = list(xs)
        if self._broadcast is not None:
            return self._broadcast_forward(call, xs)
        out = call.buffer("out", b.shape(xs[0]))
        b.multiply(out, xs[0], xs[1])
        for x in xs[2:]:
            b.multiply(out, out, x)
        return out

    def _layout(self, shape):
        """(shared, own) sizes of a batch of the bigger input's `shape`."""
        k = self._broadcast[1]
        return count_elements(shape[1:1 + k]), count_elements(shape[1 + k:])

    def _broadcast_forward(self, call, xs):
        b = self.backend
        small = self._broadcast[0]
        big_shape = b.shape(xs[1 - small])
        n, (shared, own) = big_shape[0], self._layout(big_shape)
        out = call.buffer("out", (n, shared, own))
        b.channel_mask_multiply(out, b.reshape(xs[1 - small], (n, shared, own)),
                                b.reshape(xs[small], (n, own)))
        return b.reshape(out, big_shape)

    def backward(self, call, dout):
        # d(product)/d(x_i) = the product of the other inputs
        b = self.backend
        if self._broadcast is not None:
            return self._broadcast_backward(call, dout)
        dxs = []
        for i in range(len(call.xs)):
            dx = call.buffer(("dx", i), b.shape(dout))
            b.copy(dx, dout)
            for j, x in enumerate(call.xs):
                if j != i:
                    b.multiply(dx, dx, x)
            dxs.append(dx)
        return dxs

    def _broadcast_backward(self, call, dout):
        # the big input's gradient is dout * small; the small one's sums dout * big over the
        # shared axes (a global average pool of the product, times their size)
        b = self.backend
        small = self._broadcast[0]
        shape = b.shape(dout)
        n, (shared, own) = shape[0], self._layout(shape)
        dbig = call.buffer(("dx", 1 - small), (n, shared, own))
        b.channel_mask_multiply(dbig, b.reshape(dout, (n, shared, own)),
                                b.reshape(call.xs[small], (n, own)))
        product = call.buffer("product", shape)
        b.multiply(product, dout, call.xs[1 - small])
        dsmall = call.buffer(("dx", small), (n, own))
        b.global_avg_pool_forward(dsmall, b.reshape(product, (n, shared, 1, own)))
        b.axpby(dsmall, float(shared), dsmall, 0.0, dsmall)
        dxs = [None, None]
        dxs[1 - small] = b.reshape(dbig, shape)
        dxs[small] = b.reshape(dsmall, b.shape(call.xs[small]))
        return dxs


class _Extremum(_Merge):
    """Maximum / Minimum folded over the inputs with relu, as m' = m + sign * relu(sign *
    (x - m)): the running value's gradient passes where it stayed, the input's where it
    won (ties go to the earlier input)."""

    sign = 1.0

    def forward(self, call, xs, training):
        b = self.backend
        shape = b.shape(xs[0])
        call.gates = []
        m = xs[0]
        for k, x in enumerate(xs[1:]):
            gate = call.buffer(("gate", k), shape)
            b.axpby(gate, self.sign, x, -self.sign, m)
            b.activation_forward(gate, gate, "relu")
            out = call.buffer(("out", k), shape)
            b.axpby(out, 1.0, m, self.sign, gate)
            call.gates.append(gate)
            m = out
        return m

    def backward(self, call, dout):
        b = self.backend
        shape = b.shape(dout)
        dxs, g = [], dout
        for k in reversed(range(len(call.gates))):
            dx = call.buffer(("dx", k + 1), shape)
            b.activation_backward(dx, g, call.gates[k], "relu")
            dm = call.buffer(("dm", k), shape)
            b.axpby(dm, 1.0, g, -1.0, dx)
            dxs.append(dx)
            g = dm
        dxs.append(g)
        return dxs[::-1]


class Maximum(_Extremum):
    """The elementwise maximum of the inputs."""

    sign = 1.0


class Minimum(_Extremum):
    """The elementwise minimum of the inputs."""

    sign = -1.0


class Concatenate(Layer):
    """Concatenation along the last (channel) axis."""

    multiple_inputs = True

    def __init__(self, axis=-1, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.axis = axis

    def get_config(self):
        return dict(super().get_config(), axis=self.axis)

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(f"{self.describe()} needs at least 2 inputs, got {len(input_shape)}")
        rank = len(input_shape[0])
        if self.axis not in (-1, rank):
            raise ValueError(f"{self.describe()}: only the last axis (axis=-1) is supported, "
                             f"got axis={self.axis}")
        if any(len(s) != rank or s[:-1] != input_shape[0][:-1] for s in input_shape):
            raise ValueError(f"{self.describe()} needs inputs that match except in the last "
                             "axis, got " + ", ".join(format_shape(s) for s in input_shape))

    def compute_output_shape(self, input_shape):
        last = [s[-1] for s in input_shape]
        return tuple(input_shape[0][:-1]) + (None if None in last else sum(last),)

    def forward(self, call, xs, training):
        b = self.backend
        if self._unknown_dims:   # this batch's shapes, kept for backward
            call.x_shapes = [b.shape(x) for x in xs]
            shape = call.x_shapes[0][:-1] + (sum(s[-1] for s in call.x_shapes),)
        else:
            shape = (b.shape(xs[0])[0],) + self.output_shape
        out = call.buffer("out", shape)
        b.concat_forward(out, xs)
        return out

    def backward(self, call, dout):
        n = self.backend.shape(dout)[0]
        shapes = (call.x_shapes if self._unknown_dims
                  else [(n,) + tuple(s) for s in self.input_shape])
        dxs = [call.buffer(("dx", i), s) for i, s in enumerate(shapes)]
        self.backend.concat_backward(dxs, dout)
        return dxs


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"{cls.__name__}(**kwargs)(inputs), as keras.layers.{merge.__name__}."
    return merge


add, subtract, multiply = _functional(Add), _functional(Subtract), _functional(Multiply)
average, maximum, minimum = _functional(Average), _functional(Maximum), _functional(Minimum)


def concatenate(inputs, axis=-1, **kwargs):
    """Concatenate(axis, **kwargs)(inputs), as keras.layers.concatenate."""
    return Concatenate(axis=axis, **kwargs)(inputs)
