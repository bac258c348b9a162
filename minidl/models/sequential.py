"""Sequential: a plain stack of layers, each feeding the next."""

from .. import layers as layers_mod
from ..layers.base import InputLayer, KerasTensor, Layer
from .model import Model
from .registry import register


@register
class Sequential(Model):
    """Sequential([layers.Input(shape), layer, layer, ...]).

    The first entry must be layers.Input(shape) (or an InputLayer); layers may also be
    appended with add(). The model is built and its weights uploaded once its input
    shape is known, on the backend active at that moment.
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._stack = []
        self._input = None
        self._output = None
        if layers is not None:
            if not isinstance(layers, (list, tuple)):
                raise TypeError(f"{self.describe()}: layers must be a list, got "
                                f"{type(layers).__name__}")
            for layer in layers:
                self._add(layer, rebuild=False)
            self._rebuild()

    def add(self, layer):
        """Append a layer (or set the input with layers.Input(shape) first)."""
        self._add(layer, rebuild=True)

    def _add(self, layer, rebuild):
        if isinstance(layer, InputLayer):
            layer = layer.output
        if isinstance(layer, KerasTensor):
            if self._input is not None:
                raise ValueError(f"{self.describe()}: Input must be the first entry only")
            if not isinstance(layer.layer, InputLayer):
                raise ValueError(f"{self.describe()}: only Input() tensors can start a Sequential")
            self._input = self._output = layer
        elif isinstance(layer, Layer):
            if self._input is None:
                raise ValueError(f"{self.describe()}: start with layers.Input(shape) so that "
                                 f"{layer.describe()} knows its input shape")
            if layer.multiple_inputs:
                raise ValueError(f"{self.describe()}: {layer.describe()} merges several inputs; "
                                 "use the functional Model for it")
            self._output = layer(self._output)
            self._stack.append(layer)
        else:
            raise TypeError(f"{self.describe()}: expected a layer, got {type(layer).__name__}")
        if rebuild:
            self._rebuild()

    def _rebuild(self):
        if self._stack:
            self._set_graph(self._input, self._output)
            self.compiled = False

    @property
    def layers(self):
        return list(self._stack)

    @classmethod
    def from_config(cls, config):
        """A new Sequential from get_config()'s dict (its first layer is the InputLayer)."""
        return cls([layers_mod.deserialize(spec["class_name"], spec["config"])
                    for spec in config["layers"]], name=config["name"])
