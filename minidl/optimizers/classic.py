"""Keras 3's SGD, RMSprop, Adam and Adagrad (the common arguments are Optimizer's)."""

from ..arguments import number as _number
from .base import Optimizer


class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum:
    velocity = momentum * velocity - lr * g; w += velocity."""

    _slots = ("momentum",)

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = _number(momentum, "momentum", "SGD", low=0.0, high=1.0)
        if not isinstance(nesterov, bool):
            raise TypeError(f"SGD: nesterov must be a bool, got {nesterov!r}")
        self.nesterov = nesterov

    def _active_slots(self):
        # Without momentum Keras keeps no velocity; the backend op takes None then.
        return (self._slots if self.momentum != 0.0 else ()) + self._ema_slot()

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.sgd_update(weight, grad, state.get("momentum"), lr, self.momentum, self.nesterov,
                           weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(momentum=self.momentum, nesterov=self.nesterov)
        return config


class RMSprop(Optimizer):
    """ms = rho * ms + (1 - rho) * g^2; w -= lr * g / sqrt(ms + epsilon) (through a
    momentum accumulator when momentum > 0)."""

    _slots = ("velocity", "momentum")
    _non_negative_slots = ("velocity",)

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho = _number(rho, "rho", "RMSprop", low=0.0, high=1.0)
        self.momentum = _number(momentum, "momentum", "RMSprop", low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", "RMSprop", low=0.0)

    def _active_slots(self):
        return (self._slots if self.momentum != 0.0 else ("velocity",)) + self._ema_slot()

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.rmsprop_update(weight, grad, state["velocity"], state.get("momentum"), lr, self.rho,
                               self.momentum, self.epsilon, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(rho=self.rho, momentum=self.momentum, epsilon=self.epsilon)
        return config


class Adam(Optimizer):
    """Adam with Keras's bias correction folded into the step size at 1-based step t;
    amsgrad=True divides by the running maximum of the second moment (Keras's velocity_hat
    slot), in one fused backend update."""

    _slots = ("momentum", "velocity", "velocity_hat")
    _non_negative_slots = ("velocity", "velocity_hat")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = type(self).__name__
        self.beta_1 = _number(beta_1, "beta_1", owner, low=0.0, high=1.0)
        self.beta_2 = _number(beta_2, "beta_2", owner, low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", owner, low=0.0)
        if not isinstance(amsgrad, bool):
            raise TypeError(f"{owner}: amsgrad must be a bool, got {amsgrad!r}")
        self.amsgrad = amsgrad

    def _active_slots(self):
        return (self._slots if self.amsgrad else self._slots[:2]) + self._ema_slot()

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        if self.amsgrad:
            backend.amsgrad_update(weight, grad, state["momentum"], state["velocity"],
                                   state["velocity_hat"], lr, self.beta_1, self.beta_2,
                                   self.epsilon, self.iterations + 1, weight_decay)
            return
        backend.adam_update(weight, grad, state["momentum"], state["velocity"], lr, self.beta_1,
                            self.beta_2, self.epsilon, self.iterations + 1, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon,
                      amsgrad=self.amsgrad)
        return config


class Adagrad(Optimizer):
    """acc += g^2; w -= lr * g / sqrt(acc + epsilon); acc starts at initial_accumulator_value."""

    _slots = ("accumulator",)
    _non_negative_slots = ("accumulator",)

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value = _number(initial_accumulator_value,
                                                 "initial_accumulator_value", "Adagrad", low=0.0)
        self.epsilon = _number(epsilon, "epsilon", "Adagrad", low=0.0)

    def _initial_slot_value(self, slot):
        return self.initial_accumulator_value if slot == "accumulator" else 0.0

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.adagrad_update(weight, grad, state["accumulator"], lr, self.epsilon,
                               weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(initial_accumulator_value=self.initial_accumulator_value, epsilon=self.epsilon)
        return config
