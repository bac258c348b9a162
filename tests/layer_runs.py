"""A layer run on its own, outside a model, as the layer tests drive it: one call context
(minidl.layers.calls.LayerCall), forward on it, then backward on the same context."""

from minidl.layers.calls import LayerCall, run_backward, run_forward


class LayerRun:
    """`run = LayerRun(layer)`; `y = run.forward(x, training)`; `dx = run.backward(dout)`.
    input_grad_needed=False runs the call as a model's first layer (no dL/dinput); options
    are the call's keyword arguments (attention's use_causal_mask); mask (a backend tensor
    (N, steps) of 1.0 / 0.0) is the Keras mask the call gets, as in a model."""

    def __init__(self, layer, input_grad_needed=True, options=None, mask=None):
        self.layer = layer
        self.call = None
        self.input_grad_needed = input_grad_needed
        self.options = dict(options or {})
        self.mask = mask

    def forward(self, x, training=False):
        if self.call is None or self.call.backend is not self.layer.backend:
            self.call = LayerCall(self.layer, self.layer.backend)
        self.call.input_grad_needed = self.input_grad_needed
        self.call.options = self.options
        self.call.mask = self.mask
        return run_forward(self.layer, self.call, x, training)

    def backward(self, dout):
        self.call.input_grad_needed = self.input_grad_needed
        return run_backward(self.layer, self.call, dout, False)
