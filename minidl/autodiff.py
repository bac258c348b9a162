"""Reverse-mode automatic differentiation over minidl.ops.

Built-in layers have hand-written, fused backward passes and record nothing. Code a user
writes with minidl.ops (a Layer subclass's call, a Lambda, a loss or metric function) runs
eagerly on the backend's tensor ops; while a Tape is recording, every op whose inputs need a
gradient appends a node (its output, its inputs and its gradient rule) to the tape. The tape
is per call: a custom layer's forward records one, and its backward runs the nodes in reverse,
so gradients meet the built-in layers' backward at the layer boundary. Gradient rules are
written with minidl.ops themselves (run while nothing records) and reduce broadcast gradients
to their input's shape.

`Tensor` is what minidl.ops takes and returns: a backend tensor and whether a gradient flows
to it. Its Python operators (+ - * / ** @, unary -, comparisons, indexing) are the ops of
minidl.ops, which registers them here when it is imported (this module sits below minidl.ops
in the import graph). `Variable` gives a layer's weights the same operators.
"""

import threading
from contextlib import contextmanager

_OPERATORS = {}   # operator name -> function(a, b) or function(a), filled in by minidl.ops
_state = threading.local()


def register_operators(table):
    """Called once by minidl.ops: the functions behind Tensor's and Variable's operators."""
    _OPERATORS.update(table)


def _op(name):
    if name not in _OPERATORS:
        raise RuntimeError("tensor operators need minidl.ops: `from minidl import ops` first")
    return _OPERATORS[name]


