"""get_config / from_config of functional models: layers, nested models and their calls.

    {"class_name": "Model", "name": ..., "layers": [
        {"class_name": ..., "config": ..., "name": ...,
         "inbound_nodes": [{"args": [[name, node, tensor], ...], "training": None}, ...]}],
     "input_layers": [[name, 0, 0], ...], "output_layers": [[name, node, tensor], ...],
     "input_keys": None or [...], "output_keys": None or [...],
     "input_structure": ..., "output_structure": ..., "output_nesting": None or [...]}

as Keras's functional config: a tensor is named by the layer (or nested model) that made
it, which of its calls in this model, and which of that call's outputs. A nested model's
"config" is its own get_config(). Loading replays the calls in an order where every
call's inputs exist (a shared layer's second call may need a layer listed after it).
"""

from .. import layers as layers_mod
from ..layers import custom_call
from ..custom_objects import get_registered_name
from ..mixed_precision import serialize as serialize_policy
from .. import tree
from . import structure
from .registry import MODEL_CLASSES, model_class


def functional_config(model):
    g = model.graph
    where, specs, order = {}, {}, []
    for t in g.inputs:
        where[id(t)] = [t.layer.name, 0, 0]
        specs[id(t.layer)] = _spec(t.layer)
        order.append(id(t.layer))
    for entry in g.entries:
        item = entry.model if hasattr(entry, "model") else entry.layer
        if id(item) not in specs:
            specs[id(item)] = _spec(item)
            order.append(id(item))
        spec = specs[id(item)]
        node = {"args": [where[id(t)] for t in entry.inputs], "training": entry.training}
        if getattr(entry, "options", None):   # the call's keyword arguments (use_causal_mask=)
            node["kwargs"] = dict(entry.options)
        spec["inbound_nodes"].append(node)
        k = len(spec["inbound_nodes"]) - 1
        for j, t in enumerate(entry.outputs):
            where[id(t)] = [item.name, k, j]
    return {"class_name": type(model).__name__, "name": model.name,
            "trainable": model.trainable,
            "layers": [specs[i] for i in order],
            "input_layers": [where[id(t)] for t in g.inputs],
            "output_layers": [where[id(t)] for t in g.outputs],
            "input_keys": g.input_keys, "output_keys": g.output_keys,
            "input_structure": g.input_structure, "output_structure": g.output_structure,
            "output_nesting": (structure.nesting_spec(g.output_nesting)
                               if g.output_nesting is not None else None)}


def _spec(item):
    """{"class_name", "config", "name", "inbound_nodes"} of a layer or nested model."""
    return dict(item_spec(item), name=item.name, inbound_nodes=[])


def item_spec(item):
    if hasattr(item, "graph"):
        return {"class_name": type(item).__name__, "config": item.get_config()}
    config = item.get_config()
    if not getattr(item, "_dtype_argument", False):   # InputLayer's dtype is its input's
        # every layer's policy, float32 too, as Keras saves it: a file loads as it was saved
        # whatever the global policy is when it is loaded
        config["dtype"] = serialize_policy(item.dtype_policy)
    return {"class_name": get_registered_name(item), "config": config}


def deserialize_item(spec):
    """A layer, or a nested model (rebuilt from its own config), from a layer spec."""
    if spec.get("class_name") in MODEL_CLASSES:
        return model_class(spec["class_name"]).from_config(spec["config"])
    return layers_mod.deserialize(spec["class_name"], spec["config"])


def _tensor(made, ref, owner):
    if not isinstance(ref, list) or len(ref) != 3:
        raise ValueError(f"{owner}: a tensor reference must be [layer name, node, tensor], "
                         f"got {ref!r:.100}")
    name, node, index = ref
    calls = made.get(name)
    if calls is None or not isinstance(node, int) or node >= len(calls) \
            or not isinstance(index, int) or index >= len(calls[node]):
        return None
    return calls[node][index]


