"""Symbolic tensors and call nodes: what calling a layer on Input() outputs records.

A model is a graph of Nodes (one per call of a layer on KerasTensors); each node has one
KerasTensor per output. Shapes here are one sample's (no batch axis) except where a name
says otherwise.
"""

from .keras_tensor_operators import SymbolicOperators


def format_shape(shape):
    """(32, 32, 3) -> '(None, 32, 32, 3)': shapes in messages always show the batch axis."""
    return "(" + ", ".join(["None"] + [str(d) for d in shape]) + ")"


def has_unknown(shape):
    """Whether a sample shape (or a list of them, a merge layer's) has an unknown (None)
    dimension, as Input(shape=(None, None, 3)) gives."""
    if shape and isinstance(shape[0], (tuple, list)):
        return any(None in s for s in shape)
    return None in shape


def several_shapes(shape):
    """Whether an output shape is a list of shapes (a layer of several outputs)."""
    return bool(shape) and isinstance(shape[0], (tuple, list))


def compatible(shape, declared):
    """Whether a concrete sample shape fits a declared one (None matches any size)."""
    return len(shape) == len(declared) and all(
        d is None or d == s for s, d in zip(shape, declared))


class KerasTensor(SymbolicOperators):
    """A symbolic tensor: output `index` of a layer's call `node` in a model graph.

    `shape` includes the batch axis as in Keras 3 ((None, 784)); `sample_shape` is the
    shape of one sample, as layers and buffers use it."""

    dtype = "float32"

    def __init__(self, shape, layer, node=None, index=0):
        self.sample_shape = tuple(None if d is None else int(d) for d in shape)
        self.layer = layer
        self.node = node
        self.index = index

    @property
    def shape(self):
        return (None,) + self.sample_shape

    @property
    def name(self):
        return self.layer.name

    @property
    def producer(self):
        """What made the tensor as its model lists it: the layer, or the nested model whose
        call replayed that layer."""
        if self.node is not None and self.node.parent is not None:
            return self.node.parent.model
        return self.layer

    def __repr__(self):
        return f"<KerasTensor shape={format_shape(self.sample_shape)} from {self.layer.name!r}>"


class Node:
    """One call of a layer on symbolic tensors. A layer called several times (a shared
    layer) has several nodes: each runs on its own activation buffers, all share the
    layer's weights, and their weight gradients are summed (models/graph.py).

    training: the call's training= (None: the model's mode). parent: the model call whose
    replay created this node (a model used as a layer), or None. options: the call's other
    keyword arguments (a dict of plain values), given to each run of the node on its context."""

    def __init__(self, layer, inputs, structured, training=None, parent=None, shape=None,
                 options=None):
        self.layer, self.inputs, self.structured = layer, list(inputs), structured
        self.training, self.parent = training, parent
        self.options = dict(options or {})
        shape = layer.output_shape if shape is None else shape
        # a layer of several outputs (a recurrent layer's sequence and states) gives a list
        # of shapes: one symbolic tensor each
        self.several = several_shapes(shape)   # forward returns a list (even of one)
        shapes = list(shape) if self.several else [shape]
        self.outputs = [KerasTensor(s, layer, self, i) for i, s in enumerate(shapes)]
        layer._inbound_nodes.append(self)
