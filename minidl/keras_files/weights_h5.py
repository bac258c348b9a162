"""Weights in Keras's HDF5 layouts, read and written with h5py.

Keras 3 (model.weights.h5 inside a .keras zip, and .weights.h5 files):

    vars                              attrs name = the model's name (the model's own: none)
    layers/<group>/vars/<i>           the layer's i-th variable (Dense: 0 kernel, 1 bias)
    layers/<nested>/layers/<group>/vars/<i>
    optimizer/vars/<i>                the optimizer's variables (iterations, learning rate, slots)

where <group> is the snake_case Keras class name of the i-th entry of model.layers, with a
counter for repeats ("dense", "dense_1", ...): Keras addresses layers by structure, not by
their (automatic, unreproducible) names. Every layer gets its group, weighted or not.

Keras 2 / tf.keras (legacy .h5): attrs layer_names, and per layer a group with attrs
weight_names naming its datasets (under model_weights/ in a whole-model file).

Reading is bounded: only the datasets the architecture declares are read, each after its
shape and dtype were checked against the weight it fills; all arrays are checked before any
weight changes, so a failed load changes nothing.
"""

import warnings

import numpy as np

from ..io import element_count
from ..layers.input_layer import InputLayer
from ..models.minidl_files import ModelFileError
from . import require
from ..layers.base import Layer
from .state_walk import (_ordered, is_composite, is_model, keras_class_name, keras_model_class,
                         snake_case, state_groups)

_NUMBER_KINDS = "fiu"
MAX_NAMES = 1 << 16        # entries of a layer_names / weight_names attribute


def h5py():
    return require("h5py", "keras-files")


def keras_layer_order(spec, orders=None):
    """{model name: [layer names in the order of its config]} of a Keras model spec (nested
    models too): Keras's model.layers order, which names the weights' groups. A model minidl
    rebuilds may list its layers in another (equally valid) execution order."""
    orders = {} if orders is None else orders
    config = spec.get("config", {}) if isinstance(spec, dict) else {}
    layers = config.get("layers") if isinstance(config.get("layers"), list) else []
    names = []
    for layer in layers:
        if not isinstance(layer, dict):
            continue
        names.append(layer.get("config", {}).get("name", layer.get("name")))
        if layer.get("class_name") in ("Sequential", "Functional", "Model"):
            keras_layer_order(layer, orders)
    orders[config.get("name")] = names
    return orders


def saveables(model, prefix="", orders=None):
    """[(group path, layer or nested model)] in Keras 3's order and naming (orders: from
    keras_layer_order, when the model was rebuilt from a Keras config)."""
    entries, used = [], {}
    for item in _ordered(model, orders):
        name = snake_case(keras_model_class(item) if is_model(item) else type(item).__name__)
        if name in used:
            used[name] += 1
            name = f"{name}_{used[name]}"
        else:
            used[name] = 0
        path = f"{prefix}layers/{name}"
        entries.append((path, item))
        if is_model(item):
            entries.extend(saveables(item, path + "/", orders))
    return entries


def write_keras_weights(f, model):
    """Write `model`'s weights into the open h5py File `f` in Keras 3's layout."""
    for path, item, weights in state_groups(model):
        group = f.create_group(f"{path}/vars" if path else "vars")
        # stacked cells made without a name: Keras's automatic one
        group.attrs["name"] = item.name or snake_case(keras_class_name(item))
        values = item.get_weights() if _whole(item, weights) else \
            [item.backend.to_numpy(w.value) for w in weights]
        for i, value in enumerate(values):
            group.create_dataset(str(i), data=np.asarray(value, dtype=np.float32))


def _whole(layer, weights):
    """Whether `weights` are all of the layer's (else its own, beside its sublayers')."""
    if not weights:
        return False
    mine = layer.weights
    return len(weights) == len(mine) and all(
        a is b for a, b in zip(weights, mine))


def _check_dataset(node, shape, where, what):
    """`node` checked to be a number dataset of `shape` (nothing is read)."""
    if not isinstance(node, h5py().Dataset):
        raise ModelFileError(f"{where}: {what} is not a dataset")
    if node.dtype.kind not in _NUMBER_KINDS or node.dtype.fields is not None:
        raise ModelFileError(f"{where}: {what} has dtype {node.dtype}, expected numbers")
    if tuple(node.shape) != tuple(shape):
        raise ModelFileError(f"{where}: {what} has shape {tuple(node.shape)}, its weight has "
                             f"shape {tuple(shape)}")
    return node


def _read(node, shape):
    out = np.empty(shape, dtype=np.float32)
    if element_count(shape):
        node.read_direct(out)
    return out


def _dataset(h5, node, shape, where, what):
    """`node` checked to be a number dataset of `shape`, read into a new float32 array."""
    return _read(_check_dataset(node, shape, where, what), shape)


