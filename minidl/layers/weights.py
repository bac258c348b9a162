"""A layer's weight: its backend tensor, gradient, initializer, regularizer and constraint."""

from ..autodiff import Variable
from ..variable_methods import VariableMethods


class Weight(VariableMethods, Variable):
    """One trainable or non-trainable weight: its backend tensor and gradient. In a custom
    layer's call it works as a tensor of minidl.ops (operators included); assign,
    assign_add and assign_sub set its values as Keras's Variable does."""

    def __init__(self, name, shape, initializer, trainable, regularizer=None, constraint=None):
        self.name = name
        self.shape = tuple(shape)
        self.initializer = initializer
        self.trainable = trainable
        self.regularizer = regularizer  # its penalty joins the loss, its gradient the weight's
        self.constraint = constraint    # applied after every optimizer step
        self.value = None   # backend tensor, set by Layer.attach
        self.grad = None    # backend tensor (trainable weights only)
        self.backend = None

    def __repr__(self):
        return f"<Weight {self.name!r} shape={self.shape}>"