def replay(config, start, call, owner):
    """Run a functional config's calls in an order where each call's inputs exist.

    start(spec) gives an InputLayer spec's outputs (None for other specs); call(position,
    spec, args, training) makes one call of spec's item and returns its outputs. Returns
    (input tensors, output tensors) as named by input_layers / output_layers."""
    made, pending = {}, []
    for position, spec in enumerate(config["layers"]):
        outs = start(spec)
        if outs is not None:
            made[spec["config"]["name"]] = [outs]
        elif spec.get("inbound_nodes"):
            pending.append((position, spec, list(spec["inbound_nodes"])))
    while pending:   # each pass makes at least one call, or the config is inconsistent
        progressed = False
        for position, spec, nodes in pending:
            if not isinstance(nodes[0], dict) or not isinstance(nodes[0].get("args"), list):
                raise ValueError(f"{owner}: an inbound node must be an object with an args list")
            args = [_tensor(made, ref, owner) for ref in nodes[0]["args"]]
            if not args or any(a is None for a in args):
                continue
            outs = call(position, spec, args, nodes[0].get("training"), nodes[0].get("kwargs"))
            made.setdefault(spec["config"]["name"], []).append(outs)
            nodes.pop(0)
            progressed = True
        pending = [p for p in pending if p[2]]
        if not progressed:
            names = [spec["config"].get("name") for _, spec, _ in pending]
            raise ValueError(f"{owner}: the calls of {names} read tensors no layer makes")
    inputs = [_tensor(made, ref, owner) for ref in config["input_layers"]]
    outputs = [_tensor(made, ref, owner) for ref in config["output_layers"]]
    if any(t is None for t in inputs + outputs):
        raise ValueError(f"{owner}: input_layers / output_layers name tensors no layer makes")
    return inputs, outputs


def functional_from_config(cls, config):
    owner = f"{cls.__name__}.from_config"
    items = {}

    def start(spec):
        if spec.get("class_name") != "InputLayer":
            return None
        layer = layers_mod.deserialize(spec["class_name"], spec["config"])
        return [layer.output]

    def call(position, spec, args, training, kwargs=None):
        if position not in items:
            items[position] = deserialize_item(spec)
        args, options = node_arguments(items[position], args, kwargs)
        return _call(items[position], args, training, options)

    inputs, outputs = replay(config, start, call, owner)
    model = cls(_restructure(inputs, config.get("input_structure"), config.get("input_keys")),
                _restructure(outputs, config.get("output_structure"), config.get("output_keys"),
                             config.get("output_nesting"), owner),
                name=config["name"])
    if config.get("trainable") is False:
        model.trainable = False
    return model


def node_arguments(item, args, kwargs):
    """A saved node's inputs and call options; a layer whose older files recorded its call
    differently translates them (node_arguments_from_file: attention's key / mask flags)."""
    if not kwargs or hasattr(item, "graph"):
        return args, {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"the node kwargs of {item.describe()} must be a dict, got {type(kwargs).__name__}")
    if hasattr(item, "node_arguments_from_file"):
        return item.node_arguments_from_file(args, kwargs)
    return args, dict(kwargs)


def _call(item, args, training, options=None):
    if hasattr(item, "graph"):   # a nested model: its outputs as a flat list
        out = item(args if len(args) > 1 else args[0], training=training)
        return item.graph.flat_outputs(out)
    options = item.check_call_options(options or {})
    custom_call.restore_layout(item, options)
    item.accept_node_inputs(len(args))
    if not item.multiple_inputs and len(args) != 1:
        raise ValueError(f"{item.describe()} takes one input, the config feeds it {len(args)}")
    node = item.add_node(args, training, options=options)
    return node.outputs


def _restructure(tensors, kind, keys, nesting=None, owner="from_config"):
    if kind == "nested":   # nesting: the saved nesting_spec, or the original outputs
        spec = structure.nesting_spec(nesting) if tree.is_nested(nesting) else nesting
        return tree.pack_sequence_as(structure.check_nesting_spec(spec, len(tensors), owner),
                                     tensors)
    if kind == "dict" and keys:
        return dict(zip(keys, tensors))
    if kind == "list":
        return tensors
    return tensors[0] if len(tensors) == 1 else tensors
