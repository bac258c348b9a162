"""keras.models.clone_model: a new model of the same architecture with new layers (and so
fresh weights, drawn on the active backend), as Keras 3 clones.

- Sequential: each layer cloned, in order, after a new Input of the same shape (or
  input_tensors);
- functional: the graph's calls replayed on new layers from new inputs (or input_tensors),
  a shared layer cloned once and shared again;
- nested models: cloned by clone_function (recursive=False) or by clone_model with the
  same arguments (recursive=True);
- a subclassed model: cls.from_config(model.get_config()).

clone_function(layer) -> the layer to use (default: layer.__class__.from_config(
layer.get_config())); call_function(layer, *args, **kwargs) -> the tensors the layer's call
gives in the clone (default: layer(*args, **kwargs)).
"""

from ..layers.base import KerasTensor
from ..layers.input_layer import InputLayer
from .config import _restructure
from .sequential import Sequential


def _default_clone(layer):
    return layer.__class__.from_config(layer.get_config())


def _is_model(obj):
    return hasattr(obj, "graph") and hasattr(obj, "compile")


def _flat_inputs(input_tensors, count, owner):
    if input_tensors is None:
        return None
    tensors = (list(input_tensors.values()) if isinstance(input_tensors, dict)
               else list(input_tensors) if isinstance(input_tensors, (list, tuple))
               else [input_tensors])
    if len(tensors) != count or not all(isinstance(t, KerasTensor) for t in tensors):
        raise ValueError(f"{owner}: input_tensors must be {count} symbolic tensor(s) (from "
                         f"Input()), one per model input; got {input_tensors!r:.200}")
    return tensors


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """A clone of `model` with new layers (fresh weights); see the module docstring."""
    owner = "clone_model"
    if kwargs:
        raise ValueError(f"{owner}: unexpected keyword arguments {sorted(kwargs)}")
    if not _is_model(model):
        raise ValueError(f"{owner}: expected a minidl Model or Sequential, got "
                         f"{type(model).__name__}")
    if clone_function is not None and not callable(clone_function):
        raise ValueError(f"{owner}: clone_function must be callable, got {clone_function!r}")
    if call_function is not None and not callable(call_function):
        raise ValueError(f"{owner}: call_function must be callable, got {call_function!r}")
    clone = clone_function or _default_clone

    def clone_item(item):
        if _is_model(item) and recursive:
            return clone_model(item, clone_function=clone_function,
                               call_function=call_function, recursive=True)
        return clone(item)

    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors, clone_item, call_function, owner)
    if hasattr(model, "_call_layer"):   # subclassed: rebuilt from its config
        if input_tensors is not None or clone_function is not None or call_function is not None:
            raise ValueError(f"{owner}: a subclassed model ({type(model).__name__}) can only be "
                             "cloned from its config: input_tensors, clone_function and "
                             "call_function do not apply to it")
        return model.__class__.from_config(model.get_config())
    if model.graph is None:
        raise ValueError(f"{owner}: {model.describe()} is not built")
    return _clone_functional(model, input_tensors, clone_item, call_function, owner)


def _call(layer, args, training, call_function):
    kwargs = {} if training is None else {"training": training}
    if call_function is not None:
        return call_function(layer, args, **kwargs)
    return layer(args, **kwargs)


def _clone_sequential(model, input_tensors, clone_item, call_function, owner):
    items = [clone_item(layer) for layer in model.layers]
    if call_function is not None:
        raise ValueError(f"{owner}: call_function applies to functional models; a Sequential "
                         "calls its layers itself")
    start = []
    if input_tensors is not None:
        tensors = _flat_inputs(input_tensors, 1, owner)
        start = [tensors[0]]
    elif model.graph is not None:
        old = model.graph.inputs[0]
        from ..layers.input_layer import Input
        start = [Input(old.sample_shape, name=old.layer.name)]
    return Sequential(start + items, name=model.name)


def _clone_functional(model, input_tensors, clone_item, call_function, owner):
    g = model.graph
    from ..layers.input_layer import Input
    new_inputs = _flat_inputs(input_tensors, len(g.inputs), owner) or [
        Input(t.sample_shape, name=t.layer.name) for t in g.inputs]
    made = {id(t): nt for t, nt in zip(g.inputs, new_inputs)}
    clones = {}
    for entry in g.entries:
        item = entry.model if hasattr(entry, "model") else entry.layer
        if isinstance(item, InputLayer):
            continue
        if id(item) not in clones:
            clones[id(item)] = clone_item(item)
        new = clones[id(item)]
        args = [made[id(t)] for t in entry.inputs]
        if _is_model(item):
            out = _call(new, args if len(args) > 1 else args[0], entry.training, call_function)
            outs = new.graph.flat_outputs(out) if getattr(new, "graph", None) is not None else (
                list(out.values()) if isinstance(out, dict) else
                list(out) if isinstance(out, (list, tuple)) else [out])
        else:
            out = _call(new, args if item.multiple_inputs else args[0], entry.training,
                        call_function)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != len(entry.outputs):
            raise ValueError(f"{owner}: the clone of {item.describe()} gave {len(outs)} "
                             f"outputs, the original {len(entry.outputs)}")
        for old, new_t in zip(entry.outputs, outs):
            made[id(old)] = new_t
    outputs = [made[id(t)] for t in g.outputs]
    return type(model)(_restructure(new_inputs, g.input_structure, g.input_keys),
                       _restructure(outputs, g.output_structure, g.output_keys, g.output_nesting),
                       name=model.name)


__all__ = ["clone_model"]
