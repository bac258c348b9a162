"""Masking (Keras's): marks the steps whose features all equal mask_value as padding.

For inputs (N, steps, features) the mask is (N, steps): 1.0 where some feature differs from
mask_value. The output is the input with the masked steps set to 0, as Keras's; the layers
after it that support masking pass the mask on, and the losses and metrics of an output
with a mask skip the masked steps (models/graph.py, models/model.py).
"""

from ..arguments import number
from .base import Layer


class Masking(Layer):
    supports_masking = True

    def __init__(self, mask_value=0.0, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self.mask_value = number(mask_value, "mask_value", self.describe())

    def get_config(self):
        return dict(super().get_config(), mask_value=self.mask_value)

    def build(self, input_shape):
        if len(input_shape) < 1:
            raise ValueError(f"{self.describe()} expects inputs (batch, ..., features), got a "
                             f"shape without features: (None,)")

    def forward(self, x, training):
        b = self.backend
        shape = b.shape(x)
        differs = self.buffer("differs", shape)
        b.binary(differs, x, float(self.mask_value), "not_equal")
        self._keep = self.buffer("keep", shape[:-1] + (1,))
        b.reduce(self._keep, differs, "max")   # 1.0 where any feature differs
        out = self.buffer("out", shape)
        b.binary(out, x, self._keep, "multiply")
        return out

    def output_has_mask(self, input_masked):
        return True

    def compute_mask(self, inputs, mask=None):
        shape = self.backend.shape(self._keep)
        return self.backend.reshape(self._keep, shape[:-1])

    def backward(self, dout):
        dx = self.buffer("dx", self.backend.shape(dout))
        self.backend.binary(dx, dout, self._keep, "multiply")
        return dx


__all__ = ["Masking"]
