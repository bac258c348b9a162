"""Learning-rate schedules: the learning rate as a function of the optimizer step.

An optimizer given a schedule evaluates it once per step, at its `iterations`
count (0 for the first step), exactly as Keras does. Schedules are plain Python
(a float per step); the optimizer passes the value to the backend update op.
"""

import math
import numbers

from .arguments import number
from .custom_objects import get_registered_name, get_registered_object


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

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
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

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
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


class _Warmup:
    """Warm-up as Keras 3's CosineDecay has it, for the schedules that lack one in Keras: with
    warmup_target the rate goes linearly from initial_learning_rate to warmup_target over
    warmup_steps steps, then the schedule runs from warmup_target, its step counted from the
    end of the warm-up. Without warmup_target the schedule is exactly Keras's."""

    def _set_warmup(self, owner, warmup_target, warmup_steps):
        self.warmup_target = (None if warmup_target is None else
                              number(warmup_target, "warmup_target", owner, low=0.0, low_inclusive=False))
        self.warmup_steps = number(warmup_steps, "warmup_steps", owner, low=0.0)
        if self.warmup_target is not None and self.warmup_steps == 0:
            raise ValueError(f"{owner}: warmup_target={self.warmup_target} needs warmup_steps > 0")

    def __call__(self, step):
        step = _check_step(step, type(self).__name__)
        if self.warmup_target is None:
            return self._schedule(step, self.initial_learning_rate)
        if step < self.warmup_steps:
            fraction = step / self.warmup_steps
            return self.initial_learning_rate + (self.warmup_target - self.initial_learning_rate) * fraction
        return self._schedule(step - self.warmup_steps, self.warmup_target)

    def _warmup_config(self):
        # Only when set, so that a config without warm-up is the one Keras writes.
        if self.warmup_target is None:
            return {}
        return {"warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class PolynomialDecay(_Warmup, LearningRateSchedule):
    """(initial - end) * (1 - step / decay_steps) ** power + end, step capped at decay_steps;
    with `cycle` the horizon grows to the next multiple of decay_steps instead."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay", warmup_target=None, warmup_steps=0):
        owner = "PolynomialDecay"
        self.initial_learning_rate = number(initial_learning_rate, "initial_learning_rate", owner, low=0.0)
        self.decay_steps = number(decay_steps, "decay_steps", owner, low=0.0, low_inclusive=False)
        self.end_learning_rate = number(end_learning_rate, "end_learning_rate", owner, low=0.0)
        self.power = number(power, "power", owner)
        if not isinstance(cycle, bool):
            raise TypeError(f"{owner}: cycle must be a bool, got {cycle!r}")
        self.cycle = cycle
        self.name = name
        self._set_warmup(owner, warmup_target, warmup_steps)

    def _schedule(self, step, initial):
        decay_steps = self.decay_steps
        if self.cycle:
            decay_steps *= 1.0 if step == 0 else math.ceil(step / decay_steps)
        else:
            step = min(step, decay_steps)
        fraction = step / decay_steps
        return (initial - self.end_learning_rate) * (1.0 - fraction) ** self.power + self.end_learning_rate

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name, **self._warmup_config()}


class InverseTimeDecay(_Warmup, LearningRateSchedule):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps) (the quotient floored when
    `staircase`)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay", warmup_target=None, warmup_steps=0):
        owner = "InverseTimeDecay"
        self.initial_learning_rate = number(initial_learning_rate, "initial_learning_rate", owner, low=0.0)
        self.decay_steps = number(decay_steps, "decay_steps", owner, low=0.0, low_inclusive=False)
        self.decay_rate = number(decay_rate, "decay_rate", owner, low=0.0)
        if not isinstance(staircase, bool):
            raise TypeError(f"{owner}: staircase must be a bool, got {staircase!r}")
        self.staircase = staircase
        self.name = name
        self._set_warmup(owner, warmup_target, warmup_steps)

    def _schedule(self, step, initial):
        fraction = step / self.decay_steps
        if self.staircase:
            fraction = math.floor(fraction)
        return initial / (1.0 + self.decay_rate * fraction)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name,
                **self._warmup_config()}


class CosineDecayRestarts(_Warmup, LearningRateSchedule):
    """SGDR: cosine decay over first_decay_steps, then restarts, period i lasting t_mul^i times
    longer and starting m_mul^i times lower; alpha is the floor as a fraction of the rate."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                 name="SGDRDecay", warmup_target=None, warmup_steps=0):
        owner = "CosineDecayRestarts"
        self.initial_learning_rate = number(initial_learning_rate, "initial_learning_rate", owner, low=0.0)
        self.first_decay_steps = number(first_decay_steps, "first_decay_steps", owner, low=0.0,
                                        low_inclusive=False)
        self.t_mul = number(t_mul, "t_mul", owner, low=0.0, low_inclusive=False)
        self.m_mul = number(m_mul, "m_mul", owner, low=0.0)
        self.alpha = number(alpha, "alpha", owner, low=0.0)
        self.name = name
        self._set_warmup(owner, warmup_target, warmup_steps)

    def _schedule(self, step, initial):
        fraction = step / self.first_decay_steps
        if self.t_mul == 1.0:
            restart = math.floor(fraction)
            fraction -= restart
        else:
            restart = math.floor(math.log(1.0 - fraction * (1.0 - self.t_mul)) / math.log(self.t_mul))
            done = (1.0 - self.t_mul ** restart) / (1.0 - self.t_mul)
            fraction = (fraction - done) / self.t_mul ** restart
        cosine = 0.5 * self.m_mul ** restart * (1.0 + math.cos(math.pi * fraction))
        return initial * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self.t_mul, "m_mul": self.m_mul,
                "alpha": self.alpha, "name": self.name, **self._warmup_config()}


