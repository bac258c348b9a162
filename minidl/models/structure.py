"""The structure of a model's inputs and outputs (one tensor, a list, or a dict, or these
nested: outputs=[layer.output for ...] of layers returning two tensors) and of the data
given for them: x, y and sample weights as one array, a list in order, or a dict keyed by
input / output names, as Keras takes them, or nested as the outputs are.

A nested structure is flattened as keras.tree flattens it (a dict's values in sorted key
order), the order of model.outputs; a flat dict keeps minidl's order (its keys' own)."""

from collections.abc import Mapping

import numpy as np

from .. import tree
from ..layers.base import KerasTensor


def is_nested(tensors):
    """Whether a list, tuple or dict holds a list, tuple or dict."""
    if isinstance(tensors, Mapping):
        return any(tree.is_nested(v) for v in tensors.values())
    return isinstance(tensors, (list, tuple)) and any(tree.is_nested(v) for v in tensors)


def kind(tensors):
    """"nested", "dict", "list" or "single"; a list of one tensor counts as one, as in Keras
    3 (a Model(x, [y]) predicts one array)."""
    if is_nested(tensors):
        return "nested"
    if isinstance(tensors, Mapping):
        return "dict"
    if isinstance(tensors, (list, tuple)) and len(tensors) != 1:
        return "list"
    return "single"


def _path_text(path):
    return "".join(f"[{k!r}]" for k in path)


def flatten_tensors(tensors, what, owner):
    """(list of KerasTensors, dict keys or None) for Model(inputs=..., outputs=...)."""
    keys = None
    if is_nested(tensors):
        flat = []
        for path, t in tree.flatten_with_path(tensors):
            if not isinstance(t, KerasTensor):
                raise ValueError(f"{owner}: {what} must be tensors from Input() or a layer (in "
                                 f"lists, tuples or dicts); {what}{_path_text(path)} is "
                                 f"{type(t).__name__} {t!r:.60}")
            flat.append(t)
        if not flat:
            raise ValueError(f"{owner}: {what} must hold at least one tensor")
        return flat, None
    if isinstance(tensors, Mapping):
        keys = list(tensors)
        if not all(isinstance(k, str) for k in keys):
            raise TypeError(f"{owner}: the keys of {what} must be strings, got {keys!r}")
        flat = list(tensors.values())
    elif isinstance(tensors, (list, tuple)):
        flat = list(tensors)
    else:
        flat = [tensors]
    if not flat:
        raise ValueError(f"{owner}: {what} must hold at least one tensor")
    for i, t in enumerate(flat):
        if not isinstance(t, KerasTensor):
            where = "" if flat[0] is tensors else _path_text([keys[i] if keys else i])
            raise ValueError(f"{owner}: {what} must be tensors from Input() or a layer; "
                             f"{what}{where} is {type(t).__name__} {t!r:.60}")
    return flat, keys


def template(tensors):
    """A copy of a nested structure's nodes (its leaves kept), for pack()."""
    return tree.map_structure(lambda t: t, tensors)


def flatten_like(data, nesting, argument, owner):
    """`data` (y, a sample_weight, a loss or loss_weights) given nested as the outputs are
    (lists and tuples alike) as a flat list in the outputs' order; other data as it came
    (one value for all, a flat list or a dict by output name)."""
    if nesting is None or not tree.is_nested(data):
        return data
    paths = [p for p, _ in tree.flatten_with_path(nesting)]
    found = tree.flatten_with_path(data)
    if [p for p, _ in found] == paths:
        return [leaf for _, leaf in found]
    if is_nested(data):   # nested otherwise: say where it differs
        raise ValueError(f"{owner}: {argument} must nest as the model's outputs do (leaves at "
                         f"{[_path_text(p) for p in paths]}), got leaves at "
                         f"{[_path_text(p) for p, _ in found]}")
    return data


def unique_names(names):
    """Output names as Keras derives them from layer names (a repeat gets _1, _2, ...)."""
    out, seen = [], {}
    for n in names:
        if n in seen:
            seen[n] += 1
            n = f"{n}_{seen[n]}"
        seen.setdefault(n, 0)
        out.append(n)
    return out


def flatten_data(data, names, argument, owner, allow_none=False):
    """Data for len(names) inputs or outputs as a list in their order: one array (a model
    with one), a list / tuple in order, or a dict keyed by the names."""
    if data is None and allow_none:
        return None
    if isinstance(data, Mapping):
        unknown = [k for k in data if k not in names]
        missing = [n for n in names if n not in data]
        if unknown or missing:
            raise ValueError(f"{owner}: {argument} is a dict with keys {sorted(map(str, data))}; "
                             f"the model's names are {names}" +
                             (f" (missing {missing})" if missing else ""))
        return [data[n] for n in names]
    if len(names) > 1:
        if not isinstance(data, (list, tuple)) or isinstance(data, np.ndarray):
            raise ValueError(f"{owner}: the model has {len(names)} {_what(argument)} {names}; "
                             f"{argument} must be a list of {len(names)} arrays or a dict keyed "
                             f"by those names, got {type(data).__name__}")
        if len(data) != len(names):
            raise ValueError(f"{owner}: the model has {len(names)} {_what(argument)} {names}, "
                             f"{argument} holds {len(data)} arrays")
        return list(data)
    if isinstance(data, (list, tuple)) and len(data) == 1 and isinstance(data[0], np.ndarray):
        return [data[0]]
    return [data]


def _what(argument):
    return "inputs" if argument.startswith("x") or "[0]" in argument else "outputs"


def nesting_spec(nesting):
    """A nested structure with each leaf replaced by its position (for a saved config)."""
    return tree.pack_sequence_as(nesting, list(range(len(tree.flatten(nesting)))))


def check_nesting_spec(spec, count, owner):
    """A saved nesting (nesting_spec's) that holds `count` leaves, each its position."""
    leaves = tree.flatten(spec) if tree.is_nested(spec) else None
    if leaves != list(range(count)):
        raise ValueError(f"{owner}: the outputs' nesting {spec!r:.100} does not hold the "
                         f"{count} outputs in order")
    return spec


def pack(values, structure, keys, nesting=None, symbolic=False):
    """Model outputs in the structure the model was defined with. Nested ones as Keras 3's
    Functional: a model's call unwraps a list or tuple of one ([[a, b]] gives [a, b]),
    its call on symbolic tensors does not."""
    if structure == "nested":
        packed = tree.pack_sequence_as(nesting, list(values))
        if symbolic:
            return packed
        # values (predict, a call on arrays) come in dicts of sorted keys, as Keras's do
        packed = tree.traverse(lambda node: dict(sorted(node.items())) if type(node) is dict
                               else None, packed, top_down=False)
        return packed[0] if isinstance(packed, (list, tuple)) and len(packed) == 1 else packed
    if structure == "dict":
        return dict(zip(keys, values))
    if structure == "list":
        return list(values)
    return values[0]
