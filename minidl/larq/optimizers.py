"""larq.optimizers: Bop, the binary optimizer, and CaseOptimizer, which trains each weight with
the optimizer whose predicate claims it.

    optimizer = lq.optimizers.CaseOptimizer(
        (lq.optimizers.Bop.is_binary_variable, lq.optimizers.Bop(threshold=1e-6, gamma=1e-3)),
        default_optimizer=minidl.optimizers.Adam(0.01))

Bop keeps one moving average m of the gradient per binary weight (its "m" slot, saved in model
files with the rest of the optimizer state) and flips a weight when m agrees with it in sign
and |m| exceeds threshold; the weights themselves become +-1 (latent-free). The step is the
backend op bop_update (numpy, cpu csrc/bop.c, opencl kernels/bop.cl).

A weight is binary (is_binary_variable) when its precision is 1: the kernel of a larq layer
whose kernel quantizer has precision 1 (ste_sign, approx_sign, NoOp(precision=1), ...).
model.compile hands the weights to CaseOptimizer.describe_weights before build(), which is
how the predicates see var.precision.
"""

import warnings

import numpy as np

from ..custom_objects import get_custom_objects
from ..optimizers import schedules
from ..optimizers.base import Optimizer
from ..optimizers.multi import MultiOptimizer, Variable
from ..optimizers.registry_hooks import REGISTRY


def _hyperparameter(value, name):
    """A positive-or-zero float, or a LearningRateSchedule evaluated at the step."""
    if isinstance(value, schedules.LearningRateSchedule):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise ValueError(f"Bop: {name} must be a non-negative number or a LearningRateSchedule, "
                         f"got {value!r}")
    return float(value)


class Bop(Optimizer):
    """Bop(threshold=1e-8, gamma=1e-4, name="Bop"): m += gamma (g - m); a weight w flips where
    w m > threshold, else becomes sign(w) (Helwegen et al., 2019). gamma plays the learning
    rate's part (it is what learning_rate, current_learning_rate() and fit's "learning_rate"
    log read and set); gamma and threshold may be schedules of the step. The common keyword
    arguments (clipnorm, clipvalue, ...) are Optimizer's; weight decay has no meaning here."""

    _slots = ("m",)

    def __init__(self, threshold=1e-8, gamma=1e-4, name="Bop", **kwargs):
        for refused in ("learning_rate", "weight_decay"):
            if kwargs.get(refused) is not None:
                raise ValueError(f"Bop: {refused} is not an argument of Bop (gamma is its rate, and "
                                 f"its weights are +-1), got {refused}={kwargs[refused]!r}")
            kwargs.pop(refused, None)
        gamma = _hyperparameter(gamma, "gamma")
        # the base class validates a positive float rate; a zero gamma (no step) is allowed here
        super().__init__(learning_rate=1.0, name=name, **kwargs)
        self._learning_rate = gamma
        self.threshold = threshold

    @property
    def gamma(self):
        return self._learning_rate

    @gamma.setter
    def gamma(self, value):
        self._learning_rate = _hyperparameter(value, "gamma")

    @property
    def learning_rate(self):
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._learning_rate = _hyperparameter(value, "gamma")

    @property
    def threshold(self):
        return self._threshold

    @threshold.setter
    def threshold(self, value):
        self._threshold = _hyperparameter(value, "threshold")

    def current_threshold(self):
        if isinstance(self._threshold, schedules.LearningRateSchedule):
            return float(self._threshold(self.iterations))
        return self._threshold

    def _update(self, backend, weight, grad, state, lr, weight_decay):
        backend.bop_update(weight, grad, state["m"], lr, self.current_threshold())

    @staticmethod
    def is_binary_variable(var):
        """True for a weight whose precision is 1 (larq's predicate for CaseOptimizer)."""
        return getattr(var, "precision", 32) == 1

    def get_config(self):
        config = super().get_config()
        config.pop("learning_rate")
        config.pop("weight_decay")
        for name in ("gamma", "threshold"):
            value = getattr(self, name)
            config[name] = schedules.serialize(value) if isinstance(value, schedules.LearningRateSchedule) \
                else value
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for name in ("gamma", "threshold"):
            if isinstance(config.get(name), dict):
                config[name] = schedules.deserialize(config[name])
        return cls(**config)


class CaseVariable(Variable):
    """What a CaseOptimizer predicate receives: path, name, shape, value and precision (1 for a
    binary kernel, 32 for a float weight)."""

    def __init__(self, path, shape, value, precision=32):
        super().__init__(path, shape, value)
        self.precision = precision


