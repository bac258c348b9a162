"""Where Keras 3 puts each variable of a model in its weights files: the walk of
keras/src/saving/saving_lib.py (_save_state, _walk_saveable, _save_container_state),
mirrored on minidl's objects.

Keras visits an object (the model, then each layer it reaches), writes the object's own
variables under <path>/vars (a group made for every layer, holding its name), then visits the
object's attributes sorted by name (private ones, "_x", after the rest), each at <path>/<attr>:

    a layer or model       visited there, unless it was visited before (an object is
                           written once, at the first path that reaches it)
    a list, tuple or dict  a container: its items (a dict's values) each at
                           <path>/<attr>/<snake_case class name>, repeats counted
                           ("dense", "dense_1"; an item already visited still takes its
                           name), a nested container at .../container, .../container_1

A Sequential or functional model lists its `layers` first (Keras's model.layers order,
_ordered below); a subclassed Model's attributes include `layers` (every layer it tracks,
lists flattened, in the order they were set) at its sorted place, so that a layer set in a
list attribute whose name sorts after "layers" is written under layers/. A layer of your own
(one whose call you wrote) writes its own variables (add_weight's and Variables set as
attributes: the trainable ones, then the rest, each in creation order) and walks its
attributes; minidl's built-in layers write all their weights at their own path, as in
functional models; a recurrent layer's (LSTM, ConvLSTM2D, ...) at <path>/cell, as Keras's cell
holds them. minidl's layers that hold others (Bidirectional, TimeDistributed, RNN over stacked
cells) name them as Keras's attributes do, in keras_state_children():

    layers/bidirectional/forward_layer/cell/vars      (and backward_layer/)
    layers/time_distributed/layer/vars
    layers/rnn/cell/cells/lstm_cell/vars              (RNN([LSTMCell, GRUCell]): .../gru_cell)
"""

import re

from ..layers.base import Layer
from ..models.registry import MODEL_CLASSES


