"""Model subclassing, as Keras's "Making new layers and models via subclassing" guide:

    class MLP(minidl.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense1 = layers.Dense(32, activation="relu")
            self.dense2 = layers.Dense(10, activation="softmax")

        def call(self, inputs, training=False):
            return self.dense2(self.dense1(inputs))

A subclass of Model that defines call() gets SubclassedModel as its base (model.py's
metaclass). Its computation is one custom layer, ModelCallLayer, whose call is the model's:
the mechanism of every Layer subclass written with minidl.ops (layers/custom_call.py). The
built-in layers called inside keep their fused forward and backward kernels; the ops between
them are recorded by autodiff in training. The model is a functional graph Input -> that one
layer, made when the input shape is known (build(), or the first fit / evaluate / predict /
call on data), so compile, the training loops, saving weights and nesting are Model's own.

The model's layers are the layers and models set as its attributes (tracking.py), in the
order they were set; their weights are the model's, in that order. A call that returns a list
or a dict of tensors gives the model several outputs: the call layer's node has one output
per tensor (named by the dict's keys, or output_0, output_1, ...).
"""

import inspect
import math
from collections.abc import Mapping

import numpy as np

from .. import ops
from ..backends import get_backend
from ..custom_objects import custom_object_scope, get_registered_name, get_registered_object
from ..layers.base import KerasTensor, Layer
from ..layers.input_layer import Input
from ..layers import custom_call
from . import tracking
from .custom_steps import CustomSteps
from .model import Model, register_subclass_base
from .registry import register
from .summary import summary_lines


MAX_SAMPLE = 1 << 24   # elements of one input sample that a model file may ask a build for


def _accepts_training(model):
    """Whether model.call takes training= (Keras passes it only then)."""
    cls = type(model)
    cached = cls.__dict__.get("_call_takes_training")
    if cached is None:
        cached = "training" in inspect.signature(model.call).parameters
        cls._call_takes_training = cached
    return cached


class ModelVariables(Layer):
    """The weights a subclassed model makes itself with add_weight (Perceiver's latent array,
    made in build): Keras 3 lists a model's own variables before its layers', so this holder
    comes first among the model's weighted layers (its weights, get_weights, files) when it
    holds any. It computes nothing: the model's call reads its weights as tensors."""

    def __init__(self, model):
        super().__init__(name=model.name)
        self.model = model
        self.built = True

    def describe(self):
        return self.model.describe()


class ModelCallLayer(Layer):
    """The custom layer whose call is a subclassed model's call; its sublayers (and so its
    weights) are the model's tracked layers and models."""

    def __init__(self, model):
        super().__init__(name=model.name)
        self.model = model
        self.structure = None   # the output names when call returns several (a dict or list)
        self.structure_is_dict = False

    def describe(self):
        return self.model.describe()

    def call(self, inputs, training=None):
        if _accepts_training(self.model):
            result = self.model.call(inputs, training=bool(training))
        else:
            result = self.model.call(inputs)
        if isinstance(result, Mapping):   # several outputs by name: one graph output each
            self.structure, self.structure_is_dict = [str(k) for k in result], True
            return list(result.values())
        if isinstance(result, (list, tuple)):
            self.structure = [f"output_{i}" for i in range(len(result))]
            self.structure_is_dict = False
            return list(result)
        return result

    @property
    def output_part_names(self):
        """The name of each output when call returns several (the dict's keys, or output_0,
        output_1, ...): the model's output names (Graph._producer_name)."""
        return self.structure

    def sublayers(self):
        return self.model._weighted_layers

    def _build_keras_style(self, input_shape, eager=False):
        # Run call once on a one-sample batch of zeros, in inference mode, on the backend
        # the model will live on: the layers inside build from the shapes they see and upload
        # their initial weights there, in the order call uses them (as Sequential's would).
        backend = get_backend()
        self.backend = backend
        own = self.model._variables
        if own.weights and own.backend is not backend:   # add_weight's, read by call
            own.attach(backend)
        found = custom_call.infer_output_shape(self, input_shape, backend)
        self.output_shape = found if isinstance(found, list) else tuple(found)

    def attach(self, backend, initial_values=None):
        """Move to another backend (weights drawn again there, as Layer.attach does)."""
        self.backend = backend
        for item in self.sublayers():
            if isinstance(item, Layer):
                item.attach(backend)
            elif item.graph is not None:
                item.graph.attach(backend)
            else:
                item._call_layer.attach(backend)


