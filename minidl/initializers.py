"""Keras weight initializers. They produce host arrays that the model uploads once."""

import math

import numpy as np

from . import random as mrandom
from .arguments import number as _number
from .custom_objects import get_registered_name, get_registered_object
from .naming import snake_case


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) as Keras computes them: given axes multiply their sizes; else a
    vector has fan_in = fan_out = its size, a matrix (in, out), and a kernel (..., in, out)
    multiplies both by its receptive field (the product of the leading axes)."""
    shape = tuple(int(d) for d in shape)
    if input_axes is not None and output_axes is not None:
        return (int(np.prod([shape[a] for a in input_axes])), int(np.prod([shape[a] for a in output_axes])))
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


_fans = compute_fans


def _seed(seed, owner):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ValueError(f"{owner}: `seed` argument should be an integer or None. Received: seed={seed!r}")
    return None if seed is None else int(seed)


class Initializer:
    """Base class (Keras's keras.initializers.Initializer): `initializer(shape, dtype=None)`
    gives the values as a host array (a layer uploads them once), get_config() the
    constructor arguments."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype=None)")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return self.from_config(self.get_config())

    @property
    def name(self):
        return _NAMES_BY_CLASS.get(type(self), type(self).__name__)


def _as_dtype(values, dtype):
    return values if dtype is None else np.asarray(values, dtype=np.dtype(dtype))


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return np.zeros(shape, dtype=np.dtype(dtype or np.float64))


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return np.ones(shape, dtype=np.dtype(dtype or np.float64))


class Constant(Initializer):
    """Every value `value` (a number, or an array broadcast to the shape)."""

    def __init__(self, value=0.0):
        if np.asarray(value).dtype.kind not in "biuf":
            raise ValueError(f"Constant: value must be a number or an array of numbers, got {value!r}")
        self.value = value

    def __call__(self, shape, dtype=None):
        return _as_dtype(np.broadcast_to(np.asarray(self.value, np.float64), tuple(shape)).copy(), dtype)

    def get_config(self):
        value = self.value
        return {"value": value.tolist() if isinstance(value, np.ndarray) else value}


class Identity(Initializer):
    """gain times the identity matrix (2-D shapes only; rectangular ones get ones on the
    diagonal)."""

    def __init__(self, gain=1.0):
        self.gain = _number(gain, "gain", "Identity")

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices. Received: "
                             f"shape={tuple(shape)} of rank {len(shape)}.")
        return _as_dtype(self.gain * np.eye(*shape), dtype)

    def get_config(self):
        return {"gain": self.gain}


class _Random(Initializer):
    """An initializer that draws: seed=None draws from minidl's global generator (set_seed), an
    integer seed gives the same values at every call, as Keras's integer seeds do."""

    def __init__(self, seed=None):
        self.seed = _seed(seed, type(self).__name__)

    def _generator(self):
        return mrandom.generator() if self.seed is None else np.random.default_rng(self.seed)

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean = _number(mean, "mean", "RandomNormal")
        self.stddev = _number(stddev, "stddev", "RandomNormal", low=0.0)

    def __call__(self, shape, dtype=None):
        return _as_dtype(self._generator().normal(self.mean, self.stddev, size=tuple(shape)), dtype)

    def get_config(self):
        return {"seed": self.seed, "mean": self.mean, "stddev": self.stddev}


class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval = _number(minval, "minval", "RandomUniform")
        self.maxval = _number(maxval, "maxval", "RandomUniform")

    def __call__(self, shape, dtype=None):
        return _as_dtype(self._generator().uniform(self.minval, self.maxval, size=tuple(shape)), dtype)

    def get_config(self):
        return {"seed": self.seed, "minval": self.minval, "maxval": self.maxval}


