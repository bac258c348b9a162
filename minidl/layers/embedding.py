"""Embedding (Keras 3's): integer indices -> rows of the weight "embeddings" (input_dim, output_dim).

The forward is the backend's take (a gather of rows), the backward its take_backward (the rows'
gradients scatter-added: an index seen twice gets both). Models feed inputs as float32, which
holds every integer up to 2**24 exactly; the layer casts them to int32 (float arrays of integers
are accepted, as in Keras, and truncated toward zero). An index outside [0, input_dim) is an
error naming the layer and the index, as Keras's gather refuses it. mask_zero=True makes index 0
padding: the output's mask (N, ...) is 1.0 where the index is not 0 (Keras's compute_mask).
"""

from .. import constraints, initializers, regularizers
import numpy as np

from .. import ops
from .base import Layer, count_elements
from .calls import LayerCall
from .custom_call import is_eager


def _positive_int(value, what, owner):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{owner}: {what} must be a positive int, got {value!r}")
    return value


class Embedding(Layer):
    """Turns indices (N, ...) into vectors (N, ..., output_dim); input_length is ignored (Keras 3
    dropped it)."""

    _own_arguments = ("input_dim",)   # the vocabulary size here, not an input shape (LayerMeta)

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, activity_regularizer=None,
                 input_length=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer)
        self.input_dim = _positive_int(input_dim, "input_dim", self.describe())
        self.output_dim = _positive_int(output_dim, "output_dim", self.describe())
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self._initial_weights = weights

    def get_config(self):
        return dict(super().get_config(), input_dim=self.input_dim, output_dim=self.output_dim,
                    embeddings_initializer=initializers.serialize(self.embeddings_initializer),
                    embeddings_regularizer=regularizers.serialize(self.embeddings_regularizer),
                    activity_regularizer=regularizers.serialize(self.activity_regularizer),
                    embeddings_constraint=constraints.serialize(self.embeddings_constraint),
                    mask_zero=self.mask_zero)

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        if self._initial_weights is not None:   # Keras's weights=[matrix]
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def output_has_mask(self, input_masked):
        return self.mask_zero

    def compute_mask(self, inputs, mask=None):
        if is_eager(inputs) or isinstance(inputs, (np.ndarray, list, tuple)):
            # Tensors inside a custom layer's call, or host arrays (Keras's compute_mask on
            # data): the mask is a Tensor made with ops, as the call's own values
            return ops.not_equal(inputs, 0) if self.mask_zero else None
        return self.output_mask(LayerCall(self, self.backend), inputs, mask)

    def output_mask(self, call, inputs, mask):
        if not self.mask_zero:
            return None
        b = self.backend
        out = call.buffer("mask", b.shape(inputs))
        if str(getattr(inputs, "dtype", "float32")) != "float32":   # int indices (compute_mask)
            floats = call.buffer("mask_indices", b.shape(inputs))
            b.cast(floats, inputs)
            inputs = floats
        b.binary(out, inputs, 0.0, "not_equal")
        return out

    def _check_range(self, call, x):
        """Indices outside [0, input_dim) are refused (two scalars come back from the backend)."""
        b = self.backend
        rank = len(b.shape(x))
        low, high = call.buffer("low", (1,) * rank), call.buffer("high", (1,) * rank)
        b.reduce(low, x, "min")
        b.reduce(high, x, "max")
        low, high = float(b.to_numpy(low).ravel()[0]), float(b.to_numpy(high).ravel()[0])
        if not (low > -1 and high < self.input_dim):   # NaN fails too; casting truncates
            bad = low if not low > -1 else high
            raise ValueError(f"{self.describe()}: input indices must be in [0, {self.input_dim}) "
                             f"(input_dim={self.input_dim}), got {bad:g} in inputs of shape "
                             f"{b.shape(x)}")

    def forward(self, call, x, training):
        b = self.backend
        shape = b.shape(x)
        self._check_range(call, x)
        count = count_elements(shape)
        call.indices = call.buffer("indices", (count,), "int32")
        b.cast(call.indices, b.reshape(x, (count,)))
        out = call.buffer("out", (count, self.output_dim))
        b.take(out, self.embeddings.value, call.indices, 0)
        return b.reshape(out, shape + (self.output_dim,))

    def backward(self, call, dout):
        b = self.backend
        if self.trainable:
            grad = call.grad(self.embeddings)
            b.fill(grad, 0.0)
            count = count_elements(b.shape(call.indices))
            b.take_backward(grad, b.reshape(dout, (count, self.output_dim)), call.indices, 0)
        return None   # integer inputs have no gradient


__all__ = ["Embedding"]
