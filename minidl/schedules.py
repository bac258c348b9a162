"""Learning-rate schedules: the learning rate as a function of the optimizer step.

An optimizer given a schedule evaluates it once per step, at its `iterations`
count (0 for the first step), exactly as Keras does. Schedules are plain Python
(a float per step); the optimizer passes the value to the backend update op.
"""

import math
import numbers

from .arguments import number


def _check_step(step, owner):
    if isinstance(step, bool) or not isinstance(step, numbers.Real):
        raise TypeError(f"{owner}: step must be a number, got {type(step).__name__} {step!r}")
    return float(step)


class LearningRateSchedule:
    """Base class: `schedule(step)` returns the learning rate (a float) for a 0-based step."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(step)")

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} must implement get_config()")

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class ExponentialDecay(LearningRateSchedule):
    """initial_learning_rate * decay_rate ** (step / decay_steps); the exponent is floored
    when `staircase` (the rate then drops once every decay_steps steps)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        owner = "ExponentialDecay"
        self.initial_learning_rate = number(initial_learning_rate, "initial_learning_rate",
                                            owner, low=0.0, low_inclusive=False)
        self.decay_steps = number(decay_steps, "decay_steps", owner, low=0.0, low_inclusive=False)
        self.decay_rate = number(decay_rate, "decay_rate", owner, low=0.0, low_inclusive=False)
        if not isinstance(staircase, bool):
            raise TypeError(f"{owner}: staircase must be a bool, got {staircase!r}")
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        exponent = _check_step(step, "ExponentialDecay") / self.decay_steps
        if self.staircase:
            exponent = math.floor(exponent)
        return self.initial_learning_rate * self.decay_rate ** exponent

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """A step schedule: values[0] while step <= boundaries[0], values[i] while
    boundaries[i-1] < step <= boundaries[i], values[-1] after the last boundary."""

    def __init__(self, boundaries, values, name=None):
        owner = "PiecewiseConstantDecay"
        boundaries = list(boundaries)
        values = list(values)
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"{owner}: values must hold one more element than boundaries, got "
                             f"{len(boundaries)} boundaries and {len(values)} values")
        self.boundaries = [number(b, f"boundaries[{i}]", owner) for i, b in enumerate(boundaries)]
        if any(lower >= upper for lower, upper in zip(self.boundaries, self.boundaries[1:])):
            raise ValueError(f"{owner}: boundaries must be strictly increasing, got {self.boundaries}")
        self.values = [number(v, f"values[{i}]", owner, low=0.0)
                       for i, v in enumerate(values)]
        self.name = name

    def __call__(self, step):
        step = _check_step(step, "PiecewiseConstantDecay")
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return value
        return self.values[-1]

    def get_config(self):
        return {"boundaries": list(self.boundaries), "values": list(self.values), "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from initial_learning_rate (or from warmup_target after a linear warmup
    of warmup_steps steps) down to alpha times that rate over decay_steps steps, then flat."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None,
                 warmup_target=None, warmup_steps=0):
        owner = "CosineDecay"
        self.initial_learning_rate = number(initial_learning_rate, "initial_learning_rate",
                                            owner, low=0.0)
        self.decay_steps = number(decay_steps, "decay_steps", owner, low=0.0, low_inclusive=False)
        self.alpha = number(alpha, "alpha", owner, low=0.0)
        if self.alpha > 1:
            raise ValueError(f"{owner}: alpha must be in [0, 1], got {self.alpha}")
        self.warmup_target = (None if warmup_target is None else
                              number(warmup_target, "warmup_target", owner, low=0.0, low_inclusive=False))
        self.warmup_steps = number(warmup_steps, "warmup_steps", owner, low=0.0)
        if self.warmup_target is not None and self.warmup_steps == 0:
            raise ValueError(f"{owner}: warmup_target={self.warmup_target} needs warmup_steps > 0")
        self.name = name

    def _decay(self, step, decay_from):
        fraction = step / self.decay_steps
        cosine = 0.5 * (1.0 + math.cos(math.pi * fraction))
        return decay_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        step = _check_step(step, "CosineDecay")
        if self.warmup_target is None:
            return self._decay(min(step, self.decay_steps), self.initial_learning_rate)
        step = min(step, self.decay_steps + self.warmup_steps)
        if step < self.warmup_steps:
            fraction = step / self.warmup_steps
            return self.initial_learning_rate + (self.warmup_target - self.initial_learning_rate) * fraction
        return self._decay(step - self.warmup_steps, self.warmup_target)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


_SCHEDULES = {cls.__name__: cls for cls in (ExponentialDecay, PiecewiseConstantDecay, CosineDecay)}


def serialize(schedule):
    """{"class_name": ..., "config": ...} for a schedule (what optimizer configs embed)."""
    if not isinstance(schedule, LearningRateSchedule):
        raise TypeError(f"schedules.serialize: expected a LearningRateSchedule, got "
                        f"{type(schedule).__name__}")
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config, custom_objects=None):
    """The schedule described by a {"class_name", "config"} dict from serialize()."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"schedules.deserialize: expected a dict with 'class_name' and 'config', "
                         f"got {config!r}")
    known = dict(_SCHEDULES)
    known.update(custom_objects or {})
    name = config["class_name"]
    if name not in known:
        raise ValueError(f"schedules.deserialize: unknown schedule class {name!r}; "
                         f"known: {sorted(known)}")
    return known[name].from_config(dict(config.get("config", {})))


def get(identifier):
    """A schedule from a LearningRateSchedule instance or a serialize() dict."""
    if isinstance(identifier, LearningRateSchedule):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"schedules.get: cannot interpret {identifier!r} as a learning-rate schedule "
                     f"(pass a LearningRateSchedule or a {{'class_name', 'config'}} dict)")


__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay",
           "serialize", "deserialize", "get"]
