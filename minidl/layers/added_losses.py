"""Layer.add_loss: losses a layer's `call` adds to what the model minimizes (Keras's endpoint
layers, a VAE's KL term).

While a call written with ops runs (custom_call.py), the losses it adds are collected for that
call: they are scalar Tensors on the tape. The model adds their values to the loss it reports
(penalties.py, as the regularization penalties) and their gradient, one per unit of loss (times
a LossScaleOptimizer's scale), flows back through the same tape as the outputs' (custom_call.
call_backward). Outside a collecting call (an eager layer(x)), they are the layer's `losses`,
as Keras keeps them, replaced at each call."""

import threading

from .. import ops

_state = threading.local()


class Collecting:
    """`with Collecting() as added:` the losses add_loss records in the block."""

    def __enter__(self):
        self.losses = []
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(self.losses)
        return self.losses

    def __exit__(self, *exc):
        _state.stack.pop()
        if _state.stack:   # a call inside another's: its losses are the outer call's too
            _state.stack[-1].extend(self.losses)


def add(layer, loss):
    """Record `loss` (a scalar, or values summed to one) for the current call of `layer`."""
    value = loss if ops.is_tensor(loss) else ops.convert_to_tensor(loss)
    value = ops.cast(value, "float32")
    if value.shape not in ((), (1,)):
        value = ops.sum(value)
    value = ops.reshape(value, ())
    stack = getattr(_state, "stack", None)
    if stack:
        stack[-1].append(value)
    else:
        eager = getattr(layer, "_eager_losses", None)
        if eager is None:
            eager = layer._eager_losses = []
        eager.append(value)