class CosineDecay(_Warmup, LearningRateSchedule):
    """Cosine decay from initial_learning_rate (or from warmup_target after a linear warmup
    of warmup_steps steps) down to alpha times that rate over decay_steps steps, then flat."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        owner = "CosineDecay"
        self.initial_learning_rate = number(initial_learning_rate, "initial_learning_rate",
                                            owner, low=0.0)
        self.decay_steps = number(decay_steps, "decay_steps", owner, low=0.0, low_inclusive=False)
        self.alpha = number(alpha, "alpha", owner, low=0.0)
        if self.alpha > 1:
            raise ValueError(f"{owner}: alpha must be in [0, 1], got {self.alpha}")
        self._set_warmup(owner, warmup_target, warmup_steps)
        self.name = name

    def _schedule(self, step, decay_from):
        fraction = min(step, self.decay_steps) / self.decay_steps
        cosine = 0.5 * (1.0 + math.cos(math.pi * fraction))
        return decay_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


_SCHEDULES = {cls.__name__: cls for cls in (ExponentialDecay, PiecewiseConstantDecay, CosineDecay,
                                            PolynomialDecay, InverseTimeDecay, CosineDecayRestarts)}


def serialize(schedule):
    """{"class_name": ..., "config": ...} for a schedule (what optimizer configs embed); a class
    of your own is named as registered (register_keras_serializable) or by its class name."""
    if not isinstance(schedule, LearningRateSchedule):
        raise TypeError(f"schedules.serialize: expected a LearningRateSchedule, got "
                        f"{type(schedule).__name__}")
    return {"class_name": get_registered_name(schedule), "config": schedule.get_config()}


def deserialize(config, custom_objects=None):
    """The schedule described by a {"class_name", "config"} dict from serialize(); classes of
    your own come from custom_objects, a custom_object_scope or the registry."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"schedules.deserialize: expected a dict with 'class_name' and 'config', "
                         f"got {config!r}")
    name = config["class_name"]
    cls = _SCHEDULES.get(name) or get_registered_object(name, custom_objects)
    if cls is None:
        raise ValueError(f"schedules.deserialize: unknown schedule class {name!r}; "
                         f"known: {sorted(_SCHEDULES)} (pass a class of your own in custom_objects)")
    if not (isinstance(cls, type) and issubclass(cls, LearningRateSchedule)):
        raise ValueError(f"schedules.deserialize: {name!r} names {cls!r}, not a LearningRateSchedule")
    return cls.from_config(dict(config.get("config", {})))


def get(identifier):
    """A schedule from a LearningRateSchedule instance or a serialize() dict."""
    if isinstance(identifier, LearningRateSchedule):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"schedules.get: cannot interpret {identifier!r} as a learning-rate schedule "
                     f"(pass a LearningRateSchedule or a {{'class_name', 'config'}} dict)")


__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay",
           "PolynomialDecay", "InverseTimeDecay", "CosineDecayRestarts", "serialize", "deserialize", "get"]