def read_keras_weights(f, model, where, skip_mismatch=False, orders=None, stream=False):
    """Fill `model`'s weights from the open File `f` (Keras 3's layout). Every dataset is
    checked (shape, dtype) before any is read; then all are read and checked before any
    weight is set, or, with stream=True (a model just built, which a failure discards), each
    layer is set as it is read, so that no second copy of the weights is held. skip_mismatch
    skips a layer whose group is missing or whose variables do not match (with a warning),
    as Keras."""
    found = []
    for path, item, weights in _older_wrapper_layout(f, state_groups(model, orders)):
        if not weights:
            continue
        try:
            found.append((item, weights, _vars(f, path, item, weights, where)))
        except ModelFileError as exc:
            if not skip_mismatch:
                raise
            warnings.warn(f"skipping {item.describe()}: {exc}", stacklevel=3)
    if stream:
        for layer, weights, nodes in found:
            _assign([(layer, weights, [_read(n, w.shape) for n, w in zip(nodes, weights)])],
                    where)
        return
    _assign([(layer, weights, [_read(n, w.shape) for n, w in zip(nodes, weights)])
             for layer, weights, nodes in found], where)


def _older_wrapper_layout(f, groups):
    """`groups`, adjusted to a file minidl wrote before it followed Keras's wrappers and RNN
    (real Keras never read those files): a wrapper's (Bidirectional, TimeDistributed, RNN of
    stacked cells) weights all in its own vars, forward then backward, in place of its nested
    groups; and an RNN's group under minidl's class name ("stacked_rnn", "lstm" for
    RNN(LSTMCell)) where Keras's is "rnn" (the same repeat counter assumed)."""
    out, skip, renamed = [], None, None
    for path, item, weights in groups:
        if skip is not None and path.startswith(skip):
            continue
        skip, keras_path = None, path
        if renamed is not None and (path + "/").startswith(renamed[0] + "/"):
            path = renamed[1] + path[len(renamed[0]):]
        else:
            renamed = None
            older = _older_name(path, item)
            if older is not None and path not in f and older in f:
                renamed, path = (path, older), older
        old = f.get(f"{path}/vars") if path else None
        if (isinstance(item, Layer) and is_composite(item) and item.weights
                and isinstance(old, h5py().Group) and len(old) == len(item.weights)):
            out.append((path, item, list(item.weights)))
            skip = keras_path + "/"
            continue
        out.append((path, item, weights))
    return out


def _older_name(path, item):
    """The group minidl gave a layer whose Keras class is not its own (RNN), else None."""
    keras_name = getattr(item, "keras_class", None)
    if not isinstance(item, Layer) or not keras_name or "/" not in path:
        return None
    head, _, last = path.rpartition("/")
    base = snake_case(keras_name)
    if not last.startswith(base):
        return None
    return f"{head}/{snake_case(type(item).__name__)}{last[len(base):]}"


def _vars(f, path, layer, weights, where):
    """The checked datasets of an object's group, in the order of its weights."""
    path = f"{path}/vars" if path else "vars"
    group = f.get(path)
    if group is None and path.endswith("/cell/vars"):
        # a recurrent layer's weights as minidl wrote them before it followed Keras's cell
        # (at the layer's own vars; real Keras never read those files)
        old = f.get(path[:-len("/cell/vars")] + "/vars")
        if isinstance(old, h5py().Group) and len(old) == len(weights):
            path, group = path[:-len("/cell/vars")] + "/vars", old
    if group is None or not isinstance(group, h5py().Group):
        raise ModelFileError(f"{where} has no weights for {layer.describe()} (no group "
                             f"{path})")
    shapes = [w.shape for w in weights]
    keys = set(group.keys()) if len(group) <= MAX_NAMES else None
    if keys != {str(i) for i in range(len(shapes))}:
        raise ModelFileError(f"{where}: {path} holds {len(group)} arrays, "
                             f"{layer.describe()} has {len(shapes)} weights")
    return [_check_dataset(group[str(i)], shape, where, f"{path}/{i}")
            for i, shape in enumerate(shapes)]


def _assign(plan, where):
    """plan: [(layer, weights, values)]; `weights` are all the layer's or, for a layer of
    your own, its own (its sublayers' are set in their own entries)."""
    checked = []
    for layer, weights, values in plan:
        try:
            if _whole(layer, weights):
                checked.append((layer, None, layer.check_weights(values)))
            else:
                checked.append((layer, weights, layer.check_weights(values, weights)))
        except ValueError as exc:
            raise ModelFileError(f"{where}: {exc}") from None
    for layer, weights, values in checked:
        if weights is None:
            layer.assign_weights(values)
        else:
            layer.assign_weights(values, weights)


def _strings(attr, where, what):
    """An HDF5 string-array attribute as a bounded list of str."""
    if attr is None:
        return None
    values = np.asarray(attr)
    if values.ndim != 1 or values.size > MAX_NAMES:
        raise ModelFileError(f"{where}: attribute {what} must be a list of at most {MAX_NAMES} "
                             "names")
    if values.size and values.dtype.kind not in "SOU":
        raise ModelFileError(f"{where}: attribute {what} holds {values.dtype}, expected names")
    return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in values]


