"""Keras 3's top-level names that are not layers or models: Variable, InputSpec,
Operation, Function, FloatDTypePolicy, device, name_scope and version.

    v = minidl.Variable(np.ones((2, 3)), name="w")     # on the active backend
    v.assign_add(np.ones((2, 3)))
    with minidl.device("numpy"):                         # models built inside use numpy
        ...
"""

import contextlib
import threading

import numpy as np

from . import initializers
from ._version import __version__
from .backends import get_backend, set_backend
from .layers.base import KerasTensor, Layer, Weight
from .layers.input_spec import InputSpec
from .mixed_precision import DTypePolicy
from .naming import auto_name

_scopes = threading.local()


def version():
    """minidl's version (keras.version() gives Keras's)."""
    return __version__


# ------------------------------------------------------------------ Variable
class _VariableMeta(type):
    """isinstance(layer.kernel, minidl.Variable) holds, as in Keras: every layer weight is a
    Variable, though layers make them with add_weight rather than this class."""

    def __instancecheck__(cls, obj):
        if cls is Variable:
            return isinstance(obj, Weight)
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub):
        if cls is Variable:
            return isinstance(sub, type) and issubclass(sub, Weight)
        return super().__subclasscheck__(sub)


class Variable(Weight, metaclass=_VariableMeta):
    """keras.Variable(initializer, shape=None, dtype=None, trainable=True, name=None).

    `initializer` is an array (or number), or an initializer (a name, an instance or a
    callable of the shape) with `shape` given. The value lives on the active backend
    from creation on; minidl's variables are float32."""

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None, **kwargs):
        if name is not None and (not isinstance(name, str) or not name or "/" in name):
            raise ValueError(f"Variable: name must be a non-empty string without '/', got {name!r}")
        name = name or auto_name("variable")
        owner = f"Variable {name!r}"
        if kwargs:
            raise TypeError(f"{owner}: unexpected keyword arguments {sorted(kwargs)}")
        if dtype is not None and str(getattr(dtype, "name", dtype)) != "float32":
            raise TypeError(f"{owner}: dtype must be 'float32' (or None), the one dtype minidl "
                            f"computes in; got {dtype!r}")
        if isinstance(initializer, str) or isinstance(initializer, initializers.Initializer) \
                or (callable(initializer) and not hasattr(initializer, "shape")):
            if shape is None:
                raise ValueError(f"When creating a Variable from an initializer, the `shape` "
                                 f"argument should be specified. Received: "
                                 f"initializer={initializer!r} and shape=None")
            init = initializers.get(initializer)
            shape = tuple(int(d) for d in shape)
            values = np.asarray(init(shape), dtype=np.float32)
        else:
            if hasattr(initializer, "numpy") and not isinstance(initializer, np.ndarray):
                initializer = initializer.numpy()
            values = np.asarray(initializer)
            if values.dtype.kind not in "biuf":
                raise TypeError(f"{owner}: the initial value must be numbers, got dtype "
                                f"{values.dtype}")
            values = values.astype(np.float32)
            if shape is not None and tuple(shape) != values.shape:
                raise ValueError(f"{owner}: shape {tuple(shape)} does not match the initial "
                                 f"value's shape {values.shape}")
        # the initializer gives the current values: a layer that takes the variable over
        # (Layer.__setattr__) uploads them to its model's backend when it is built
        super().__init__(name, values.shape,
                         lambda s, dtype=None: self.backend.to_numpy(self.value).copy(),
                         bool(trainable))
        self._path = "/".join(_scope_stack() + [name])
        self.autocast = autocast
        self.aggregation = aggregation
        self.synchronization = synchronization
        backend = get_backend()
        self.backend = backend
        self.value = backend.from_numpy(values)
        self.grad = backend.zeros(self.shape) if self.trainable else None

    _standalone_variable = True   # a layer that holds one tracks it as a weight (Layer.__setattr__)

    def __repr__(self):
        return (f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}, "
                f"value={self.numpy()}>")

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)


