"""Keras 3's Lamb, Adafactor, Muon and ScheduleFreeAdamW: optimizers whose step depends on a
norm or a factorization of the whole weight tensor (Lamb's trust ratio, Adafactor's row and
column second moments and RMS clipping, Muon's Newton-Schulz orthogonalization), or that
keep two iterates (ScheduleFreeAdamW).

Their steps are composed from the backend's tensor ops through minidl.ops (elementwise ops,
reductions, matmul): everything stays on the backend, but each step makes several passes
over the tensor instead of the classic optimizers' one fused op (none is fused yet).
Formulas, defaults and configs are those of keras/src/optimizers/{lamb,adafactor,muon,
schedule_free_adamw}.py.
"""

import math
import re

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

    def _slot_shape(self, slot, index, shape):
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


class Muon(_Composed):
    """Momentum orthogonalized by Newton-Schulz iterations for 2-D weights (Jordan et al.,
    2024), its step scaled by sqrt(max(rows, cols)) * rms_rate (Moonlight); AdamW (at
    learning_rate * adam_lr_ratio, with adam_weight_decay) for the other weights: those not
    2-D, embeddings (exclude_embeddings: "embedding" in the weight's path) and those whose
    path matches one of exclude_layers (regular expressions)."""

    _slots = ("momentum", "velocity")

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, adam_weight_decay=0.004,
                 epsilon=1e-7, weight_decay=0.004, exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
                 muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95, ns_steps=5, nesterov=True,
                 rms_rate=0.2, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, **kwargs)
        owner = "Muon"
        self.adam_beta_1 = _number(adam_beta_1, "adam_beta_1", owner, low=0.0, high=1.0)
        self.adam_beta_2 = _number(adam_beta_2, "adam_beta_2", owner, low=0.0, high=1.0)
        self.adam_weight_decay = _number(adam_weight_decay, "adam_weight_decay", owner, low=0.0, allow_none=True)
        self.epsilon = _number(epsilon, "epsilon", owner, low=0.0)
        self.muon_a, self.muon_b, self.muon_c = (_number(muon_a, "muon_a", owner), _number(muon_b, "muon_b", owner),
                                                 _number(muon_c, "muon_c", owner))
        self.adam_lr_ratio = _number(adam_lr_ratio, "adam_lr_ratio", owner, low=0.0)
        self.momentum = _number(momentum, "momentum", owner, low=0.0, high=1.0, high_inclusive=True)
        if isinstance(ns_steps, bool) or not isinstance(ns_steps, int) or ns_steps < 0:
            raise ValueError(f"{owner}: ns_steps must be an integer >= 0, got {ns_steps!r}")
        self.ns_steps = ns_steps
        for argument, value in (("nesterov", nesterov), ("exclude_embeddings", exclude_embeddings)):
            if not isinstance(value, bool):
                raise TypeError(f"{owner}: {argument} must be a bool, got {value!r}")
        self.nesterov, self.exclude_embeddings = nesterov, exclude_embeddings
        self.exclude_layers = list(exclude_layers or [])
        self.rms_rate = _number(rms_rate, "rms_rate", owner, low=0.0, allow_none=True)

    def _uses_adam(self, index):
        shape, path = self._shapes[index], self._weight_paths[index] or ""
        if len(shape) != 2:
            return True
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def _slot_shape(self, slot, index, shape):
        # Muon's 2-D weights keep no Adam velocity (an unused scalar stands in for it)
        return shape if slot == "momentum" or self._uses_adam(index) else ()

    def build(self, backend, weights, names=None):
        weights = list(weights)
        self._weight_paths = list(names) if names is not None else [None] * len(weights)
        self._shapes = [tuple(backend.shape(w)) for w in weights]   # for _slot_shape during build
        super().build(backend, weights, names)
        # Keras: Adam's weights decay by adam_weight_decay, Muon's by weight_decay
        self._decays = [0.0 if not self._uses_weight_decay(w, name) else
                        (self.adam_weight_decay if self._uses_adam(i) else self.weight_decay) or 0.0
                        for i, (w, name) in enumerate(zip(weights, self._weight_paths))]

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        self._index = self._positions[id(weight)]
        super()._update(backend, weight, grad, state, lr, weight_decay)

    def _step(self, w, g, state, lr):
        if self._uses_adam(self._index):
            t = self.iterations + 1
            alpha = lr * self.adam_lr_ratio * math.sqrt(1.0 - self.adam_beta_2 ** t) / (1.0 - self.adam_beta_1 ** t)
            m = state["momentum"] + (g - state["momentum"]) * (1.0 - self.adam_beta_1)
            v = state["velocity"] + (g * g - state["velocity"]) * (1.0 - self.adam_beta_2)
            return w - m * alpha / (ops.sqrt(v) + self.epsilon), {"momentum": m, "velocity": v}
        m = state["momentum"] * self.momentum + g
        direction = g + m * self.momentum if self.nesterov else m
        update = self._newton_schulz(direction) * lr
        if self.rms_rate is not None:
            update = update * (math.sqrt(max(w.shape)) * self.rms_rate)
        return w - update, {"momentum": m}

    def _newton_schulz(self, x):
        """The quintic Newton-Schulz iteration towards the orthogonal factor of x (2-D), on the
        wide orientation (rows <= columns) so that x x^T is the smaller product."""
        tall = x.shape[0] > x.shape[1]
        if tall:
            x = ops.transpose(x)
        x = x / (ops.sqrt(ops.sum(x * x)) + 1e-7)
        for _ in range(self.ns_steps):
            gram = ops.matmul(x, ops.transpose(x))
            x = x * self.muon_a + ops.matmul(gram * self.muon_b + ops.matmul(gram, gram) * self.muon_c, x)
        return ops.transpose(x) if tall else x

    def get_config(self):
        config = super().get_config()
        config.update(adam_beta_1=self.adam_beta_1, adam_beta_2=self.adam_beta_2, epsilon=self.epsilon,
                      exclude_layers=list(self.exclude_layers), muon_a=self.muon_a, muon_b=self.muon_b,
                      muon_c=self.muon_c, adam_lr_ratio=self.adam_lr_ratio, momentum=self.momentum,
                      ns_steps=self.ns_steps, nesterov=self.nesterov, exclude_embeddings=self.exclude_embeddings,
                      adam_weight_decay=self.adam_weight_decay, rms_rate=self.rms_rate)
        return config