@register
class SubclassedModel(CustomSteps, Model):
    """The base of a Model subclass that defines call(inputs, training=False); see the
    module docstring."""

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, dtype=None):
        if inputs is not None or outputs is not None:
            raise ValueError(f"{type(self).__name__} defines call(), so it computes with it: "
                             "create it without inputs / outputs (or drop call to make a "
                             "functional subclass)")
        super().__init__(name=name)
        if dtype is not None and np.dtype(dtype) != np.float32:
            raise TypeError(f"{self.describe()}: dtype must be 'float32' (or None), got {dtype!r}")
        self._call_layer = ModelCallLayer(self)
        self._variables = ModelVariables(self)   # what add_weight makes
        self._pending_compile = None
        self._trainable = bool(trainable)

    def call(self, inputs, training=False):
        raise NotImplementedError(f"{type(self).__name__} must define call(inputs)")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _completing_build(cls.__dict__["build"])

    # ------------------------------------------------------------ structure
    def tracked_layers(self):
        """The layers and models set as attributes, in the order they were set."""
        return tracking.tracked_items(self, skip=(self._call_layer, self._variables))

    @property
    def layers(self):
        return self.tracked_layers()

    @property
    def _weighted_layers(self):
        """The tracked layers, after the holder of the model's own weights when add_weight
        made some (Keras 3's order): what weights, get_weights and weight files list."""
        own = [self._variables] if self._variables.weights else []
        return own + self.tracked_layers()

    def add_weight(self, *args, **kwargs):
        """A weight of the model itself, as Keras 3's Model.add_weight (a Model is a Layer):
        the arguments of Layer.add_weight; made in build() or __init__, read in call(). It
        trains, is counted and saved with the model's other weights."""
        if self.graph is not None:
            raise ValueError(f"{self.describe()}.add_weight: the model is built already; make "
                             "its weights in __init__ or build(input_shape)")
        return self._variables.add_weight(*args, **kwargs)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        Model.trainable.fset(self, value)
        self._call_layer.trainable = bool(value)
        self._variables.trainable = bool(value)

    def summary(self, line_length=None, positions=None, print_fn=print, expand_nested=False,
                show_trainable=False, layer_range=None):
        """The table of the tracked layers (as Keras 3 prints it, before a build too:
        an unbuilt layer's output shape is "?")."""
        for line in summary_lines(self, show_trainable):
            print_fn(line)

    # ------------------------------------------------------------ building
    def build(self, input_shape=None):
        """Build for inputs of `input_shape`, batch axis first: (None, 784), or a list of
        such shapes for a call that takes a list of inputs."""
        if self.graph is not None:
            return
        owner = f"{self.describe()}.build"
        many = isinstance(input_shape, list) and all(isinstance(s, (list, tuple))
                                                     for s in input_shape)
        shapes = input_shape if many else [input_shape]
        for s in shapes:
            if not isinstance(s, (list, tuple)) or len(s) < 2:
                raise ValueError(f"{owner}: input_shape must be (batch, *shape), e.g. "
                                 f"(None, 784), or a list of them; got {input_shape!r}")
        inputs = [Input(tuple(s)[1:], name=f"{self.name}_input_{i}" if many else
                        f"{self.name}_input") for i, s in enumerate(shapes)]
        layer = self._call_layer
        try:
            out = layer(inputs if many else inputs[0])
        except Exception:
            layer.built, layer._inbound_nodes = False, []   # ready for another shape
            raise
        self._set_graph(inputs if many else inputs[0], self._outputs_of(out))
        if self._pending_compile is not None:
            pending, self._pending_compile = self._pending_compile, None
            # this class's compile, not an override: a subclass's compile(optimizer, metrics,
            # student_loss_fn, ...) deferred exactly these arguments through super().compile
            SubclassedModel.compile(self, **pending)

    def _outputs_of(self, out):
        """The graph's outputs: the call layer's output, or its outputs as call returned
        them (a dict by name or a list) when it returns several."""
        if not isinstance(out, list):
            return out
        if self._call_layer.structure_is_dict:
            return dict(zip(self._call_layer.structure, out))
        return out

    def _build_from_data(self, x):
        if self.graph is not None:
            return
        if isinstance(x, np.ndarray):
            self.build((None,) + x.shape[1:])
        elif isinstance(x, (list, tuple)) and x and all(isinstance(a, np.ndarray) for a in x):
            shapes = [(None,) + a.shape[1:] for a in x]
            self.build(shapes if len(shapes) > 1 else shapes[0])
        elif isinstance(getattr(x, "output_shape", None), tuple):   # data.ArrayIterator
            self.build((None,) + x.output_shape)

    def _build_for(self, inputs):
        if self.graph is None and isinstance(inputs, KerasTensor):
            self.build(inputs.shape)
        elif self.graph is None and isinstance(inputs, (list, tuple)) and inputs and all(
                isinstance(t, KerasTensor) for t in inputs):
            self.build([t.shape for t in inputs])
        else:
            self._build_from_data(inputs)
        self._require_built("a call")

    def _call_tensors(self, inputs, training):
        """Called on minidl.ops Tensors (in another model's call or a train_step): the
        model's call, recorded on the tape that records. A model first called this way (one
        subclassed model inside another) is built from the tensors' shapes first, so that
        its weights can be read and set on their own too."""
        if self.graph is None:
            many = isinstance(inputs, (list, tuple))
            shapes = [(None,) + tuple(ops.shape(t))[1:] for t in (inputs if many else [inputs])]
            self.build(shapes if many else shapes[0])
        if _accepts_training(self):
            return self.call(inputs, training=bool(training))
        return self.call(inputs)

    def _require_built(self, what):
        if self.graph is None:
            raise ValueError(f"{self.describe()} has not yet been built, so {what}() cannot "
                             "run. Build it first by calling build(input_shape) or by calling "
                             "the model on a batch of data (fit, predict, model(x))")

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, **kwargs):
        """As Model.compile; before the model is built (the usual order for a subclassed
        model) the optimizer and loss names are checked now and the rest when the first
        data builds it."""
        if self.graph is None:
            from .. import losses, optimizers
            optimizers.get(optimizer)
            if loss is not None and not isinstance(loss, (list, dict)):
                losses.get(loss)
            self._pending_compile = dict(optimizer=optimizer, loss=loss, metrics=metrics,
                                         **kwargs)
            return
        super().compile(optimizer, loss, metrics, **kwargs)

    # ------------------------------------------------------------ config
    def get_config(self):
        """{"name", "trainable"}: as Keras, a subclass whose __init__ takes arguments of its
        own returns them too (override get_config, and from_config if needed)."""
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        with custom_object_scope(custom_objects):
            return cls(**config)

    def saved_architecture(self):
        """What model.save() writes for the architecture: the class by its registered name
        and get_config(), never code; loading needs the class in custom_objects (or
        registered), as Keras."""
        self._require_built("save")
        return {"class_name": "SubclassedModel", "class": get_registered_name(self),
                "config": self.get_config(),
                "input_shapes": [list(t.sample_shape) for t in self.graph.inputs],
                "input_structure": self.graph.input_structure}

    @staticmethod
    def restore(architecture, path, error):
        """The model saved_architecture() describes, built (fresh weights): its class from
        custom_objects, from_config, build. Anything wrong raises `error` naming `path`."""
        name = architecture.get("class")
        cls = get_registered_object(name) if isinstance(name, str) else None
        if not (isinstance(cls, type) and issubclass(cls, SubclassedModel)):
            raise error(f"{path}: the model is a subclassed model of class {name!r}; pass the "
                        f"class in custom_objects={{{name!r}: {name}}} (a file never holds code)")
        shapes = architecture.get("input_shapes")
        # Building runs call on one sample of each input: bounded (MAX_SAMPLE elements), so
        # that a file cannot make the build allocate without limit.
        if not (isinstance(shapes, list) and 0 < len(shapes) <= 64 and all(
                isinstance(s, list) and all(type(d) is int and d > 0 for d in s)
                and math.prod(s) <= MAX_SAMPLE for s in shapes)) \
                or not isinstance(architecture.get("config"), dict):
            raise error(f"{path}: the subclassed model's config or input shapes are malformed "
                        f"(each input at most {MAX_SAMPLE} elements per sample)")
        try:
            model = cls.from_config(architecture["config"])
            batched = [(None,) + tuple(s) for s in shapes]
            model.build(batched if architecture.get("input_structure") == "list" else batched[0])
        except (KeyError, TypeError, ValueError) as exc:
            raise error(f"{path}: {cls.__name__} cannot be rebuilt from its config: {exc}") from None
        return model


