"""Sequential: a plain stack of layers, each feeding the next.

As in Keras, the input shape comes from the first of:
  1. a layers.Input(shape) (or InputLayer) as the first entry;
  2. input_shape= / batch_input_shape= / input_dim= on the first layer (Keras 2 style);
  3. model.build(input_shape), or the first fit / evaluate / predict / train_on_batch /
     model(x), which take it from the data.
Until then the model holds its layers unbuilt: compile() is remembered and applied once it
is built; summary(), save() and weight access raise a "not built" error.
"""

import numpy as np

from ..custom_objects import custom_object_scope
from ..layers.base import KerasTensor, Layer, sample_shape
from ..layers.input_layer import Input, InputLayer
from ..naming import auto_name
from ..string_tensors import STRING, is_string_array
from .config import deserialize_item, item_spec
from .graph import Graph
from .model import Model
from .registry import register


@register
class Sequential(Model):
    """Sequential([layers.Input(shape), layer, layer, ...]), or layers alone (see above).

    The model's weights are uploaded on the backend active when it is built. add() and
    pop() keep the weights of the layers that stay.
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._stack = []
        self._outputs = []      # the output tensor of each layer of the stack, once built
        self._input = None
        self._output = None
        self._pending_compile = None
        if layers is not None:
            if not isinstance(layers, (list, tuple)):
                raise TypeError(f"{self.describe()}: layers must be a list, got "
                                f"{type(layers).__name__}")
            for layer in layers:
                self._add(layer, rebuild=False)
            self._rebuild()

    # --------------------------------------------------------- structure
    def add(self, layer):
        """Append a layer (or set the input with layers.Input(shape) first)."""
        self._add(layer, rebuild=True)

    def _add(self, layer, rebuild):
        if isinstance(layer, InputLayer):
            layer = layer.output
        if isinstance(layer, KerasTensor):
            if self._input is not None or self._stack:
                raise ValueError(f"{self.describe()}: Input must be the first entry only")
            if not isinstance(layer.layer, InputLayer):
                raise ValueError(f"{self.describe()}: only Input() tensors can start a Sequential")
            self._input = self._output = layer
        elif isinstance(layer, (Layer, Model)):
            if layer.multiple_inputs:
                raise ValueError(f"{self.describe()}: {layer.describe()} merges several inputs; "
                                 "use the functional Model for it")
            if any(layer is other for other in self._stack):
                raise ValueError(f"{self.describe()}: {layer.describe()} is already in the model")
            shape = getattr(layer, "_input_shape_arg", None)
            if isinstance(layer, Model) and layer.graph is not None:
                shape = layer.graph.inputs[0].sample_shape   # a built nested model
            if self._input is None and not self._stack and shape is not None:
                self._input = self._output = Input(shape)
            if self._input is not None:
                self._output = layer(self._output)
                self._outputs.append(self._output)
            self._stack.append(layer)
        else:
            raise TypeError(f"{self.describe()}: expected a layer, got {type(layer).__name__}")
        if rebuild:
            self._rebuild()

    def pop(self):
        """Remove the last layer; the remaining layers keep their weights."""
        if not self._stack:
            raise IndexError(f"{self.describe()}.pop: there are no layers to remove")
        self._stack.pop()
        if self._input is not None:
            self._outputs = self._outputs[:-1]
            self._output = self._outputs[-1] if self._outputs else self._input
            if not self._stack:
                self.graph = None
                self.compiled = False
        self._rebuild()

    def _rebuild(self):
        if self._input is None or not self._stack:
            return
        # A new graph over the same layers (and their weights).
        backend = self.graph.backend if self.graph is not None else None
        self.graph = Graph(self._input, self._output, self.describe())
        self.graph.attach(backend)   # layers already on that backend keep their weights
        self._buffers.reset(self.graph.backend)
        self.compiled = False
        if self._pending_compile is not None:
            pending, self._pending_compile = self._pending_compile, None
            Sequential.compile(self, **pending)   # not an override (see subclassing.py)

    @property
    def layers(self):
        return list(self._stack)

    def get_config(self):
        """{"class_name", "name", "trainable", "layers": [the InputLayer, then each layer or
        nested model as {"class_name", "config"}]}."""
        self._require_built("get_config")
        return {"class_name": "Sequential", "name": self.name, "trainable": self.trainable,
                "layers": [item_spec(self._input.layer)] + [item_spec(l) for l in self._stack]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new Sequential from get_config()'s dict (its first layer is the InputLayer)."""
        with custom_object_scope(custom_objects):
            model = cls([deserialize_item(spec) for spec in config["layers"]],
                        name=config["name"])
        if config.get("trainable") is False:
            model.trainable = False
        return model
    # ----------------------------------------------------------- building
    @property
    def built(self):
        return self.graph is not None

    def build(self, input_shape=None):
        """Build for inputs of `input_shape`, batch axis included: build((None, 28, 28, 1))."""
        if input_shape is None:
            if self.graph is not None:
                return
            raise ValueError(f"{self.describe()}.build: pass input_shape (batch axis first, "
                             "e.g. (None, 784)); the layers do not say their input shape")
        if isinstance(input_shape, (str, bytes)) or not hasattr(input_shape, "__len__") \
                or len(input_shape) < 2:
            raise ValueError(f"{self.describe()}.build: input_shape must be (batch, *shape), "
                             f"e.g. (None, 784), got {input_shape!r}")
        shape = sample_shape(tuple(input_shape)[1:], "input_shape (after the batch axis)",
                          f"{self.describe()}.build")
        if self._input is not None:
            if shape != self._input.sample_shape:
                raise ValueError(f"{self.describe()} was built for inputs of shape "
                                 f"{self._input.shape}, build() got {tuple(input_shape)}")
            return
        if not self._stack:
            raise ValueError(f"{self.describe()}.build: the model has no layers")
        self._build_stack(shape)

    def _build_typed(self, input_shape, dtype):
        """build(input_shape), on a string Input when the first inputs are strings."""
        if dtype == STRING and self._input is None and self._stack:
            self._build_stack(tuple(input_shape)[1:], dtype=STRING)
        else:
            self.build(input_shape)

    def _build_stack(self, shape, input_name=None, dtype="float32"):
        """The graph of the stack on an Input of sample `shape` (and `dtype`: a stack that
        starts with a StringLookup is built for strings); on failure the layers are left as
        they were, ready for another shape."""
        inp = Input(shape, name=input_name, dtype=dtype)
        # what each layer was before: one built earlier (called eagerly) keeps its weights
        before = [(layer, layer.built, len(layer._inbound_nodes)) for layer in self._stack
                  if isinstance(layer, Layer)]
        outputs = []
        try:
            out = inp
            for layer in self._stack:
                out = layer(out)
                outputs.append(out)
        except Exception:
            for layer, built, nodes in before:   # leave the layers as they were
                del layer._inbound_nodes[nodes:]
                if not built:
                    layer.built, layer.weights_by_name = False, {}
            raise
        self._input, self._output, self._outputs = inp, out, outputs
        self._rebuild()

    def _build_from_data(self, x):
        """Build from the shape of a batch (an array or a data iterator) when not built."""
        if self.graph is not None or self._input is not None or not self._stack:
            return
        sample = getattr(x, "output_shape", None)   # minidl.data.ArrayIterator's sample shape
        if isinstance(x, (np.ndarray, list, tuple)):
            if is_string_array(np.asarray(x)):   # strings: a column of them, shape (n,) too
                self._build_stack(np.shape(x)[1:], dtype=STRING)
                return
            shape = np.shape(x)
            if len(shape) < 2:
                raise ValueError(f"{self.describe()}: x must be a batch of samples (batch axis "
                                 f"first), got shape {tuple(shape)}")
            self._build_for_sample(tuple(shape[1:]))
        elif isinstance(sample, tuple):
            self._build_for_sample(sample)

    def _build_for_sample(self, sample):
        """Build from the first data's sample shape, leaving unknown (None) the axes that
        the layers can take at any size. Keras's Sequential built by a first call runs its
        layers again on each later call, so an Embedding + LSTM stack takes any sequence
        length while a Dense after a Flatten still needs the first length: the same here,
        from the most general shape that builds: every axis None, then every axis but the
        last (the features or channels) None, then the data's own shape."""
        if not self._stack:
            raise ValueError(f"{self.describe()}.build: the model has no layers")
        rank = len(sample)
        tries = [(None,) * rank, (None,) * (rank - 1) + sample[-1:], sample]
        tries = [shape for k, shape in enumerate(tries) if shape not in tries[:k]]
        name = auto_name("input_layer")   # one name, however many tries
        for shape in tries[:-1]:
            try:
                self._build_stack(shape, name)
                return
            except Exception:   # a layer needs that axis's size: try a more specific shape
                continue
        self._build_stack(sample, name)

    def _require_built(self, what):
        if self.graph is None:
            raise ValueError(f"{self.describe()} has not yet been built, so {what}() cannot "
                             "run. Build it first: start it with layers.Input(shape), give its "
                             "first layer input_shape=, call build(input_shape), or call fit() "
                             "or predict() on data")

    # --------------------------------------------------- built from data
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, **kwargs):
        """As Model.compile; before the model is built the settings are checked as far as
        they can be and applied when it is built."""
        if self.graph is None and self._stack:
            from .. import losses, optimizers
            if loss is None:
                raise ValueError(f"{self.describe()}.compile: a loss is required, e.g. "
                                 "loss='sparse_categorical_crossentropy'")
            optimizers.get(optimizer)   # unknown names fail now, not at the first fit()
            losses.get(loss)
            if metrics is not None and (isinstance(metrics, str)
                                        or not isinstance(metrics, (list, tuple))):
                raise TypeError(f"{self.describe()}.compile: metrics must be a list of names, "
                                f"got {metrics!r}")
            self._pending_compile = dict(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)
            return
        super().compile(optimizer, loss, metrics, **kwargs)

    def _call_tensors(self, inputs, training):
        """Called on minidl.ops Tensors (in a custom layer's call) before it was built: it
        builds from the first tensor it sees, as Keras's Sequential does."""
        if self.graph is None and self._stack and not isinstance(inputs, (list, tuple, dict)):
            from .. import ops
            self._build_typed((None,) + tuple(ops.shape(inputs))[1:], getattr(inputs, "dtype", None))
        return super()._call_tensors(inputs, training)

    def fit(self, x=None, y=None, *args, **kwargs):
        self._build_from_data(x)
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        self._build_from_data(x)
        return super().evaluate(x, y, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        self._build_from_data(x)
        return super().predict(x, *args, **kwargs)

    def train_on_batch(self, x, y, *args, **kwargs):
        self._build_from_data(x)
        return super().train_on_batch(x, y, *args, **kwargs)

    def test_on_batch(self, x, y, *args, **kwargs):
        self._build_from_data(x)
        return super().test_on_batch(x, y, *args, **kwargs)

    def _build_for(self, inputs):
        """Before a first call: build from a symbolic tensor's or an array's shape."""
        if self.graph is None and isinstance(inputs, KerasTensor):
            self._build_typed(inputs.shape, inputs.dtype)
        elif self.graph is None:
            self._build_from_data(inputs)
        self._require_built("a call")

    def predict_on_batch(self, x):
        self._build_from_data(x)
        return super().predict_on_batch(x)
