"""Activation layers with arguments of their own: ELU, Softmax and PReLU (Keras 3)."""

from ..arguments import number
from .base import Layer, count_elements, format_shape
from .core import Activation


class ELU(Activation):
    """x for x > 0, alpha * (e^x - 1) otherwise (Keras ELU, alpha=1.0)."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, alpha=1.0, name=None, trainable=True):
        super().__init__("elu", name=name, trainable=trainable)
        self.alpha = number(alpha, "alpha", self.describe())

    def get_config(self):
        return {"alpha": self.alpha, "name": self.name, "trainable": self.trainable}


class Softmax(Activation):
    """Softmax along `axis` (Keras Softmax, axis=-1; a negative axis counts from the end, a
    positive one counts the batch axis as 0). The backend's softmax works on the last axis:
    another axis is moved there and back with transposes."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, axis=-1, name=None, trainable=True):
        super().__init__("softmax", name=name, trainable=trainable)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"{self.describe()}: axis must be an int, got {axis!r}")
        self.axis = axis

    def get_config(self):
        return {"axis": self.axis, "name": self.name, "trainable": self.trainable}

    def build(self, input_shape):
        rank = len(input_shape) + 1
        axis = self.axis + rank if self.axis < 0 else self.axis
        if not 1 <= axis < rank:
            raise ValueError(f"{self.describe()}: axis={self.axis} is not a feature axis of inputs of "
                             f"shape {format_shape(input_shape)}")
        # the permutation that moves `axis` last (its own inverse is computed once too)
        self._to_last = None if axis == rank - 1 else tuple(a for a in range(rank) if a != axis) + (axis,)
        if self._to_last:
            self._from_last = tuple(self._to_last.index(a) for a in range(rank))
            # a model must not fuse this softmax into its loss (the loss scores the last axis)
            self.activation = "linear"

    def _moved(self, call, role, t, axes):
        b = self.backend
        shape = b.shape(t)
        out = call.buffer(role, tuple(shape[a] for a in axes))
        b.transpose(out, t, axes)
        return out

    def forward(self, call, x, training):
        if self._to_last is None:
            return self._activate(call, x)
        b = self.backend
        moved = self._moved(call, "moved_x", x, self._to_last)
        call.moved_y = call.buffer("moved_y", b.shape(moved))
        b.activation_forward(call.moved_y, moved, "softmax")
        return self._moved(call, "out", call.moved_y, self._from_last)

    def backward(self, call, dout):
        if self._to_last is None:
            return self._deactivate(call, dout)
        b = self.backend
        moved = self._moved(call, "moved_dout", dout, self._to_last)
        dz = call.buffer("moved_dz", b.shape(moved))
        b.activation_backward(dz, moved, call.moved_y, "softmax")
        return self._moved(call, "dx", dz, self._from_last)


class PReLU(Layer):
    """x for x > 0, alpha * x otherwise, with a learned alpha (Keras PReLU). alpha has the input's
    shape (batch axis excluded) with the shared_axes set to 1. With leading shared axes
    (shared_axes=[1, 2] on images: one slope per channel) the backend sees x as
    (rows, alpha.size); other shared axes ([3] on images: one slope per pixel) broadcast alpha to
    the sample's shape each step and sum its gradient back over them."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, alpha_initializer="zeros", shared_axes=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.alpha_initializer = alpha_initializer
        if shared_axes is None:
            axes = ()
        elif isinstance(shared_axes, int) and not isinstance(shared_axes, bool):
            axes = (shared_axes,)
        else:
            axes = tuple(shared_axes)
        if not all(isinstance(a, int) and not isinstance(a, bool) and a >= 1 for a in axes):
            raise ValueError(f"{self.describe()}: shared_axes must be None or ints >= 1 (axes counted "
                             f"with the batch axis as 0), got {shared_axes!r}")
        self.shared_axes = tuple(sorted(set(axes)))

    def get_config(self):
        return dict(super().get_config(), alpha_initializer=str(self.alpha_initializer),
                    shared_axes=list(self.shared_axes) if self.shared_axes else None)

    def build(self, input_shape):
        rank = len(input_shape)
        if any(a > rank for a in self.shared_axes):
            raise ValueError(f"{self.describe()}: shared_axes {list(self.shared_axes)} do not fit inputs "
                             f"of shape {format_shape(input_shape)}")
        shape = tuple(1 if i + 1 in self.shared_axes else d for i, d in enumerate(input_shape))
        self.alpha = self.add_weight("alpha", shape, self.alpha_initializer)
        self._k = count_elements(shape)
        self._broadcast = self.shared_axes != tuple(range(1, len(self.shared_axes) + 1))

    def _slopes(self, call, shape):
        """(slopes (k,), k): alpha as the ops see it for a batch of `shape`."""
        b = self.backend
        if not self._broadcast:
            return b.reshape(self.alpha.value, (self._k,)), self._k
        full = call.buffer("alpha_full", (1,) + tuple(shape[1:]))
        b.binary(full, b.reshape(self.alpha.value, (1,) + self.alpha.shape), 0.0, "add")
        k = count_elements(shape[1:])
        return b.reshape(full, (k,)), k

    def forward(self, call, x, training):
        b = self.backend
        shape = b.shape(x)
        call.alpha_rows, k = self._slopes(call, shape)
        call.x2 = b.reshape(x, (count_elements(shape) // k, k))
        out = call.buffer("out", b.shape(call.x2))
        b.prelu_forward(out, call.x2, call.alpha_rows)
        return b.reshape(out, shape)

    def backward(self, call, dout):
        b = self.backend
        shape = b.shape(dout)
        rows, k = b.shape(call.x2)
        dx = call.buffer("dx", (rows, k))
        # a frozen layer's op writes dalpha too: into scratch nobody reads
        dalpha = (call.grad(self.alpha) if self.alpha.grad is not None and self.trainable
                  else call.buffer("dalpha", self.alpha.shape))
        per_slope = call.buffer("dalpha_full", (k,)) if self._broadcast else b.reshape(dalpha, (k,))
        b.prelu_backward(dx, per_slope, b.reshape(dout, (rows, k)), call.x2, call.alpha_rows)
        if self._broadcast:   # sum over the shared axes
            b.reduce(b.reshape(dalpha, (1,) + self.alpha.shape),
                     b.reshape(per_slope, (1,) + tuple(shape[1:])), "sum")
        return b.reshape(dx, shape)


__all__ = ["ELU", "Softmax", "PReLU"]