def snake_case(name):
    """Keras's naming.to_snake_case: 'MaxPooling2D' -> 'max_pooling2d'."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    name = re.sub("([a-z])([A-Z])", r"\1_\2", name)
    return name.lower()


def is_model(item):
    return hasattr(item, "graph")


def keras_model_class(model):
    """'Sequential' or 'Functional', Keras's class of a minidl model; a subclassed model has
    no Keras layout (its variables are found through its own attributes)."""
    if isinstance(model, MODEL_CLASSES["Sequential"]):
        return "Sequential"
    if getattr(model, "saved_architecture", None) is not None or type(model).__name__ != "Model":
        raise ValueError(f"{model.describe()} is a subclassed model ({type(model).__name__}): "
                         "Keras's file layout follows its own attributes, which minidl does not "
                         "mirror; save it as a .minidl file")
    return "Functional"


def keras_functional_order(model):
    """The layers and nested models of a functional model in Keras's model.layers order
    (keras.src.ops.function.map_graph): by depth from the outputs, deepest (the inputs)
    first, ties in the order a depth-first walk from the outputs first reaches them. Keras
    names weight groups in this order, and lists a functional config's layers in it."""
    g = model.graph
    producer = {}                     # id(tensor) -> the call (entry) or input that made it
    for t in g.inputs:
        producer[id(t)] = t
    for entry in g.entries:
        for t in entry.outputs:
            producer[id(t)] = entry

    def item(node):
        if node in g.inputs:
            return node.layer
        return node.model if hasattr(node, "model") else node.layer

    def parents(node):
        return [] if node in g.inputs else [producer[id(t)] for t in node.inputs]

    finished, post_order, first_seen = set(), [], {}
    for output in g.outputs:          # an iterative depth-first walk, post-order
        stack = [(producer[id(output)], False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                finished.add(id(node))
                post_order.append(node)
                continue
            if id(node) in finished:
                continue
            first_seen.setdefault(id(item(node)), len(first_seen))
            stack.append((node, True))
            for parent in reversed(parents(node)):
                if id(parent) not in finished:
                    stack.append((parent, False))
    node_depth, item_depth, items = {}, {}, {}
    for node in reversed(post_order):
        it = item(node)
        items[id(it)] = it
        depth = max(node_depth.setdefault(id(node), 0), item_depth.get(id(it), 0))
        item_depth[id(it)] = node_depth[id(node)] = depth
        for parent in parents(node):
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for t in g.inputs:
        if id(t.layer) not in item_depth:
            items[id(t.layer)], item_depth[id(t.layer)], first_seen[id(t.layer)] = t.layer, 0, -1
    return sorted(items.values(), key=lambda it: (-item_depth[id(it)], first_seen[id(it)]))


def _ordered(model, orders):
    items = model.layers
    if keras_model_class(model) == "Functional":
        items = keras_functional_order(model)
    order = (orders or {}).get(model.name)
    if not order or {item.name for item in items} - set(order):
        return items        # no config order for this model: minidl's (its files' own)
    rank = {name: i for i, name in enumerate(order)}
    return sorted(items, key=lambda item: rank[item.name])


def is_subclassed(item):
    return isinstance(item, MODEL_CLASSES["SubclassedModel"])


def is_user_layer(item):
    """A layer whose call is the user's (not one of minidl's layers): Keras walks its
    attributes for the layers it holds."""
    return (isinstance(item, Layer) and item.uses_call()
            and not type(item).call.__module__.startswith("minidl."))


def is_composite(item):
    """A minidl layer (or stacked cells) that names the objects it holds as Keras's
    attributes do: keras_state_children() -> [(attribute path, object or list)]."""
    return hasattr(item, "keras_state_children")


def is_saveable(item):
    return isinstance(item, Layer) or is_model(item) or is_composite(item)


_LAYER_INTERNALS = None


def _layer_internals():
    """The attribute names minidl's Layer sets for itself (its nodes, calls, weights): never
    a user's sublayer."""
    global _LAYER_INTERNALS
    if _LAYER_INTERNALS is None:
        _LAYER_INTERNALS = frozenset(vars(Layer(name="state_walk_probe")))
    return _LAYER_INTERNALS


def _name_key(name):
    return f"~{name}" if name.startswith("_") else name


def keras_class_name(item):
    """The class name Keras would give `item` (a minidl model: Functional or Sequential)."""
    if is_model(item) and not is_subclassed(item):
        return keras_model_class(item)
    # RNN(LSTMCell(...)) runs as minidl's LSTM, which Keras names "RNN"
    return getattr(item, "keras_class", None) or type(item).__name__


def tracked_flat(owner):
    """The layers and models `owner` holds in its attributes, lists, tuples and dicts
    searched at any depth, once each, in the order they were set (Keras's `_layers`)."""
    found, seen = [], set()

    def visit(value, depth):
        if is_saveable(value):
            if value is not owner and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
        elif depth < 16 and isinstance(value, (list, tuple, dict)):
            for v in (value.values() if isinstance(value, dict) else value):
                visit(v, depth + 1)

    for name, value in _instance_attributes(owner):
        visit(value, 0)
    return found


def _instance_attributes(owner):
    skip = _layer_internals() if isinstance(owner, Layer) else ()
    return [(name, value) for name, value in vars(owner).items()
            if name not in skip and name not in ("_call_layer", "_variables")
            and not name.startswith("__")]


def _attributes(owner):
    """(name, value) of `owner`'s attributes in Keras's walking order: its instance
    attributes and the properties its own (non-minidl) classes define; a subclassed model's
    `layers` among them."""
    items = dict(_instance_attributes(owner))
    for cls in type(owner).__mro__:
        if cls.__module__.startswith("minidl.") or cls is object:
            continue
        for name, member in vars(cls).items():
            if isinstance(member, property) and name not in items and not name.startswith("__"):
                try:
                    items[name] = getattr(owner, name)
                except Exception:          # as Keras: an attribute that fails is skipped
                    continue
    if is_subclassed(owner):
        items["layers"] = tracked_flat(owner)
    return [(name, items[name]) for name in sorted(items, key=_name_key)]


def own_weights(item):
    """The weights Keras writes at an object's own path (a subclassed model's: what its
    add_weight made, trainable first, as a layer's)."""
    if is_subclassed(item):
        own = item._variables.weights
        return [w for w in own if w.trainable] + [w for w in own if not w.trainable]
    if is_model(item):
        return []
    if is_user_layer(item):
        own = list(item.weights_by_name.values())
        return [w for w in own if w.trainable] + [w for w in own if not w.trainable]
    if is_composite(item):        # a cell's are its own; a wrapper's are its layers'
        return list(getattr(item, "keras_own_weights", ()))
    return list(item.weights)


def _children(item, orders):
    if is_model(item) and not is_subclassed(item):
        return [("layers", list(_ordered(item, orders)))]
    if is_subclassed(item) or is_user_layer(item):
        return _attributes(item)
    if is_composite(item):
        return item.keras_state_children()
    return []


def state_groups(model, orders=None):
    """[(path, object, weights)]: each object Keras writes, at the path of its group
    ("" is the model's own: the file's top-level vars), with the weights it writes in
    <path>/vars in order. orders: weights_h5.keras_layer_order of the Keras config a model
    was rebuilt from."""
    groups, visited = [], set()
    _visit(model, "", groups, visited, orders)
    return groups


def _join(path, name):
    return f"{path}/{name}" if path else name


def _visit(item, path, groups, visited, orders):
    if id(item) in visited:
        return
    visited.add(id(item))
    # a subclassed model's own weights live in its holder layer (models/subclassing.py),
    # which reads and writes them
    own = own_weights(item)
    # a cell's weights are its fused layer's, which reads and writes them
    owner = getattr(item, "keras_state_owner", item)
    if getattr(item, "keras_weights_in_cell", False):
        # Keras's recurrent layers (LSTM, ConvLSTM2D, ...) hold their weights in their cell:
        # an empty group of the layer's own, the weights at <path>/cell/vars
        groups.append((path, item, []))
        groups.append((_join(path, "cell"), item, own))
    else:
        groups.append((path, item._variables if is_subclassed(item) else owner, own))
    for name, child in _children(item, orders):
        if is_saveable(child):
            _visit(child, _join(path, name), groups, visited, orders)
        elif isinstance(child, (list, tuple, dict)):
            _container(child, _join(path, name), groups, visited, orders, set())


def _container(container, path, groups, visited, orders, seen_containers):
    if id(container) in seen_containers or len(seen_containers) > 1024:
        return
    seen_containers.add(id(container))
    used = {}
    for child in (container.values() if isinstance(container, dict) else container):
        if is_saveable(child):
            name = _unique(snake_case(keras_class_name(child)), used)
            _visit(child, _join(path, name), groups, visited, orders)
        elif isinstance(child, (list, tuple, dict)):
            name = _unique("container", used)
            _container(child, _join(path, name), groups, visited, orders, seen_containers)


def _unique(name, used):
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def keras_variables(item, orders=None, seen=None):
    """`item`'s weights in Keras's order (layer.weights: its own variables, then each layer
    it tracks, in turn): the order of model.trainable_variables, which an optimizer's slots
    follow."""
    seen = set() if seen is None else seen
    out = []
    for w in own_weights(item):
        if id(w) not in seen:
            seen.add(id(w))
            out.append(w)
    if is_model(item) and not is_subclassed(item):
        subs = list(_ordered(item, orders))
    elif is_subclassed(item) or is_user_layer(item):
        subs = tracked_flat(item)
    elif is_composite(item):
        # a wrapper's layer.weights order (Bidirectional: forward, then backward), which
        # Keras's trainable_variables follow
        subs = []
        for w in item.weights:
            if id(w) not in seen:
                seen.add(id(w))
                out.append(w)
    else:
        subs = []
    for sub in subs:
        out.extend(keras_variables(sub, orders, seen))
    return out
