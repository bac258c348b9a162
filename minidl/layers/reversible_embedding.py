"""Keras's ReversibleEmbedding: an Embedding that a language model also calls "in reverse"
(`layer(hidden, reverse=True)`) to turn its hidden states (..., output_dim) into logits over the
vocabulary (..., input_dim), with the transposed embeddings (tie_weights=True) or a weight
"reverse_embeddings" (output_dim, input_dim) of its own. `reverse` is an option of each call, so
one layer embeds in one place and projects in another, their gradients summed into the shared
weights. logit_soft_cap=c maps the logits to c tanh(logits / c), as Keras does."""

from ..arguments import number
from .embedding import Embedding


class ReversibleEmbedding(Embedding):
    call_options = ("reverse",)

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 reverse_dtype=None, logit_soft_cap=None, **kwargs):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer,
                         embeddings_constraint=embeddings_constraint, mask_zero=mask_zero, **kwargs)
        self.tie_weights = bool(tie_weights)
        if reverse_dtype not in (None, "float32"):
            raise ValueError(f"{self.describe()}: minidl computes in float32; reverse_dtype must be "
                             f"None or 'float32', got {reverse_dtype!r}")
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = (None if logit_soft_cap is None else
                               number(logit_soft_cap, "logit_soft_cap", self.describe(), low=0,
                                      low_inclusive=False))

    def get_config(self):
        return dict(super().get_config(), tie_weights=self.tie_weights,
                    reverse_dtype=self.reverse_dtype, logit_soft_cap=self.logit_soft_cap)

    def build(self, input_shape):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight("reverse_embeddings",
                                                      (self.output_dim, self.input_dim),
                                                      self.embeddings_initializer)

    def _fits(self, input_shape):
        # a reverse call takes hidden states (..., output_dim), not the indices it was built for
        return super()._fits(input_shape) or (
            len(input_shape) >= 1 and input_shape[-1] == self.output_dim)

    def options_output_shape(self, input_shape, options):
        if options.get("reverse"):
            return tuple(input_shape[:-1]) + (self.input_dim,)
        return None

    def node_output_has_mask(self, input_masked, options):
        return False if options.get("reverse") else self.output_has_mask(input_masked)

    def output_mask(self, call, inputs, mask):
        return None if call.options.get("reverse") else super().output_mask(call, inputs, mask)

    def forward(self, call, x, training):
        call.reverse = bool(call.options.get("reverse"))
        if not call.reverse:
            return super().forward(call, x, training)
        b = self.backend
        shape = b.shape(x)
        if shape[-1] != self.output_dim:
            raise ValueError(f"{self.describe()}: a reverse call takes (..., {self.output_dim}) "
                             f"hidden states, got shape {shape}")
        rows = call.rows = b.reshape(x, (_rows(shape), self.output_dim))
        logits = call.buffer("logits", (b.shape(rows)[0], self.input_dim))
        if self.tie_weights:
            b.gemm(logits, rows, self.embeddings.value, trans_b=True)
        else:
            b.gemm(logits, rows, self.reverse_embeddings.value)
        if self.logit_soft_cap is not None:
            cap = self.logit_soft_cap
            b.binary(logits, logits, 1.0 / cap, "multiply")
            b.unary(logits, logits, "tanh")
            call.tanh = call.buffer("tanh", b.shape(logits))
            b.copy(call.tanh, logits)
            b.binary(logits, logits, cap, "multiply")
        return b.reshape(logits, tuple(shape[:-1]) + (self.input_dim,))

    def backward(self, call, dout):
        b = self.backend
        if not call.reverse:
            if not self.tie_weights and self.trainable:
                # every call writes all the weights' gradients (a later call adds to them)
                b.fill(call.grad(self.reverse_embeddings), 0.0)
            return super().backward(call, dout)
        rows = call.rows
        count = b.shape(rows)[0]
        dz = b.reshape(dout, (count, self.input_dim))
        if self.logit_soft_cap is not None:
            # d(c tanh(z / c))/dz = 1 - tanh^2
            square = call.buffer("dtanh", (count, self.input_dim))
            b.multiply(square, call.tanh, call.tanh)
            b.axpby(square, -1.0, square, 0.0, square)
            b.binary(square, square, 1.0, "add")
            b.multiply(square, square, dz)
            dz = square
        dx = call.buffer("dx", (count, self.output_dim))
        if self.tie_weights:
            if self.trainable:
                b.gemm(call.grad(self.embeddings), dz, rows, trans_a=True)
            b.gemm(dx, dz, self.embeddings.value)
        else:
            if self.trainable:
                b.gemm(call.grad(self.reverse_embeddings), rows, dz, trans_a=True)
                b.fill(call.grad(self.embeddings), 0.0)   # no part in an untied reverse call
            b.gemm(dx, dz, self.reverse_embeddings.value, trans_b=True)
        return b.reshape(dx, tuple(b.shape(dout)[:-1]) + (self.output_dim,))


def _rows(shape):
    count = 1
    for d in shape[:-1]:
        count *= d
    return count


__all__ = ["ReversibleEmbedding"]