class ScheduleFreeAdamW(_Composed):
    """Schedule-free AdamW (Defazio et al., 2024) as Keras 3 writes it: the weights hold y, a
    (1 - beta_1, beta_1) blend of the Adam-style iterate z (the "momentum" slot, which starts
    at the weights) and the running average x of the z's (weight 1 / step), so no decaying
    learning-rate schedule is needed; warmup_steps ramps the rate linearly. The previous z is
    read before z's update, as Keras's source says (its torch backend reads the updated one,
    its tensor being updated in place: from the second step on its numbers differ slightly)."""

    _slots = ("momentum", "velocity")
    _non_negative_slots = ("velocity",)

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8, warmup_steps=0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = "ScheduleFreeAdamW"
        self.beta_1 = _number(beta_1, "beta_1", owner, low=0.0, high=1.0, low_inclusive=False)
        self.beta_2 = _number(beta_2, "beta_2", owner, low=0.0, high=1.0)
        self.epsilon = _number(epsilon, "epsilon", owner, low=0.0)
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError(f"{owner}: warmup_steps must be an integer >= 0, got {warmup_steps!r}")
        self.warmup_steps = warmup_steps

    def build(self, backend, weights, names=None):
        weights = list(weights)
        super().build(backend, weights, names)
        if self._pending_state is None and self.iterations == 0:
            for z, w in zip(self._state["momentum"], weights):   # z starts at the weights
                backend.copy(z, w)

    def _step(self, w, g, state, lr):
        t = float(self.iterations + 1)
        if self.warmup_steps > 0:
            lr = lr * min(t / self.warmup_steps, 1.0)
        z_old = state["momentum"]
        v = state["velocity"] + (g * g - state["velocity"]) * (1.0 - self.beta_2)
        z = z_old - g * lr / (ops.sqrt(v / (1.0 - self.beta_2 ** t)) + self.epsilon)
        x_old = (w - z_old * (1.0 - self.beta_1)) / self.beta_1
        x = x_old * (1.0 - 1.0 / t) + z * (1.0 / t)
        return z * (1.0 - self.beta_1) + x * self.beta_1, {"momentum": z, "velocity": v}

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon, warmup_steps=self.warmup_steps)
        return config
