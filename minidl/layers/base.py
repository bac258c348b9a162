"""Layer base class, symbolic tensors and the Input layer.

A layer's life follows Neon's fixed lifecycle:

1. `__init__` stores hyperparameters (`get_config` returns exactly them);
2. `build(input_shape)` checks shapes and declares weights (shapes without the batch axis);
3. `attach(backend)` uploads the initial weights and allocates their gradients, once;
4. `forward(inputs, training)` / `backward(dout)` run every step on per-batch-size buffers
   obtained through `self.buffer(...)`, allocated on first use and reused afterwards.

A layer never computes with numpy: all math goes through `self.backend`.
"""

import numpy as np

from .. import initializers
from .input_arguments import LayerMeta

_name_counters = {}


def _auto_name(prefix):
    count = _name_counters.get(prefix, 0)
    _name_counters[prefix] = count + 1
    return prefix if count == 0 else f"{prefix}_{count}"


def _snake_case(name):
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and (not name[i - 1].isupper() or
                                       (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out).replace("2_d", "2d")


def int_tuple(value, argument, owner, allow_minus_one=False):
    """A tuple of positive ints (one -1 allowed when asked) or a TypeError/ValueError naming it."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{owner}: {argument} must be a tuple of ints, got {value!r}")
    items = tuple(value)
    if not items or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                            for d in items):
        raise TypeError(f"{owner}: {argument} must be a non-empty tuple of ints, got {value!r}")
    items = tuple(int(d) for d in items)
    minus_ones = sum(d == -1 for d in items)
    if any(d <= 0 and not (d == -1 and allow_minus_one) for d in items) or minus_ones > 1:
        extra = " and at most one -1" if allow_minus_one else ""
        raise ValueError(f"{owner}: {argument} must hold positive ints{extra}, got {items}")
    return items


def check_number(value, argument, owner, low=None, high=None, low_inclusive=True):
    """A finite float within [low, high) (or (low, ...) when not low_inclusive), else an error
    naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{owner}: {argument} must be a number, got {value!r}")
    value = float(value)
    bad = not np.isfinite(value)
    if low is not None:
        bad = bad or (value < low if low_inclusive else value <= low)
    if high is not None:
        bad = bad or value >= high
    if bad:
        lo = "" if low is None else f"{'>=' if low_inclusive else '>'} {low}"
        hi = "" if high is None else f"< {high}"
        rule = " and ".join(r for r in (lo, hi) if r) or "finite"
        raise ValueError(f"{owner}: {argument} must be finite and {rule}, got {value!r}")
    return value


def format_shape(shape):
    """(32, 32, 3) -> '(None, 32, 32, 3)': shapes in messages always show the batch axis."""
    return "(" + ", ".join(["None"] + [str(d) for d in shape]) + ")"


class KerasTensor:
    """A symbolic tensor: the output of a layer in a model graph (shape without batch axis)."""

    dtype = "float32"

    def __init__(self, shape, layer):
        self.shape = tuple(int(d) for d in shape)
        self.layer = layer

    def __repr__(self):
        return f"<KerasTensor shape={format_shape(self.shape)} from {self.layer.name!r}>"


class Weight:
    """One trainable or non-trainable weight: its backend tensor and gradient."""

    def __init__(self, name, shape, initializer, trainable):
        self.name = name
        self.shape = tuple(shape)
        self.initializer = initializer
        self.trainable = trainable
        self.value = None   # backend tensor, set by Layer.attach
        self.grad = None    # backend tensor (trainable weights only)


class Layer(metaclass=LayerMeta):
    """Base class of every layer (input_shape= and the like are taken by LayerMeta)."""

    # Layers whose forward takes a list of tensors (Add, Concatenate) set this.
    multiple_inputs = False

    def __init__(self, name=None, trainable=True):
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        self.name = name or _auto_name(_snake_case(type(self).__name__))
        self.trainable = trainable
        self.built = False
        self.backend = None
        self.input_shape = None
        self.output_shape = None
        self.weights_by_name = {}
        self.inbound = []      # KerasTensors this layer was called on (functional graphs)
        self.output = None     # the KerasTensor it produced
        self._buffers = {}
        # The model clears this for layers fed only by model inputs: their dx is never used.
        self.input_grad_needed = True

    # ------------------------------------------------------------ config
    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def describe(self):
        """'Dense 'dense_2'': how messages name this layer."""
        return f"{type(self).__name__} {self.name!r}"

    # ------------------------------------------------------------ graph
    def __call__(self, inputs):
        if self.output is not None:
            raise ValueError(f"{self.describe()} was already called on an input; create a new "
                             "layer instead of reusing one (shared layers are not supported)")
        tensors = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        for t in tensors:
            if not isinstance(t, KerasTensor):
                raise TypeError(f"{self.describe()} must be called on the output of Input() or "
                                f"another layer, got {type(t).__name__}")
        if self.multiple_inputs != isinstance(inputs, (list, tuple)):
            kind = "a list of tensors" if self.multiple_inputs else "a single tensor"
            raise TypeError(f"{self.describe()} must be called on {kind}")
        shapes = [t.shape for t in tensors]
        self.build_once(shapes if self.multiple_inputs else shapes[0])
        self.inbound = tensors
        self.output = KerasTensor(self.output_shape, self)
        return self.output

    def build_once(self, input_shape):
        if self.built:
            if input_shape != self.input_shape:
                raise ValueError(f"{self.describe()} was built for input shape "
                                 f"{self._shape_text(self.input_shape)}, got "
                                 f"{self._shape_text(input_shape)}")
            return
        self.input_shape = input_shape
        self.build(input_shape)
        self.output_shape = tuple(self.compute_output_shape(input_shape))
        self.built = True

    def _shape_text(self, shape):
        if self.multiple_inputs:
            return "[" + ", ".join(format_shape(s) for s in shape) + "]"
        return format_shape(shape)

    def build(self, input_shape):
        """Check the input shape and declare weights (no batch axis)."""

    def compute_output_shape(self, input_shape):
        return input_shape

    def expect_rank(self, input_shape, rank, what):
        if len(input_shape) != rank:
            raise ValueError(f"{self.describe()} expects {what} inputs of rank {rank + 1} "
                             f"(batch included), got shape {format_shape(input_shape)}")

    # ----------------------------------------------------------- weights
    def add_weight(self, name, shape, initializer, trainable=True):
        weight = Weight(name, shape, initializers.get(initializer), trainable)
        self.weights_by_name[name] = weight
        return weight

    @property
    def weights(self):
        return list(self.weights_by_name.values())

    @property
    def trainable_weights(self):
        return [w for w in self.weights if w.trainable and self.trainable]

    @property
    def non_trainable_weights(self):
        trainable = self.trainable_weights
        return [w for w in self.weights if not any(w is t for t in trainable)]

    def count_params(self):
        return int(sum(np.prod(w.shape) for w in self.weights))

    def attach(self, backend, initial_values=None):
        """Upload initial weights to `backend` and allocate gradients (once per model)."""
        self.backend = backend
        self._buffers = {}
        for w in self.weights:
            value = w.initializer(w.shape)
            w.value = backend.from_numpy(np.asarray(value))
            w.grad = backend.zeros(w.shape) if w.trainable else None

    def get_weights(self):
        return [self.backend.to_numpy(w.value) if self.backend else None for w in self.weights]

    def set_weights(self, values):
        weights = self.weights
        if len(values) != len(weights):
            raise ValueError(f"{self.describe()} has {len(weights)} weights "
                             f"({[w.name for w in weights]}), got {len(values)} arrays")
        for w, v in zip(weights, values):
            v = np.asarray(v)
            if tuple(v.shape) != w.shape:
                raise ValueError(f"{self.describe()}: weight {w.name!r} has shape {w.shape}, "
                                 f"got an array of shape {tuple(v.shape)}")
            if not np.all(np.isfinite(v)):
                raise ValueError(f"{self.describe()}: weight {w.name!r} has non-finite values")
        for w, v in zip(weights, values):
            self.backend.copy_from_host(w.value, np.asarray(v, dtype=np.float64))

    # ---------------------------------------------------------- buffers
    def buffer(self, key, shape, dtype="float32"):
        """A backend tensor owned by this layer, allocated on first use for this shape."""
        shape = tuple(shape)
        slot = (key, shape, dtype)
        buf = self._buffers.get(slot)
        if buf is None:
            buf = self._buffers[slot] = self.backend.empty(shape, dtype)
        return buf

    # --------------------------------------------------------- compute
    def forward(self, inputs, training):
        """Return the output tensor for `inputs` (a tensor, or a list for merge layers)."""
        raise NotImplementedError

    def backward(self, dout):
        """Given dL/doutput, fill the weight gradients and return dL/dinput (a list for
        merge layers). Called after forward with the same batch."""
        raise NotImplementedError


class InputLayer(Layer):
    """The graph's entry point; Input(shape) returns its output tensor."""

    _shape_argument = "shape"   # input_shape= / batch_input_shape= land here (LayerMeta)

    def __init__(self, shape=None, name=None, dtype="float32", batch_size=None, batch_shape=None):
        if shape is None and batch_shape is not None:
            shape = tuple(batch_shape)[1:]  # minidl's batch axis is free: batch_size too
        if shape is None:
            raise ValueError("Input: shape (without the batch axis) is required, e.g. "
                             "Input(shape=(32, 32, 3))")
        super().__init__(name=name or _auto_name("input_layer"))
        self.shape = int_tuple(shape, "shape (without the batch axis)", "Input")
        self.build_once(shape)
        self.output = KerasTensor(shape, self)

    def get_config(self):
        return {"shape": list(self.shape), "name": self.name}

    def forward(self, inputs, training):
        return inputs

    def backward(self, dout):
        return None


def Input(shape=None, batch_size=None, dtype="float32", batch_shape=None, name=None):
    """A symbolic model input of `shape` (without the batch axis), as keras.Input."""
    return InputLayer(shape, name=name, dtype=dtype, batch_size=batch_size,
                      batch_shape=batch_shape).output


def count_elements(shape):
    return int(np.prod(shape)) if shape else 1


__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Weight", "format_shape"]