class FloatDTypePolicy(DTypePolicy):
    """keras.FloatDTypePolicy: a DTypePolicy of float compute and variable dtypes (every
    policy minidl has is one)."""


# ------------------------------------------------------- Operation, Function
class Operation:
    """keras.Operation: subclass it and define call(*args); calling the operation on
    arrays or minidl tensors runs call, on symbolic tensors (Input()) it becomes a layer
    of the model (the output shape found by running call, or by your
    compute_output_spec)."""

    def __init__(self, name=None):
        self.name = name or auto_name(_snake(type(self).__name__))

    def call(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: an Operation must define call()")

    def __call__(self, *args, **kwargs):
        if any(isinstance(a, KerasTensor) for a in args) or \
                any(isinstance(a, (list, tuple)) and any(isinstance(t, KerasTensor) for t in a)
                    for a in args):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def symbolic_call(self, *args, **kwargs):
        from .layers.lambda_layer import Lambda
        if len(args) != 1:
            raise ValueError(f"Operation {self.name!r}: on symbolic tensors it takes one "
                             f"positional argument (a tensor or a list of them), got {len(args)}")
        op = self

        class _OperationLayer(Lambda):   # runs call as a layer; never saved by name
            def get_config(self):
                raise ValueError(f"Operation {op.name!r} used in a model cannot be saved: "
                                 "wrap it in a registered custom layer")

        layer = _OperationLayer(lambda x: op.call(x, **kwargs), name=self.name)
        return layer(args[0])

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _snake(name):
    from .naming import snake_case
    return snake_case(name)


class Function:
    """keras.Function(inputs, outputs): the computation from symbolic inputs to outputs,
    callable on arrays (a model without training)."""

    def __init__(self, inputs, outputs, name=None):
        from .models import Model
        self._model = Model(inputs, outputs, name=name or auto_name("function"))
        self.name = self._model.name
        self.inputs = inputs
        self.outputs = outputs

    def __call__(self, inputs):
        return self._model(inputs)


# ----------------------------------------------------- device and name_scope
_DEVICE_BACKENDS = {"cpu": "cpu", "gpu": "opencl", "opencl": "opencl", "numpy": "numpy"}


@contextlib.contextmanager
def device(device_name):
    """Inside the block, the backend named by `device_name` is the active one (models
    built there use it): "cpu" (or "cpu:0"), "gpu"/"opencl" (the opencl backend) or "numpy".
    The previous backend is active again after the block."""
    if not isinstance(device_name, str):
        raise TypeError(f"device: device_name must be a string such as 'cpu:0', got "
                        f"{type(device_name).__name__}")
    kind = device_name.strip().lower().split(":")[0]
    if kind not in _DEVICE_BACKENDS:
        raise ValueError(f"device: unknown device {device_name!r}; minidl's devices are "
                         f"{sorted(_DEVICE_BACKENDS)} (gpu is the opencl backend)")
    previous = get_backend()
    set_backend(_DEVICE_BACKENDS[kind])
    try:
        yield
    finally:
        set_backend(previous)


def _scope_stack():
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


class name_scope:
    """keras.name_scope(name): variables made inside get paths "name/variable"; scopes nest."""

    def __init__(self, name, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name_scope: name must be a non-empty string, got {name!r}")
        self.name = name
        self.caller = caller
        self.deduplicate = deduplicate
        self.override_parent = override_parent
        self._pushed = []

    def __enter__(self):
        stack = _scope_stack()
        if self.override_parent is not None:
            self._saved = list(stack)
            stack[:] = [p for p in self.override_parent.split("/") if p]
        if not (self.deduplicate and stack and stack[-1] == self.name):
            stack.append(self.name)
            self._pushed.append(True)
        else:
            self._pushed.append(False)
        return self

    def __exit__(self, *exc):
        stack = _scope_stack()
        if self._pushed.pop():
            stack.pop()
        if self.override_parent is not None:
            stack[:] = self._saved
        return False


__all__ = ["FloatDTypePolicy", "Function", "InputSpec", "KerasTensor", "Layer", "Operation",
           "Variable", "device", "name_scope", "version"]