def legacy_layers(group, where):
    """[(layer name, [(weight name, dataset)])] of a Keras 2 weights group, in file order,
    only the layers that hold weights."""
    names = _strings(group.attrs.get("layer_names"), where, "layer_names")
    if names is None:
        raise ModelFileError(f"{where} is an HDF5 file without Keras weights (no layer_names "
                             "attribute, no layers/ group)")
    out = []
    for name in names:
        layer_group = group.get(name)
        if not isinstance(layer_group, h5py().Group):
            raise ModelFileError(f"{where}: layer_names lists {name!r}, which has no group")
        weight_names = _strings(layer_group.attrs.get("weight_names"), where,
                                f"{name}/weight_names") or []
        if weight_names:
            out.append((name, [(w, layer_group.get(w)) for w in weight_names]))
    return out


def require_every_layer(group, model, where, owner=None):
    """Refuse a Keras 2 weights group that lacks a weighted layer of `model` (by name)."""
    stored = {name for name, _ in legacy_layers(group, where)}
    wanted = [item.name for item in model.layers
              if not isinstance(item, InputLayer) and _flat_weights(item)]
    missing = [name for name in wanted if name not in stored]
    if missing:
        raise ModelFileError(f"{owner or where}: {where} has no weights for the layers "
                             f"{missing[:8]}{' ...' if len(missing) > 8 else ''} "
                             f"({len(missing)} of {len(wanted)})")


def _flat_weights(item):
    """[(layer name, weight name, Weight)] of a layer, or of a nested model's layers."""
    if is_model(item):
        return [entry for layer in item.layers if not isinstance(layer, InputLayer)
                for entry in _flat_weights(layer)]
    return [(item.name, w.name, w) for w in item.weights]


def _match(item, stored, where):
    """The stored (weight name, dataset) pairs of one file layer, in the order of item's
    weights: by '<layer>/<weight>' names when they all match (a nested model written by
    Keras 2 puts every trainable weight before the moving statistics), else by position."""
    mine = _flat_weights(item)
    if len(stored) != len(mine):
        raise ModelFileError(f"{where}: {item.describe()} has {len(mine)} weights, the file's "
                             f"layer holds {len(stored)}")
    keyed = {}
    for name, node in stored:
        parts = name.split(":")[0].split("/")
        keyed["/".join(parts[-2:])] = node
    wanted = [f"{layer}/{weight}" for layer, weight, _ in mine]
    if len(keyed) == len(stored) and all(w in keyed for w in wanted):
        return [(w, keyed[w]) for w in wanted], mine
    return stored, mine


def read_legacy_weights(group, model, where, by_name=False, skip_mismatch=False, layers=None):
    """Fill `model`'s weights from a Keras 2 weights group: layers with weights matched in
    order (by_name=False; the order of `layers`, model.layers by default) or by layer name
    (by_name=True; unmatched layers are left alone), skip_mismatch skipping (with a warning)
    a layer whose weights do not fit."""
    stored = legacy_layers(group, where)
    weighted = [item for item in (model.layers if layers is None else layers)
                if not isinstance(item, InputLayer) and _flat_weights(item)]
    if by_name:
        by = {name: weights for name, weights in stored}
        pairs = [(item, by[item.name]) for item in weighted if item.name in by]
    else:
        if len(stored) != len(weighted) and not skip_mismatch:
            raise ModelFileError(f"{where} holds weights for {len(stored)} layers, "
                                 f"{model.describe()} has {len(weighted)} layers with weights")
        pairs = list(zip(weighted, [weights for _, weights in stored]))
    plan = {}
    for item, weights in pairs:
        try:
            ordered, mine = _match(item, weights, where)
            values = [_dataset(group, node, w.shape, where, f"weight {name!r}")
                      for (name, node), (_, _, w) in zip(ordered, mine)]
        except ModelFileError as exc:
            if not skip_mismatch:
                raise
            warnings.warn(f"skipping {item.describe()}: {exc}", stacklevel=3)
            continue
        # a nested model's weights go to its layers
        for (layer_name, _, w), value in zip(mine, values):
            plan.setdefault(id(w), (w, value))
    owners = []
    for item in weighted:
        for layer in ([l for l in item.layers if not isinstance(l, InputLayer)]
                      if is_model(item) else [item]):
            owners.extend(_leaf_layers(layer))
    layer_plan = []
    for layer in owners:
        if layer.weights and all(id(w) in plan for w in layer.weights):
            layer_plan.append((layer, [plan[id(w)][1] for w in layer.weights]))
    _assign([(layer, layer.weights, values) for layer, values in layer_plan], where)


def _leaf_layers(item):
    if is_model(item):
        return [leaf for layer in item.layers if not isinstance(layer, InputLayer)
                for leaf in _leaf_layers(layer)]
    return [item]