class Operators:
    """Python operators as minidl.ops calls (a mixin of Tensor and Variable)."""

    __array_priority__ = 100   # numpy defers `array + tensor` to the tensor

    def __add__(self, other):
        return _op("add")(self, other)

    def __radd__(self, other):
        return _op("add")(other, self)

    def __sub__(self, other):
        return _op("subtract")(self, other)

    def __rsub__(self, other):
        return _op("subtract")(other, self)

    def __mul__(self, other):
        return _op("multiply")(self, other)

    def __rmul__(self, other):
        return _op("multiply")(other, self)

    def __truediv__(self, other):
        return _op("divide")(self, other)

    def __rtruediv__(self, other):
        return _op("divide")(other, self)

    def __pow__(self, other):
        return _op("power")(self, other)

    def __rpow__(self, other):
        return _op("power")(other, self)

    def __mod__(self, other):
        return _op("mod")(self, other)

    def __rmod__(self, other):
        return _op("mod")(other, self)

    def __floordiv__(self, other):
        return _op("floor_divide")(self, other)

    def __rfloordiv__(self, other):
        return _op("floor_divide")(other, self)

    def __matmul__(self, other):
        return _op("matmul")(self, other)

    def __rmatmul__(self, other):
        return _op("matmul")(other, self)

    def __neg__(self):
        return _op("negative")(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _op("abs")(self)

    def __lt__(self, other):
        return _op("less")(self, other)

    def __le__(self, other):
        return _op("less_equal")(self, other)

    def __gt__(self, other):
        return _op("greater")(self, other)

    def __ge__(self, other):
        return _op("greater_equal")(self, other)

    def __getitem__(self, key):
        return _op("getitem")(self, key)

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        array = _op("convert_to_numpy")(self)
        return array if dtype is None else array.astype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    # Keras tensors compare elementwise with ==; minidl keeps == as identity so that tensors
    # stay usable in sets and `in` tests: use ops.equal / ops.not_equal.
    __hash__ = object.__hash__


class Tensor(Operators):
    """A backend tensor as minidl.ops sees it; requires_grad says a gradient flows to it."""

    __slots__ = ("value", "backend", "requires_grad")

    def __init__(self, value, backend, requires_grad=False):
        self.value = value
        self.backend = backend
        self.requires_grad = requires_grad

    @property
    def shape(self):
        return tuple(self.backend.shape(self.value))

    @property
    def dtype(self):
        return "int32" if str(self.value.dtype).startswith("int") else "float32"

    def numpy(self):
        return self.backend.to_numpy(self.value)

    def __float__(self):
        """A one-element tensor's value as a Python float (reads the device), as Keras's
        tensors allow (a learning-rate schedule written with ops)."""
        array = self.numpy()
        if array.size != 1:
            raise TypeError(f"only a one-element Tensor converts to float, got shape {self.shape}")
        return float(array.reshape(()))

    def __int__(self):
        return int(float(self))

    def __repr__(self):
        return f"<minidl Tensor shape={self.shape} dtype={self.dtype} on {self.backend.name}>"


class Variable(Operators):
    """A weight usable in minidl.ops: inside a recording call it is a leaf of the tape (its
    gradient lands in `grad`), elsewhere a constant. Subclasses hold `value`, `shape`,
    `trainable` and `grad`."""

    def as_tensor(self):
        tape = current_tape()
        if tape is not None:
            return tape.leaf(self)
        probe = getattr(_state, "probe_backend", None)
        # shape inference before attach (or of a variable still on another backend)
        if probe is not None and (self.value is None or self.backend is not probe):
            return Tensor(probe.zeros(self.shape), probe)
        if self.value is None:
            raise ValueError(f"weight {self.name!r} has no value yet: its layer is not in a "
                             "built model")
        return Tensor(self.value, _backend_of(self))

    def numpy(self):
        return self.as_tensor().numpy()


def _backend_of(variable):
    return variable.backend


class Tape:
    """The ops of one call, in the order they ran; `gradients` runs them backwards."""

    def __init__(self, backend):
        self.backend = backend
        self.nodes = []       # (output Tensor, input Tensors, rule(dout) -> grads per input)
        self._leaves = {}     # id(Variable) -> (Variable, its leaf Tensor)
        self.backwards = []      # built-in layers whose backward ran (their weight grads are filled)
        # whether the built-in layers' weight gradients add to those already there (the call
        # this tape records is not the first of its layer to be back-propagated)
        self.accumulate = False

    def leaf(self, variable):
        held = self._leaves.get(id(variable))
        if held is None:
            backend = getattr(_state, "probe_backend", None) or self.backend
            value = variable.value if variable.value is not None else backend.zeros(variable.shape)
            held = (variable, Tensor(value, backend, requires_grad=variable.trainable))
            self._leaves[id(variable)] = held
        return held[1]

    def leaf_of(self, variable):
        held = self._leaves.get(id(variable))
        return None if held is None else held[1]

    def filled_weights(self):
        """ids of the weights whose gradients built-in layers' backward wrote (those run
        inside the recorded call whose backward has run)."""
        return {id(w) for layer in self.backwards for w in layer.trainable_weights}

    def record(self, output, inputs, rule):
        """output: a Tensor, or a tuple of them for a call of several outputs (whose rule
        then takes a list of gradients, zeros for an output nothing used)."""
        self.nodes.append((output, inputs, rule))

    def gradients(self, outputs, douts, sources):
        """d(sum of outputs . douts)/d(each source) as Tensors (None where none flows)."""
        grads = {}
        for out, dout in zip(outputs, douts):
            _accumulate(grads, out, dout)
        with recording(None):
            for out, inputs, rule in reversed(self.nodes):
                if isinstance(out, tuple):   # a call of several outputs: one rule for all
                    found = [grads.pop(id(o), None) for o in out]
                    if all(g is None for g in found):
                        continue
                    given = [g[1] if g is not None else
                             Tensor(o.backend.zeros(o.shape), o.backend)
                             for g, o in zip(found, out)]
                    results = rule(given)
                else:
                    g = grads.pop(id(out), None)
                    if g is None:
                        continue
                    results = rule(g[1])
                for t, gi in zip(inputs, results):
                    if gi is not None and isinstance(t, Tensor) and t.requires_grad:
                        _accumulate(grads, t, gi)
        return [grads[id(s)][1] if id(s) in grads else None for s in sources]


def _accumulate(grads, tensor, g):
    held = grads.get(id(tensor))
    grads[id(tensor)] = (tensor, g if held is None else _op("add")(held[1], g))


def probing():
    """True while a layer's output shape is being found on a private backend."""
    return getattr(_state, "probe_backend", None) is not None


def current_tape():
    return getattr(_state, "tape", None)


@contextmanager
def recording(tape):
    """Record the ops run inside onto `tape` (None: record nothing)."""
    saved = getattr(_state, "tape", None)
    _state.tape = tape
    try:
        yield tape
    finally:
        _state.tape = saved


def current_call_scope():
    """{id(layer): its calls so far} of the eager computation running (layers/eager_calls.py),
    or None outside one."""
    return getattr(_state, "calls", None)


@contextmanager
def call_scope():
    """One eager computation (a custom layer's call, a GradientTape block, a train_step): the
    built-in layers called inside count their calls afresh."""
    saved = getattr(_state, "calls", None)
    _state.calls = {}
    try:
        yield
    finally:
        _state.calls = saved


def current_backend(default=None):
    """The backend that creation ops (ops.ones, ops.arange, ...) allocate on inside a call."""
    return getattr(_state, "backend", None) or default


@contextmanager
def on_backend(backend, probe=False):
    """Creation ops inside allocate on `backend`; probe=True also gives weights without values
    zeros there (shape inference before a model uploads its weights)."""
    saved = (getattr(_state, "backend", None), getattr(_state, "probe_backend", None))
    _state.backend = backend
    if probe:
        _state.probe_backend = backend
    try:
        yield
    finally:
        _state.backend, _state.probe_backend = saved
