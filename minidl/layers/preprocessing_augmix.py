"""Keras 3's AugMix: at each training call, num_chains chains of up to chain_depth
augmentations (each step one of the ops or none, Keras's draw), applied to copies of the
batch and mixed: out = clip(m x + (1 - m) sum_i w_i chain_i(x), value_range), w Dirichlet(alpha)
over the chains and m Beta(alpha, alpha), one draw for the whole batch as Keras draws them.

The draws are made on the host from the call's step seed (the same on every backend; a run
repeats and resumes exactly); each augmentation is the minidl layer of its name
(preprocessing_randaugment.augmentation_layers) running its backend ops; the mixing is the
backend's axpby and a clip by maximum / minimum. The gradient is the same mix of the chains'
gradients (the clip passes it through, as the colour layers' clips do). Training only.
"""

import numbers
import random

from ..seed_state import mix_seed
from .calls import run_backward
from .preprocessing_randaugment import ComposedAugmentation, augmentation_layers

OPS = ("random_shear", "random_translation", "random_rotation", "random_posterization",
       "solarization", "auto_contrast", "equalization")
ALL_OPS = OPS + ("random_brightness", "random_color_degeneration", "random_contrast",
                 "random_sharpness")


class AugMix(ComposedAugmentation):
    """Keras 3's AugMix(value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3,
    alpha=1.0, all_ops=True, interpolation="bilinear"): all_ops=False leaves out the four
    colour ops (brightness, colour degeneration, contrast, sharpness)."""

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3, alpha=1.0,
                 all_ops=True, interpolation="bilinear", seed=None, data_format=None, name=None,
                 trainable=True):
        super().__init__(seed=seed, name=name, trainable=trainable)
        owner = self.describe()
        for argument, value in (("num_chains", num_chains), ("chain_depth", chain_depth)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{owner}: {argument} must be an int >= 1, got "
                                 f"{argument}={value!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha > 0:
            raise ValueError(f"{owner}: alpha must be a number > 0, got alpha={alpha!r}")
        self.num_chains, self.chain_depth = int(num_chains), int(chain_depth)
        self.alpha, self.all_ops = float(alpha), bool(all_ops)
        self._check_common(value_range, factor, interpolation, data_format)
        self.ops = ALL_OPS if self.all_ops else OPS
        self._parts = augmentation_layers(self.ops, self.factor, self.value_range,
                                          self.interpolation, self.name)

    def get_config(self):
        return dict(super().get_config(), value_range=list(self.value_range),
                    num_chains=self.num_chains, chain_depth=self.chain_depth,
                    factor=list(self.factor), alpha=self.alpha, all_ops=self.all_ops,
                    interpolation=self.interpolation, data_format=self.data_format)

    def draw(self, step_seed):
        """(chains, weights, m) of the call with this step seed: chains a list of lists of
        indices into self.ops, weights (num_chains,) summing to 1, m the weight of x."""
        draws = random.Random(mix_seed(step_seed, 0))
        gammas = [draws.gammavariate(self.alpha, 1.0) for _ in range(self.num_chains)]
        total = sum(gammas)
        weights = [g / total for g in gammas] if total > 0 else [1.0 / self.num_chains] * self.num_chains
        m = draws.betavariate(self.alpha, self.alpha)
        chains = []
        for _ in range(self.num_chains):   # each step: an op, or none (Keras's choice of ops + [None])
            picks = [draws.randrange(len(self.ops) + 1) for _ in range(self.chain_depth)]
            chains.append([p for p in picks if p < len(self.ops)])
        return chains, weights, m

    def augment(self, call, x):
        b = self.backend
        chains, weights, m = self.draw(call.step_seed)
        call.chains, call.weights, call.m = [], weights, m
        # an op's inner call is keyed by the op and how many times it ran before in this call,
        # not by its place in the chains: the draws move ops between places every step, and a
        # place whose op changed made a new inner call, whose buffers were allocated anew
        # (so each chain's output stays in its own buffer until the mix below reads it)
        runs = [0] * len(self._parts)
        ends = []
        for c, chain in enumerate(chains):
            y, ran = x, []
            for d, index in enumerate(chain):
                runs[index] += 1
                y, inner = self.run_part(call, ("op", index, runs[index]), self._parts[index],
                                         mix_seed(call.step_seed, c + 1, d + 1) >> 2, y)
                ran.append((self._parts[index], inner))
            ends.append(y)
            call.chains.append(ran)
        out = call.buffer("out", b.shape(x))
        if len(ends) == 1:
            b.axpby(out, m, x, (1.0 - m) * weights[0], ends[0])
        else:   # the weighted sum of the chains in len(ends) - 1 passes over the batch
            mixed = call.buffer("mixed", b.shape(x))
            b.axpby(mixed, weights[0], ends[0], weights[1], ends[1])
            for weight, y in zip(weights[2:], ends[2:]):
                b.axpby(mixed, 1.0, mixed, weight, y)
            b.axpby(out, m, x, 1.0 - m, mixed)
        b.binary(out, out, float(self.value_range[0]), "maximum")
        b.binary(out, out, float(self.value_range[1]), "minimum")
        return out

    def augment_backward(self, call, dout):
        b = self.backend
        mixed = call.buffer("dmixed", b.shape(dout))
        b.fill(mixed, 0.0)
        for ran, weight in zip(call.chains, call.weights):
            g = dout
            for part, inner in reversed(ran):
                g = run_backward(part, inner, g, accumulate=False)
            b.axpby(mixed, 1.0, mixed, weight, g)
        dx = call.buffer("dx", b.shape(dout))
        b.axpby(dx, call.m, dout, 1.0 - call.m, mixed)
        return dx


__all__ = ["AugMix"]
