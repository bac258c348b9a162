"""keras.utils.is_keras_tensor and get_source_inputs: questions about symbolic tensors."""

from ..layers.base import KerasTensor
from ..layers.input_layer import InputLayer


def is_keras_tensor(x):
    """True for a symbolic tensor (what Input() and layer calls on it return)."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor):
    """The Input() tensors that `tensor` was computed from, as a list, in the order its
    graph reaches them (a tensor from Input() gives [itself])."""
    if not isinstance(tensor, KerasTensor):
        raise TypeError(f"get_source_inputs: tensor must be a symbolic tensor (a KerasTensor), "
                        f"got {type(tensor).__name__}")
    found, seen, stack = [], set(), [tensor]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if isinstance(t.layer, InputLayer) or t.node is None:
            found.append(t)
            continue
        stack.extend(reversed(t.node.inputs))
    return found


__all__ = ["get_source_inputs", "is_keras_tensor"]
