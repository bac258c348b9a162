"""The structure of a model's inputs and outputs (one tensor, a list, or a dict) and of the
data given for them: x, y and sample weights as one array, a list in order, or a dict
keyed by input / output names, as Keras takes them."""

from collections.abc import Mapping

import numpy as np

from ..layers.base import KerasTensor


def kind(tensors):
    """"dict", "list" or "single"; a list of one tensor counts as one, as in Keras 3 (a
    Model(x, [y]) predicts one array)."""
    if isinstance(tensors, Mapping):
        return "dict"
    if isinstance(tensors, (list, tuple)) and len(tensors) != 1:
        return "list"
    return "single"


def flatten_tensors(tensors, what, owner):
    """(list of KerasTensors, dict keys or None) for Model(inputs=..., outputs=...)."""
    keys = None
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
    for t in flat:
        if not isinstance(t, KerasTensor):
            raise TypeError(f"{owner}: {what} must be tensors from Input() or a layer, "
                            f"got {type(t).__name__}")
    return flat, keys


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


def pack(values, structure, keys, names):
    """Model outputs in the structure the model was defined with."""
    if structure == "dict":
        return dict(zip(keys, values))
    if structure == "list":
        return list(values)
    return values[0]
