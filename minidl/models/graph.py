"""The layer graph of a model: topological order, forward and backward passes.

A model has one input and one output tensor. Each layer appears once; a tensor used
by several layers (a residual connection) gets its gradients summed in a buffer that
the graph owns.
"""

from ..backends import get_backend
from ..layers.base import InputLayer, KerasTensor, format_shape
from ..layers.buffers import BufferSet


class Graph:
    def __init__(self, inputs, outputs, owner):
        self.owner = owner
        inputs = self._single(inputs, "inputs")
        outputs = self._single(outputs, "outputs")
        self.input_layer = inputs.layer
        if not isinstance(self.input_layer, InputLayer):
            raise ValueError(f"{owner}: inputs must come from Input(), got the output of "
                             f"{self.input_layer.describe()}")
        self.output_layer = outputs.layer
        self.layers = self._topological_order(outputs)
        if self.input_layer not in self.layers:
            raise ValueError(f"{owner}: the outputs do not depend on the given input")
        extra_inputs = [l for l in self.layers if isinstance(l, InputLayer)
                        and l is not self.input_layer]
        if extra_inputs:
            raise ValueError(f"{owner}: the outputs depend on Input {extra_inputs[0].name!r} "
                             "which is not the model's input (one input per model)")
        names = [l.name for l in self.layers]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"{owner}: layer names must be unique, repeated: {sorted(dup)}")
        self.backend = None
        self._grad_buffers = BufferSet()   # summed gradients of tensors used twice, by layer
        self._mark_gradient_needs()

    def _single(self, tensors, what):
        if isinstance(tensors, (list, tuple)):
            if len(tensors) != 1:
                raise ValueError(f"{self.owner}: exactly one tensor is supported for {what}, "
                                 f"got {len(tensors)}")
            tensors = tensors[0]
        if not isinstance(tensors, KerasTensor):
            raise TypeError(f"{self.owner}: {what} must be a tensor from Input() or a layer, "
                            f"got {type(tensors).__name__}")
        return tensors

    @staticmethod
    def _topological_order(output):
        order, seen = [], set()
        stack = [(output.layer, False)]
        while stack:
            layer, expanded = stack.pop()
            if expanded:
                order.append(layer)
                continue
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            stack.append((layer, True))
            for t in reversed(layer.inbound):
                if id(t.layer) not in seen:
                    stack.append((t.layer, False))
        return order

    def _mark_gradient_needs(self):
        # A layer needs dL/dinput only if something upstream of it has trainable weights.
        upstream_trainable = {}
        for layer in self.layers:
            feeds = any(upstream_trainable[id(t.layer)] for t in layer.inbound)
            layer.input_grad_needed = feeds
            upstream_trainable[id(layer)] = feeds or bool(layer.trainable_weights)

    # ---------------------------------------------------------- backend
    def attach(self, backend=None):
        """Upload every layer's initial weights to the backend (the active one by default)."""
        self.backend = backend or get_backend()
        self._grad_buffers.reset(self.backend)
        for layer in self.layers:
            layer.attach(self.backend)

    @property
    def input_shape(self):
        return self.input_layer.shape

    @property
    def output_shape(self):
        return self.output_layer.output_shape

    def weights(self):
        return [w for layer in self.layers for w in layer.weights]

    def trainable_weights(self):
        return [w for layer in self.layers for w in layer.trainable_weights]

    # ---------------------------------------------------------- compute
    def forward(self, x, training):
        values = {}
        for layer in self.layers:
            if layer is self.input_layer:
                values[id(layer)] = x
                continue
            inputs = [values[id(t.layer)] for t in layer.inbound]
            values[id(layer)] = layer.forward(inputs if layer.multiple_inputs else inputs[0],
                                              training)
            if layer.activity_regularizer is not None:   # the model adds its penalty to the loss
                layer.activity_output = values[id(layer)]
        return values[id(self.output_layer)]

    def backward(self, dout, from_preactivation=False):
        """Back-propagate dL/doutput (or dL/dpre-activation of the last layer) through every
        layer, filling weight gradients."""
        b = self.backend
        grads = {id(self.output_layer): dout}
        for layer in reversed(self.layers):
            g = grads.pop(id(layer), None)
            if g is None or isinstance(layer, InputLayer):
                continue
            if layer.activity_regularizer is not None:   # its penalty is reg(output) / batch
                out = layer.activity_output
                layer.activity_regularizer.add_gradient(b, g, out, 1.0 / b.shape(out)[0])
            if not layer.input_grad_needed and not layer.trainable_weights:
                continue
            if layer is self.output_layer and from_preactivation:
                dinputs = layer.backward_preactivation(g)
            else:
                dinputs = layer.backward(g)
            if not layer.input_grad_needed:
                continue
            if not layer.multiple_inputs:
                dinputs = [dinputs]
            for t, d in zip(layer.inbound, dinputs):
                key = id(t.layer)
                if key not in grads:
                    grads[key] = d
                    continue
                acc = self._grad_buffers.get(key, b.shape(d))
                b.add(acc, grads[key], d)
                grads[key] = acc

    def check_input(self, x_shape, argument="x"):
        if tuple(x_shape[1:]) != tuple(self.input_shape):
            raise ValueError(f"{self.owner} expects {argument} of shape "
                             f"{format_shape(self.input_shape)}, got {tuple(x_shape)}")