def _completing_build(build):
    """A subclass's build(input_shape) (making weights with add_weight, or sublayers), then
    SubclassedModel's when it did not call super().build: Keras marks a model built after
    its build, whether or not that called super's."""
    def completing_build(self, input_shape=None):
        if self.graph is not None:
            return
        build(self, input_shape)
        if self.graph is None:
            SubclassedModel.build(self, input_shape)

    completing_build.__name__, completing_build.__doc__ = build.__name__, build.__doc__
    completing_build.__qualname__ = build.__qualname__
    return completing_build


def _built_first(name):
    """The Model method `name`, building the model from x's shape first."""
    method = getattr(Model, name)

    def built_first(self, x=None, *args, **kwargs):
        self._build_from_data(x)
        return getattr(super(SubclassedModel, self), name)(x, *args, **kwargs)

    built_first.__name__ = name
    built_first.__doc__ = method.__doc__
    return built_first


for _name in ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch",
              "predict_on_batch"):
    setattr(SubclassedModel, _name, _built_first(_name))

def _bases(bases, namespace):
    """A Model subclass's bases: Model becomes SubclassedModel when the class defines call
    (and does not derive from another subclassed model); a class that defines train_step or
    test_step gets CustomSteps first (any model: functional, Sequential or subclassed)."""
    if "call" in namespace and Model in bases:
        bases = tuple(SubclassedModel if b is Model else b for b in bases)
    if ("train_step" in namespace or "test_step" in namespace) and not any(
            issubclass(b, CustomSteps) for b in bases):
        bases = (CustomSteps,) + tuple(bases)
    return bases


register_subclass_base(_bases)
