"""Masking (Keras's): marks the steps whose features all equal mask_value as padding.

For inputs (N, steps, features) the mask is (N, steps): 1.0 where some feature differs from
mask_value. The output is the input with the masked steps set to 0, as Keras's; the layers
after it that support masking pass the mask on, and the losses and metrics of an output
with a mask skip the masked steps (models/graph.py, models/model.py).
"""

import numpy as np

from .. import ops
from ..arguments import number
from .base import Layer
from .calls import LayerCall
from .custom_call import is_eager


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

    def _keep(self, call, x):
        """call.keep (N, ..., 1): 1.0 where some feature of x differs from mask_value."""
        b = self.backend
        shape = b.shape(x)
        differs = call.buffer("differs", shape)
        b.binary(differs, x, float(self.mask_value), "not_equal")
        call.keep = call.buffer("keep", shape[:-1] + (1,))
        b.reduce(call.keep, differs, "max")   # 1.0 where any feature differs
        return call.keep

    def forward(self, call, x, training):
        b = self.backend
        out = call.buffer("out", b.shape(x))
        b.binary(out, x, self._keep(call, x), "multiply")
        return out

    def output_has_mask(self, input_masked):
        return True

    def compute_mask(self, inputs, mask=None):
        if is_eager(inputs) or isinstance(inputs, (np.ndarray, list, tuple)):
            # Tensors inside a custom layer's call, or host arrays (Keras's compute_mask on
            # data): the mask is a Tensor made with ops, as the call's own values
            return ops.any(ops.not_equal(inputs, self.mask_value), axis=-1)
        keep = self._keep(LayerCall(self, self.backend), inputs)
        return self.backend.reshape(keep, self.backend.shape(keep)[:-1])

    def output_mask(self, call, inputs, mask):
        return self.backend.reshape(call.keep, self.backend.shape(call.keep)[:-1])

    def backward(self, call, dout):
        dx = call.buffer("dx", self.backend.shape(dout))
        self.backend.binary(dx, dout, call.keep, "multiply")
        return dx


__all__ = ["Masking"]