class CaseOptimizer(MultiOptimizer):
    """CaseOptimizer((predicate, optimizer), ..., default_optimizer=None, name="optimizer_case"):
    each weight goes to the one optimizer whose predicate(var) is true (two claims are an error),
    else to default_optimizer; without one, an unclaimed weight is not trained (a warning).
    Every pair's optimizer must claim a weight. The claims are computed at build and kept as
    var_opt_mapping ({weight path: optimizer index}) in the config, since predicates are not
    saved; a loaded CaseOptimizer uses that mapping. Its state is its optimizers' ("<index>/...")."""

    def __init__(self, *predicate_optimizer_pairs, default_optimizer=None, name="optimizer_case"):
        for i, pair in enumerate(predicate_optimizer_pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"CaseOptimizer: predicate_optimizer_pairs[{i}] must be a (predicate, "
                                f"optimizer) pair, got {pair!r}")
            predicate, optimizer = pair
            if not callable(predicate):
                raise TypeError(f"Expected callable predicate at `predicate_optimizer_pairs[{i}][0]` "
                                f"but got `{type(predicate)}`.")
            if not isinstance(optimizer, Optimizer) or isinstance(optimizer, MultiOptimizer):
                raise TypeError(f"Expected an Optimizer at `predicate_optimizer_pairs[{i}][1]` but "
                                f"got `{type(optimizer)}`.")
        if default_optimizer is not None and (not isinstance(default_optimizer, Optimizer)
                                              or isinstance(default_optimizer, MultiOptimizer)):
            raise TypeError(f"Expected an Optimizer for `default_optimizer` but got "
                            f"`{type(default_optimizer)}`.")
        optimizers = [opt for _, opt in predicate_optimizer_pairs] + \
            ([default_optimizer] if default_optimizer is not None else [])
        if len({id(o) for o in optimizers}) != len(optimizers):
            raise ValueError("CaseOptimizer: the same optimizer object appears twice; give each "
                             "pair (and default_optimizer) its own")
        super().__init__(lambda variable: None, name=name)
        self.pred_opt_pairs = tuple(tuple(p) for p in predicate_optimizer_pairs)
        self.default = default_optimizer
        self._inner_optimizers = optimizers
        self.var_opt_mapping = None
        self._precisions = {}

    def describe_weights(self, weights):
        """The model's trainable Weights (in build order), before build(): their precision
        (set by the larq layers on their quantized kernels) is what the predicates read."""
        self._precisions = {id(w.value): getattr(w, "precision", 32) for w in weights}

    def _compute_var_opt_mapping(self, backend, weights, names):
        mapping = {}
        for weight, path in zip(weights, names):
            var = CaseVariable(path, backend.shape(weight), weight, self._precisions.get(id(weight), 32))
            claims = [i for i, (predicate, _) in enumerate(self.pred_opt_pairs) if predicate(var)]
            if len(claims) > 1:
                raise ValueError(f"Variable `{path}` claimed by multiple optimizers.")
            if claims:
                mapping[path] = claims[0]
            elif self.default is not None:
                mapping[path] = len(self.pred_opt_pairs)
            else:
                warnings.warn(f"No `default_optimizer` provided to train variable `{path}`.")
        for index, (_, optimizer) in enumerate(self.pred_opt_pairs):
            if index not in mapping.values():
                raise ValueError(f"Optimizer `{optimizer.name}` did not claim any variables.")
        return mapping

    def build(self, backend, weights, names=None):
        if self.built:
            raise RuntimeError(f"CaseOptimizer '{self.name}' is already built; build() is called once")
        weights = list(weights)
        names = list(names) if names is not None else [f"weight_{i}" for i in range(len(weights))]
        if len(set(names)) != len(names):
            raise ValueError(f"CaseOptimizer '{self.name}': the weight paths are not unique: {names}")
        if self.var_opt_mapping is None:
            mapping = self._compute_var_opt_mapping(backend, weights, names)
        else:   # loaded from a config: the predicates were not saved
            mapping = self.var_opt_mapping
            bad = {k: v for k, v in mapping.items() if isinstance(v, bool) or not isinstance(v, int)
                   or not 0 <= v < len(self._inner_optimizers)}
            if bad or not isinstance(mapping, dict):
                raise ValueError(f"CaseOptimizer '{self.name}': var_opt_mapping must map weight paths to "
                                 f"optimizer indices 0..{len(self._inner_optimizers) - 1}, got {bad}")
            unknown = sorted(set(mapping) - set(names))
            if unknown:
                raise ValueError(f"CaseOptimizer '{self.name}': var_opt_mapping names weights this "
                                 f"model does not train: {unknown[:6]}")
        groups = [[] for _ in self._inner_optimizers]
        for position, path in enumerate(names):
            if path in mapping:
                groups[mapping[path]].append(position)
        for optimizer, group in zip(self._inner_optimizers, groups):
            if group:
                optimizer.build(backend, [weights[i] for i in group], [names[i] for i in group])
        self.var_opt_mapping = dict(mapping)
        self._backend, self._groups = backend, groups
        self._shapes = [tuple(backend.shape(w)) for w in weights]
        self._weights = weights
        self._positions = {id(w): i for i, w in enumerate(weights)}
        if self._pending_state is not None:
            pending, self._pending_state = self._pending_state, None
            self.set_state(backend, pending)

    def get_config(self):
        return {"name": self.name,
                "optimizer_configs": [REGISTRY["serialize"](opt) for _, opt in self.pred_opt_pairs],
                "default_config": None if self.default is None else REGISTRY["serialize"](self.default),
                "var_opt_mapping": None if self.var_opt_mapping is None else dict(self.var_opt_mapping)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        pairs = [(lambda _: False, REGISTRY["deserialize"](c, custom_objects))   # predicates are not saved
                 for c in config.get("optimizer_configs", [])]
        default = config.get("default_config")
        optimizer = cls(*pairs, default_optimizer=None if default is None else
                        REGISTRY["deserialize"](default, custom_objects),
                        name=config.get("name", "optimizer_case"))
        mapping = config.get("var_opt_mapping")
        if mapping is not None and not isinstance(mapping, dict):
            raise ValueError(f"CaseOptimizer.from_config: var_opt_mapping must be a dict, got {mapping!r}")
        optimizer.var_opt_mapping = mapping
        return optimizer

    def __repr__(self):
        return f"CaseOptimizer(name={self.name!r}, optimizers={self._inner_optimizers!r})"


get_custom_objects().update({"Bop": Bop, "CaseOptimizer": CaseOptimizer})

__all__ = ["Bop", "CaseOptimizer"]
