"""TorchSGD: torch.optim.SGD's update rule, for recipes written for PyTorch.

Keras's SGD (classic.py) keeps a velocity with the learning rate folded in
(v = momentum * v - lr * g; w += v) and decays the weights apart from the gradient
(w -= lr * weight_decay * w). torch.optim.SGD keeps a buffer of plain gradients and applies the
rate at the step, and its weight decay is an L2 term added to the gradient:

    g = g + weight_decay * w
    buf = momentum * buf + g                (buf = g at the first step)
    w -= lr * (g + momentum * buf)          nesterov=True
    w -= lr * buf                           nesterov=False

With a constant rate the two are the same algorithm with rescaled hyperparameters; under a
learning-rate schedule they are not (Keras's velocity remembers the rates of past steps), so a
recipe tuned with PyTorch's SGD and a schedule (airbench94) needs this form to be reproduced.
A separate class rather than an SGD(form=...) switch: Keras's SGD keeps exactly Keras's
config, and this one's weight_decay means what PyTorch's means.

learning_rate_multipliers scale the rate of a weight by m and divide its weight decay by m
(the base class's contract), which is exactly a PyTorch parameter group with lr * m and
weight_decay / m (airbench's BatchNorm biases). The update runs as axpby ops on the backend
(three or four passes over the weight; a fused op would make it one).
"""

from ..arguments import number as _number
from .base import Optimizer


class TorchSGD(Optimizer):
    """torch.optim.SGD(lr, momentum, weight_decay, nesterov) with minidl's common optimizer
    arguments (clipping, use_ema, learning_rate_multipliers, schedules). The gradient tensor
    is changed in place (weight decay added), as clipping changes it."""

    _slots = ("momentum_buffer",)

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, **kwargs)
        self.momentum = _number(momentum, "momentum", "TorchSGD", low=0.0, high=1.0)
        if not isinstance(nesterov, bool):
            raise TypeError(f"TorchSGD: nesterov must be a bool, got {nesterov!r}")
        if nesterov and self.momentum == 0.0:
            raise ValueError("TorchSGD: nesterov=True requires a momentum > 0 (as torch.optim.SGD)")
        self.nesterov = nesterov

    def _active_slots(self):
        return (self._slots if self.momentum != 0.0 else ()) + self._ema_slot()

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        if weight_decay:
            backend.axpby(grad, 1.0, grad, weight_decay, weight)
        step = grad
        if self.momentum != 0.0:
            # zero-initialized, so the first step leaves buf = g exactly as PyTorch's clone
            buffer = state["momentum_buffer"]
            backend.axpby(buffer, self.momentum, buffer, 1.0, grad)
            if self.nesterov:
                backend.axpby(grad, 1.0, grad, self.momentum, buffer)
            else:
                step = buffer
        backend.axpby(weight, 1.0, weight, -lr, step)

    def get_config(self):
        config = super().get_config()
        config.update(momentum=self.momentum, nesterov=self.nesterov)
        return config
