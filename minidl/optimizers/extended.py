"""Keras 3's Adadelta, Adamax, Nadam, AdamW, Lion and Ftrl: names, defaults, state slots and
update rules as keras/src/optimizers/*.py; each step is one fused backend op per weight."""

import numbers

from ..arguments import number as _number
from .base import Optimizer
from .classic import Adam


class Adadelta(Optimizer):
    """acc_grad = rho acc_grad + (1-rho) g^2; delta = -sqrt(acc_delta + eps) g / sqrt(acc_grad + eps);
    acc_delta = rho acc_delta + (1-rho) delta^2; w += lr delta."""

    _slots = ("accumulated_grad", "accumulated_delta_var")
    _non_negative_slots = _slots

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho = _number(rho, "rho", "Adadelta", low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", "Adadelta", low=0.0)

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.adadelta_update(weight, grad, state["accumulated_grad"], state["accumulated_delta_var"], lr,
                                self.rho, self.epsilon, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(rho=self.rho, epsilon=self.epsilon)
        return config


class _AdamFamily(Optimizer):
    """The beta_1, beta_2, epsilon arguments shared by Adamax and Nadam."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = type(self).__name__
        self.beta_1 = _number(beta_1, "beta_1", owner, low=0.0, high=1.0)
        self.beta_2 = _number(beta_2, "beta_2", owner, low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", owner, low=0.0)

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config


class Adamax(_AdamFamily):
    """Adam with the infinity norm: m += (g - m)(1-b1); u = max(b2 u, |g|);
    w -= lr / (1 - b1^t) * m / (u + epsilon) at 1-based step t."""

    _slots = ("momentum", "norm")
    _non_negative_slots = ("norm",)

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.adamax_update(weight, grad, state["momentum"], state["norm"], lr, self.beta_1, self.beta_2,
                              self.epsilon, self.iterations + 1, weight_decay)


class Nadam(_AdamFamily):
    """Adam with Nesterov momentum and Keras's momentum schedule u_t = b1 (1 - 0.5 * 0.96^t).
    Keras keeps the running product of u_t in a variable; it depends only on the step, so it is
    recomputed from `iterations` here (a resumed run gets the same value)."""

    _slots = ("momentum", "velocity")
    _non_negative_slots = ("velocity",)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self._u_product_at = (0, 1.0)   # (step, product of u_s for s <= step)

    def _u_product(self, step):
        done, product = self._u_product_at
        if done > step:
            done, product = 0, 1.0
        for s in range(done + 1, step + 1):
            product *= self.beta_1 * (1.0 - 0.5 * 0.96 ** s)
        self._u_product_at = (step, product)
        return product

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        step = self.iterations + 1
        backend.nadam_update(weight, grad, state["momentum"], state["velocity"], lr, self.beta_1, self.beta_2,
                             self.epsilon, step, self._u_product(step), weight_decay)


class AdamW(Adam):
    """Adam with decoupled weight decay (Keras's default 0.004; it must be a number)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW: argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay=weight_decay, **kwargs)


class Lion(Optimizer):
    """w -= lr sign(b1 m + (1-b1) g); m = b2 m + (1-b2) g."""

    _slots = ("momentum",)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate, **kwargs)
        if isinstance(beta_1, bool) or not isinstance(beta_1, numbers.Real) or not 0.0 < beta_1 <= 1.0:
            raise ValueError(f"Lion: argument `beta_1` must be in the (0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1!r}")
        self.beta_1 = float(beta_1)
        self.beta_2 = _number(beta_2, "beta_2", "Lion", low=0.0, high=1.0)

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.lion_update(weight, grad, state["momentum"], lr, self.beta_1, self.beta_2, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2)
        return config


class Ftrl(Optimizer):
    """Follow The Regularized Leader (McMahan et al.), Keras's formulation with l1, l2,
    l2-shrinkage regularization and beta."""

    _slots = ("accumulator", "linear")
    _non_negative_slots = ("accumulator",)

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = "Ftrl"
        self.learning_rate_power = _number(learning_rate_power, "learning_rate_power", owner, high=0.0,
                                           high_inclusive=True)
        self.initial_accumulator_value = _number(initial_accumulator_value, "initial_accumulator_value",
                                                 owner, low=0.0)
        self.l1_regularization_strength = _number(l1_regularization_strength, "l1_regularization_strength",
                                                  owner, low=0.0)
        self.l2_regularization_strength = _number(l2_regularization_strength, "l2_regularization_strength",
                                                  owner, low=0.0)
        self.l2_shrinkage_regularization_strength = _number(
            l2_shrinkage_regularization_strength, "l2_shrinkage_regularization_strength", owner, low=0.0)
        self.beta = _number(beta, "beta", owner)

    def _initial_slot_value(self, slot):
        return self.initial_accumulator_value if slot == "accumulator" else 0.0

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        l2 = self.l2_regularization_strength + self.beta / (2.0 * lr)
        backend.ftrl_update(weight, grad, state["accumulator"], state["linear"], lr, self.learning_rate_power,
                            self.l1_regularization_strength, l2, self.l2_shrinkage_regularization_strength,
                            weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update(learning_rate_power=self.learning_rate_power,
                      initial_accumulator_value=self.initial_accumulator_value,
                      l1_regularization_strength=self.l1_regularization_strength,
                      l2_regularization_strength=self.l2_regularization_strength,
                      l2_shrinkage_regularization_strength=self.l2_shrinkage_regularization_strength,
                      beta=self.beta)
        return config
