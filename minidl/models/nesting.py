"""A model used as a layer, as Keras: called on symbolic tensors inside another model, called
eagerly on arrays, frozen with `trainable`, its weights visible from the outer model.

Calling a model on symbolic tensors replays its graph: every node of its layers gets a new
node on the new tensors (the same layers, so the same weights), all marked with this call
(a ModelCall) so that the outer model lists the inner model as one of its layers. Two calls
of one model (a siamese network) share its weights and sum their gradients (graph.py).
"""

from collections.abc import Mapping

import numpy as np

from ..layers import custom_call
from ..layers.base import KerasTensor, compatible
from .eager_graph import call_graph_on_tensors
from . import structure
from .concurrency import one_thread_at_a_time


class ModelCall:
    """One call of `model` on symbolic tensors; `training` is the call's training=."""

    def __init__(self, model, inputs, training):
        self.model, self.inputs, self.training = model, list(inputs), training
        self.outputs = []


def _flat(inputs):
    if isinstance(inputs, Mapping):
        return list(inputs.values())
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


class ModelAsLayer:
    """Mixed into Model: what a model needs to be used like a layer."""

    needs_step_seed = False

    @property
    def multiple_inputs(self):
        return self.graph is not None and len(self.graph.inputs) > 1

    @property
    def built(self):
        return self.graph is not None

    @property
    def inbound(self):
        """The tensors of the model's first call as a layer ([] before one)."""
        return self._calls[0].inputs if getattr(self, "_calls", None) else []

    # ------------------------------------------------------------ trainable
    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        """Freeze (False) or unfreeze every layer of the model, nested models included, as
        Keras; it takes effect at the next compile(). A BatchNormalization frozen this way
        normalizes with its moving statistics (Keras's fine-tuning rule)."""
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{self.describe()}.trainable must be True or False, got {value!r}")
        self._trainable = bool(value)
        for layer in self.layers:
            layer.trainable = bool(value)

    # ------------------------------------------------------------ weights
    def count_params(self):
        return sum(layer.count_params() for layer in self._weighted_layers)

    def check_weights(self, values):
        """Every layer's arrays checked (as Layer.check_weights), in model.weights order."""
        expected = sum(len(layer.weights) for layer in self._weighted_layers)
        if len(values) != expected:
            raise ValueError(f"{self.describe()} has {expected} weight arrays, got {len(values)}")
        checked, i = [], 0
        for layer in self._weighted_layers:
            n = len(layer.weights)
            checked.append(layer.check_weights(values[i:i + n]))
            i += n
        return checked

    def assign_weights(self, checked):
        for layer, arrays in zip(self._weighted_layers, checked):
            layer.assign_weights(arrays)

    # ------------------------------------------------------------ calling
    def __call__(self, inputs, training=None, mask=None):
        """On symbolic tensors: the model as a layer of another model (its outputs as
        tensors, in the structure it was defined with). On arrays: the outputs as numpy
        arrays, in inference mode unless training=True (Dropout drops, BatchNormalization
        uses and updates batch statistics), as Keras 3."""
        if mask is not None:
            raise ValueError(f"{self.describe()}: mask is not supported")
        if training is not None and not isinstance(training, (bool, np.bool_)):
            raise TypeError(f"{self.describe()}: training must be True, False or None, "
                            f"got {training!r}")
        if any(isinstance(t, KerasTensor) for t in _flat(inputs)):
            return self._call_symbolic(inputs, training)
        if custom_call.is_eager(_flat(inputs)):   # inside a call or a train_step
            return self._call_tensors(inputs, training)
        return self._call_eager(inputs, bool(training))

    def _call_tensors(self, inputs, training):
        """On minidl.ops Tensors: the graph's layers called one by one (eager_graph.py)."""
        self._require_built("a call")
        return call_graph_on_tensors(self.graph, inputs, training, self.describe())

    def _build_for(self, inputs):
        """Build before a first call (Sequential builds from the inputs' shapes)."""
        self._require_built("a call")

    @one_thread_at_a_time
    def _call_eager(self, x, training):
        self._build_for(x)
        xs = self._validate_x(x)
        outputs = self.graph.forward(self._upload_inputs(xs), training=training)
        return self._pack_outputs([self.backend.to_numpy(o) for o in outputs])

    def _call_symbolic(self, inputs, training):
        owner = self.describe()
        self._build_for(inputs)
        g = self.graph
        tensors = structure.flatten_data(inputs, g.input_names, "inputs", owner)
        for t, expected in zip(tensors, g.inputs):
            if not isinstance(t, KerasTensor):
                raise TypeError(f"{owner} must be called on symbolic tensors only, got "
                                f"{type(t).__name__}")
            if not compatible(t.sample_shape, expected.sample_shape):
                raise ValueError(f"{owner}: input {expected.layer.name!r} has shape "
                                 f"{expected.shape}, got a tensor of shape {t.shape}")
        call = ModelCall(self, tensors, training)
        mapping = {id(old): new for old, new in zip(g.inputs, tensors)}
        for node in g.nodes:
            ins = [mapping[id(t)] for t in node.inputs]
            mode = node.training if training is None else training
            new = node.layer.add_node(ins, mode, parent=call, options=node.options)
            mapping.update(zip(map(id, node.outputs), new.outputs))   # several: return_state
        call.outputs = [mapping[id(t)] for t in g.outputs]
        if getattr(self, "_calls", None) is None:
            self._calls = []
        self._calls.append(call)
        return g.pack_outputs(call.outputs, symbolic=True)