class TruncatedNormal(_Random):
    """A normal(mean, stddev) redrawn outside mean +- 2 stddev (Keras's truncation)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean = _number(mean, "mean", "TruncatedNormal")
        self.stddev = _number(stddev, "stddev", "TruncatedNormal", low=0.0)

    def __call__(self, shape, dtype=None):
        return _as_dtype(self.mean + _truncated(self._generator(), tuple(shape), self.stddev), dtype)

    def get_config(self):
        return {"seed": self.seed, "mean": self.mean, "stddev": self.stddev}


class VarianceScaling(_Random):
    """Values of variance scale / n, n the fan_in, fan_out or their mean (mode): a truncated
    normal (its stddev corrected for the truncation), a normal, or a uniform."""

    MODES = ("fan_in", "fan_out", "fan_avg")
    DISTRIBUTIONS = ("uniform", "truncated_normal", "untruncated_normal")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        super().__init__(seed)
        owner = type(self).__name__
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.number)) or not scale > 0:
            raise ValueError(f"{owner}: Argument `scale` must be positive float. Received: scale={scale!r}")
        if mode not in self.MODES:
            raise ValueError(f"{owner}: Invalid `mode` argument: {mode!r}. Please use one of {set(self.MODES)}")
        distribution = distribution.lower() if isinstance(distribution, str) else distribution
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in self.DISTRIBUTIONS:
            raise ValueError(f"{owner}: Invalid `distribution` argument: {distribution!r}. Please use one of "
                             f"{set(self.DISTRIBUTIONS)}")
        if (input_axes is None) != (output_axes is None):
            raise ValueError(f"{owner}: input_axes and output_axes must be given together, got "
                             f"input_axes={input_axes!r}, output_axes={output_axes!r}")
        self.scale, self.mode, self.distribution = float(scale), mode, distribution
        self.input_axes = None if input_axes is None else list(input_axes)
        self.output_axes = None if output_axes is None else list(output_axes)

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            values = _truncated(self._generator(), shape, math.sqrt(variance) / 0.87962566103423978)
        elif self.distribution == "untruncated_normal":
            values = self._generator().normal(0.0, math.sqrt(variance), size=shape)
        else:
            limit = math.sqrt(3.0 * variance)
            values = self._generator().uniform(-limit, limit, size=shape)
        return _as_dtype(values, dtype)

    def get_config(self):
        return {"seed": self.seed, "scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "input_axes": self.input_axes, "output_axes": self.output_axes}


def _variance_scaling(class_name, scale, mode, distribution, doc):
    """A named VarianceScaling (GlorotUniform, HeNormal, ...): its config is seed and axes only."""
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self.seed, "input_axes": self.input_axes, "output_axes": self.output_axes}
    return type(class_name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config,
                                                 "__doc__": doc, "__module__": __name__})


GlorotUniform = _variance_scaling("GlorotUniform", 1.0, "fan_avg", "uniform",
                                  "uniform(-limit, limit), limit = sqrt(6 / (fan_in + fan_out)).")
GlorotNormal = _variance_scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal",
                                 "truncated normal of stddev sqrt(2 / (fan_in + fan_out)).")
HeUniform = _variance_scaling("HeUniform", 2.0, "fan_in", "uniform",
                              "uniform(-limit, limit), limit = sqrt(6 / fan_in).")
HeNormal = _variance_scaling("HeNormal", 2.0, "fan_in", "truncated_normal",
                             "truncated normal of stddev sqrt(2 / fan_in).")
LecunUniform = _variance_scaling("LecunUniform", 1.0, "fan_in", "uniform",
                                 "uniform(-limit, limit), limit = sqrt(3 / fan_in).")
LecunNormal = _variance_scaling("LecunNormal", 1.0, "fan_in", "truncated_normal",
                                "truncated normal of stddev sqrt(1 / fan_in).")


class Orthogonal(_Random):
    """gain times an orthogonal matrix (the Q of the QR decomposition of a normal draw, signs
    fixed by R's diagonal) reshaped to the shape: rows prod(shape[:-1]), columns shape[-1]."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = _number(gain, "gain", "Orthogonal")

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: "
                             f"shape={shape} of rank {len(shape)}.")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        a = self._generator().normal(0.0, 1.0, size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _as_dtype(self.gain * q.reshape(shape), dtype)

    def get_config(self):
        return {"seed": self.seed, "gain": self.gain}


IdentityInitializer, OrthogonalInitializer = Identity, Orthogonal

# Keras's lower-case names are the classes themselves: initializers.glorot_uniform(seed=1)
constant, zeros, ones, identity, orthogonal = Constant, Zeros, Ones, Identity, Orthogonal
random_normal, random_uniform, truncated_normal, variance_scaling = (RandomNormal, RandomUniform, TruncatedNormal,
                                                                     VarianceScaling)
glorot_normal, glorot_uniform, he_normal, he_uniform, lecun_normal, lecun_uniform = (
    GlorotNormal, GlorotUniform, HeNormal, HeUniform, LecunNormal, LecunUniform)


class TorchUniform(_Random):
    """PyTorch's default nn.Linear / nn.Conv2d weight draw (kaiming_uniform_ with a = sqrt(5)):
    uniform(-1 / sqrt(fan_in), 1 / sqrt(fan_in)). airbench94's head keeps it; Keras has no
    named initializer with this limit (random_uniform is +-0.05 whatever the fan-in)."""

    def __init__(self, seed=None):
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        fan_in, _ = _fans(tuple(shape))
        limit = 1.0 / math.sqrt(fan_in)
        return _as_dtype(self._generator().uniform(-limit, limit, size=tuple(shape)), dtype)

    def get_config(self):
        return {"seed": self.seed}


class Dirac(Initializer):
    """Identity convolution (PyTorch's dirac_, airbench's conv init): for a kernel (kh, kw, in,
    out), output channel o < min(in, out) passes input channel o through at the centre tap
    (kh // 2, kw // 2); any further output channels keep PyTorch's default conv draw,
    uniform(-1 / sqrt(fan_in), 1 / sqrt(fan_in)). Other shapes are an error."""

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        if len(shape) != 4:
            raise ValueError(f"initializer 'dirac' needs a conv kernel shape (kh, kw, in, out), got {shape}")
        kh, kw, channels_in, channels_out = shape
        limit = 1.0 / math.sqrt(kh * kw * channels_in)
        values = mrandom.generator().uniform(-limit, limit, size=shape)
        identity = min(channels_in, channels_out)
        values[..., :identity] = 0.0
        values[kh // 2, kw // 2, np.arange(identity), np.arange(identity)] = 1.0
        return _as_dtype(values, dtype)


def _truncated(generator, shape, stddev):
    """normal(0, stddev) values, those beyond 2 stddev redrawn (Keras's truncated normal)."""
    values = generator.normal(0.0, stddev, size=shape)
    bad = np.abs(values) > 2 * stddev
    while bad.any():
        values[bad] = generator.normal(0.0, stddev, size=int(bad.sum()))
        bad = np.abs(values) > 2 * stddev
    return values


_CLASSES = {cls.__name__: cls for cls in (
    Zeros, Ones, Constant, Identity, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
    GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, Orthogonal, Dirac,
    TorchUniform)}
_CLASSES.update(IdentityInitializer=Identity, OrthogonalInitializer=Orthogonal)
# the snake_case names Keras accepts as strings ("glorot_uniform", "he_normal", ...)
_BY_NAME = {snake_case(name): cls for name, cls in _CLASSES.items()}
_NAMES_BY_CLASS = {cls: snake_case(cls.__name__) for cls in _CLASSES.values()}
_BY_NAME.update(uniform=RandomUniform, normal=RandomNormal)   # Keras's short names (Embedding's)


# Data-dependent initializers: fitted to data, then assigned to a built layer.
from .initializers_data import DataInitializer, PatchWhitening, initialize_from_data  # noqa: E402


def get(identifier):
    """An initializer from a name ("glorot_uniform", "GlorotUniform", "he_normal", ...), a
    serialize() dict, an Initializer instance or class, or a callable of (shape, dtype)."""
    if identifier is None:
        return None
    if isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}; known: {sorted(_BY_NAME)}")


def serialize(initializer):
    """{"module", "class_name", "config", "registered_name"} as Keras writes it."""
    if not isinstance(initializer, Initializer):
        raise TypeError(f"initializers.serialize: expected an Initializer, got {type(initializer).__name__}")
    registered = get_registered_name(initializer)
    builtin = _CLASSES.get(type(initializer).__name__) is type(initializer)
    return {"module": "keras.initializers" if builtin else None, "class_name": type(initializer).__name__,
            "config": initializer.get_config(), "registered_name": None if builtin else registered}


def deserialize(config, custom_objects=None):
    """The initializer a name or a serialize() dict describes; classes of your own come from
    custom_objects, a custom_object_scope or the registry."""
    if isinstance(config, str):
        cls = _BY_NAME.get(config) or _BY_NAME.get(config.lower()) or _CLASSES.get(config)
        cls = cls or get_registered_object(config, custom_objects)
        if cls is None:
            raise ValueError(f"Could not interpret initializer identifier: {config!r}; known: "
                             f"{sorted(_BY_NAME)}")
        return cls()
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"initializers.deserialize: expected a name or a dict with 'class_name' and "
                         f"'config', got {config!r}")
    name = config.get("registered_name") or config["class_name"]
    cls = _CLASSES.get(config["class_name"]) or get_registered_object(name, custom_objects)
    if not (isinstance(cls, type) and issubclass(cls, Initializer)):
        raise ValueError(f"initializers.deserialize: unknown initializer class {config['class_name']!r}; "
                         f"known: {sorted(_CLASSES)} (pass a class of your own in custom_objects)")
    return cls.from_config(dict(config.get("config") or {}))
