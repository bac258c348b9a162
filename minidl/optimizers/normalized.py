"""Keras 3's Lamb, Adafactor and Muon: optimizers whose step depends on a norm or a
factorization of the whole weight tensor (Lamb's trust ratio, Adafactor's row and column
second moments and RMS clipping, Muon's Newton-Schulz orthogonalization).

Their steps are composed from the backend's tensor ops through minidl.ops (elementwise ops,
reductions, matmul): everything stays on the backend, but each step makes several passes
over the tensor instead of the classic optimizers' one fused op (none is fused yet).
Formulas, defaults and configs are those of keras/src/optimizers/{lamb,adafactor,muon}.py.
"""

import math

from .. import autodiff, ops
from ..arguments import number as _number
from ..autodiff import Tensor
from .base import Optimizer


class _Composed(Optimizer):
    """Runs _step(w, g, state, lr) with minidl.ops on the backend's tensors and copies the new
    weight back in place; decoupled weight decay first, as Keras applies it."""

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        with autodiff.on_backend(backend), autodiff.recording(None):
            w = Tensor(weight, backend)
            if weight_decay:
                backend.axpby(weight, 1.0 - lr * weight_decay, weight, 0.0, weight)
            tensors = {slot: Tensor(value, backend) for slot, value in state.items()}
            new_w, new_state = self._step(w, Tensor(grad, backend), tensors, lr)
            for slot, value in new_state.items():
                backend.copy(state[slot], ops.broadcast_to(value, tensors[slot].shape).value)
            backend.copy(weight, new_w.value)

    def _step(self, w, g, state, lr):
        raise NotImplementedError


class Lamb(_Composed):
    """Adam's step m_hat / (sqrt(v_hat) + epsilon) scaled by the trust ratio ||w|| / ||step||
    (1 where either norm is 0), per weight tensor (You et al., 2019)."""

    _slots = ("momentum", "velocity")
    _non_negative_slots = ("velocity",)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1 = _number(beta_1, "beta_1", "Lamb", low=0.0, high=1.0)
        self.beta_2 = _number(beta_2, "beta_2", "Lamb", low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", "Lamb", low=0.0)

    def _step(self, w, g, state, lr):
        t = self.iterations + 1
        m = state["momentum"] + (g - state["momentum"]) * (1.0 - self.beta_1)
        v = state["velocity"] + (g * g - state["velocity"]) * (1.0 - self.beta_2)
        update = (m / (1.0 - self.beta_1 ** t)) / (ops.sqrt(v / (1.0 - self.beta_2 ** t)) + self.epsilon)
        w_norm = ops.sqrt(ops.sum(w * w))
        u_norm = ops.sqrt(ops.sum(update * update))
        ratio = ops.where(ops.greater(w_norm, 0.0),
                          ops.where(ops.greater(u_norm, 0.0), w_norm / ops.maximum(u_norm, 1e-30), 1.0), 1.0)
        return w - update * (ratio * lr), {"momentum": m, "velocity": v}

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config


class Adafactor(_Composed):
    """Adam-like steps with a factored second moment: for a weight of rank >= 2, running means
    of g^2 over its last axis (r) and over its second-to-last (c) stand for the full matrix
    (v = r c / mean(r)); steps are scaled by max(epsilon_2, RMS(w)) and their RMS clipped at
    clip_threshold (Shazeer and Stern, 2018)."""

    _slots = ("r", "c", "v")

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = "Adafactor"
        self.beta_2_decay = _number(beta_2_decay, "beta_2_decay", owner)
        self.epsilon_1 = _number(epsilon_1, "epsilon_1", owner, low=0.0)
        self.epsilon_2 = _number(epsilon_2, "epsilon_2", owner, low=0.0)
        self.clip_threshold = _number(clip_threshold, "clip_threshold", owner, low=0.0, low_inclusive=False)
        if not isinstance(relative_step, bool):
            raise TypeError(f"{owner}: relative_step must be a bool, got {relative_step!r}")
        self.relative_step = relative_step

    def _slot_shape(self, slot, shape):
        if len(shape) < 2:
            return () if slot in ("r", "c") else shape     # Keras keeps unused scalars here
        return {"r": shape[:-1], "c": shape[:-2] + shape[-1:], "v": shape}[slot]

    @staticmethod
    def _rms(x):
        return ops.sqrt(ops.mean(x * x))

    def _step(self, w, g, state, lr):
        t = float(self.iterations + 1)
        if self.relative_step and not self._uses_schedule():
            lr = min(lr, 1.0 / math.sqrt(t))
        rho = min(lr, 1.0 / math.sqrt(t))
        alpha = ops.maximum(self._rms(w), self.epsilon_2) * rho
        squared = g * g + self.epsilon_1
        beta_2 = 1.0 - t ** self.beta_2_decay
        new = {}
        if len(w.shape) >= 2:
            new["r"] = state["r"] * beta_2 + ops.mean(squared, axis=-1) * (1.0 - beta_2)
            new["c"] = state["c"] * beta_2 + ops.mean(squared, axis=-2) * (1.0 - beta_2)
            new["v"] = (ops.expand_dims(new["r"] / ops.mean(new["r"], axis=-1, keepdims=True), -1)
                        * ops.expand_dims(new["c"], -2))
        else:
            new["v"] = state["v"] * beta_2 + squared * (1.0 - beta_2)
        u = g / ops.sqrt(new["v"])
        u = u / ops.maximum(self._rms(u) / self.clip_threshold, 1.0)
        return w - u * alpha, new

    def _uses_schedule(self):
        return not isinstance(self.learning_rate, (int, float))

    def get_config(self):
        config = super().get_config()
        config.update(beta_2_decay=self.beta_2_decay, epsilon_1=self.epsilon_1, epsilon_2=self.epsilon_2,
                      clip_threshold=self.clip_threshold, relative_step=self.relative_step)
        return config
