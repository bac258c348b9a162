"""minidl's layer and model configs <-> Keras 3's serialized configs.

minidl's get_config already uses Keras's argument names; Keras's serialized form adds
{"module", "class_name", "config", "registered_name", "build_config"} around each object,
dtype policies and initializers as objects, and its own functional-call format
(`__keras_tensor__` references, a merge layer's inputs as one list argument). Keras keys
that minidl has no argument for are accepted when they hold the value that means minidl's
behaviour (data_format "channels_last", sparse False, ...) and refused otherwise, naming the
layer and the key. Initializers minidl does not have are left at minidl's default: loaded
weights come from the file, the initializer matters only to a fresh copy.
"""

import inspect
import warnings

from .. import initializers as initializers_mod
from .. import tree
from ..models import structure
from ..custom_objects import get_registered_name, get_registered_object
from ..layers import FILE_CLASSES, LAYER_CLASSES
from ..layers.rnn_cells import rnn_config
from .state_walk import (is_model, keras_class_name, keras_functional_order, keras_model_class,
                         snake_case)

# Keras config keys minidl has no argument for, and the values under which ignoring them
# changes nothing (other values are refused).
_NEUTRAL = {
    "data_format": ("channels_last",), "sparse": (False,), "ragged": (False,),
    "optional": (False,), "quantization_config": (None,), "synchronized": (False,),
    "renorm": (False,), "renorm_clipping": (None,), "lora_rank": (None,),
    "lora_alpha": (None,), "antialias": (False,), "keepdims": (False,),
    "trainable": (True,),      # Keras's StackedRNNCells config has it, minidl's has not
}
# keys holding the spec of a layer or cell nested in a wrapper's config (Bidirectional,
# TimeDistributed, RNN, StackedRNNCells' list of cells), converted as a layer is
_NESTED_KEYS = ("layer", "backward_layer", "cell")
_NESTED_LIST_KEYS = ("cells",)
# keys ignored whatever they hold: renorm_momentum matters only with renorm (refused above);
# Keras 2 puts a Sequential's input shape on its first layer (model_from_keras makes it the
# InputLayer)
_IGNORED = {"renorm_momentum", "batch_input_shape", "input_shape", "input_dim", "batch_size"}
# penalties and constraints minidl's normalization and PReLU layers do not take: inference is
# the same without them, training is not, so a set one is dropped with a warning
_TRAINING_ONLY = {"beta_regularizer", "gamma_regularizer", "beta_constraint",
                  "gamma_constraint", "alpha_regularizer", "alpha_constraint"}
_INITIALIZER_KEYS = ("kernel_initializer", "recurrent_initializer", "bias_initializer", "gamma_initializer",
                     "beta_initializer", "moving_mean_initializer",
                     "moving_variance_initializer", "depthwise_initializer",
                     "pointwise_initializer", "alpha_initializer")
_OBJECT_KEYS = ("kernel_regularizer", "bias_regularizer", "activity_regularizer",
                "kernel_constraint", "bias_constraint", "depthwise_regularizer",
                "pointwise_regularizer", "depthwise_constraint", "pointwise_constraint")


class UnsupportedKerasConfig(ValueError):
    """A Keras config that minidl cannot build (the message names the layer and the key)."""


# ------------------------------------------------------------------ Keras -> minidl
def _layer_class(spec):
    name = spec.get("class_name")
    registered = spec.get("registered_name")
    for key in (registered, name):
        if isinstance(key, str):
            cls = get_registered_object(key, None, FILE_CLASSES)
            if cls is not None:
                return key, cls
    # the hint first: the message may be cut after a few hundred characters
    raise UnsupportedKerasConfig(
        f"unknown layer class {name!r} (registered name {registered!r}): pass a class of your "
        "own in custom_objects or register it with @register_keras_serializable; minidl's "
        f"layers: {sorted(LAYER_CLASSES)}")


def _dtype_name(value, where):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("config"), dict):
        return value["config"].get("name")
    raise UnsupportedKerasConfig(f"{where}: dtype {value!r:.100} is not a dtype policy")


def _initializer_name(value):
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("class_name"), str):
        return snake_case(value["class_name"])
    return None


def layer_from_keras(spec):
    """(minidl class name, minidl config) of one Keras layer spec."""
    if not isinstance(spec, dict) or not isinstance(spec.get("config"), dict):
        raise UnsupportedKerasConfig(f"a layer spec must be an object with a config object, "
                                     f"got {spec!r:.200}")
    class_name, cls = _layer_class(spec)
    config = dict(spec["config"])
    where = f"{spec.get('class_name')} {config.get('name')!r}"
    if spec.get("class_name") == "InputLayer":
        return "InputLayer", _input_from_keras(config, where)
    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    out = {}
    for key, value in config.items():
        if key == "dtype":
            name = _dtype_name(value, where)
            if name not in (None, "float32"):
                out["dtype"] = name
            continue
        if key in _INITIALIZER_KEYS:
            name = _initializer_name(value)
            try:
                initializers_mod.get(name)
            except ValueError:
                continue   # minidl's default; the weights come from the file
            if key in params:
                out[key] = name
            continue
        if key in _OBJECT_KEYS and isinstance(value, dict):
            value = {"class_name": value.get("class_name"), "config": value.get("config", {})}
        if key in _NESTED_KEYS and _is_spec(value):
            value = _nested_from_keras(value)
        elif key in _NESTED_LIST_KEYS and isinstance(value, list) and all(map(_is_spec, value)):
            value = [_nested_from_keras(item) for item in value]
        if key in params or takes_any:
            out[key] = value
        elif key in _IGNORED or (key in _NEUTRAL and value in _NEUTRAL[key]) or value is None:
            continue
        elif key in _TRAINING_ONLY:
            warnings.warn(f"{where}: minidl's {cls.__name__} has no {key}; it is dropped (the "
                          "predictions are the same, training is not)", stacklevel=4)
        else:
            raise UnsupportedKerasConfig(f"{where}: minidl's {cls.__name__} has no {key!r} "
                                         f"argument, and {key}={value!r:.100} changes what "
                                         "the layer computes")
    return class_name, out


def _is_spec(value):
    return isinstance(value, dict) and "class_name" in value and "config" in value


def _nested_from_keras(spec):
    class_name, config = layer_from_keras(spec)
    return {"class_name": class_name, "config": config}


def _input_from_keras(config, where):
    for key in ("sparse", "ragged", "optional"):
        if config.get(key):
            raise UnsupportedKerasConfig(f"{where}: minidl's InputLayer has no {key} inputs")
    shape = config.get("batch_shape", config.get("batch_input_shape"))
    if not isinstance(shape, list) or not shape:
        raise UnsupportedKerasConfig(f"{where}: batch_shape must be a list, got {shape!r:.100}")
    out = {"shape": list(shape[1:]), "name": config.get("name")}
    if config.get("dtype") not in (None, "float32"):
        out["dtype"] = config["dtype"]
    return out


def _plain(value):
    """A call keyword argument a node keeps as an option (not a tensor)."""
    return value is None or isinstance(value, (bool, int, float, str))


def _refs(node, where):
    """[[layer, node, tensor]], the training flag and the call options of one Keras inbound
    node (Keras 3's {"args", "kwargs"} or Keras 2's [[layer, node, tensor, kwargs], ...])."""
    if isinstance(node, dict):
        kwargs = dict(node.get("kwargs") or {})
        # a recurrent layer's initial_state: tensors after its input (minidl's layout)
        states = kwargs.pop("initial_state", None)
        states = [] if states is None else (states if isinstance(states, list) else [states])
        extra = {k: v for k, v in kwargs.items()
                 if k not in ("training", "mask") and not _plain(v)}
        if extra or not isinstance(node.get("args"), list):
            raise UnsupportedKerasConfig(f"{where}: a call with arguments {sorted(extra)} "
                                         "cannot be rebuilt")
        refs = []
        for arg in node["args"] + ([states] if states else []):
            for t in (arg if isinstance(arg, list) else [arg]):
                history = t.get("config", {}).get("keras_history") if isinstance(t, dict) else None
                if not isinstance(history, list) or len(history) != 3:
                    raise UnsupportedKerasConfig(f"{where}: a call argument is not a tensor of "
                                                 f"the model: {t!r:.100}")
                refs.append(list(history))
        options = {k: v for k, v in kwargs.items() if k not in ("training", "mask") and v is not None}
        mine = node.get("minidl_call_options")   # older minidl files: attention's input layout
        if isinstance(mine, dict):
            options.update({k: bool(v) for k, v in mine.items() if isinstance(k, str)})
        return refs, kwargs.get("training"), options
    if isinstance(node, list):   # Keras 2
        refs = []
        for r in node:
            if not isinstance(r, list) or len(r) < 3:
                raise UnsupportedKerasConfig(f"{where}: bad Keras 2 inbound node {r!r:.100}")
            refs.append(list(r[:3]))
        return refs, None, {}
    raise UnsupportedKerasConfig(f"{where}: bad inbound node {node!r:.100}")


def _io_refs(value, where):
    """input_layers / output_layers: one [name, node, tensor] or a list of them; (refs,
    structure)."""
    if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str):
        return [value], "single"
    if isinstance(value, list) and all(_is_ref(r) for r in value):
        return [list(r) for r in value], "list"
    if isinstance(value, dict) and all(_is_ref(r) for r in value.values()):
        return [list(r) for r in value.values()], "dict"
    refs = _nested_refs(value)
    if refs:
        return refs, "nested"
    raise UnsupportedKerasConfig(f"{where}: input/output layers {value!r:.100}")


def _nested_refs(value, depth=0):
    """The references of nested output_layers in keras.tree's order (a dict's by sorted
    key), or None when something else than lists, string-keyed dicts and references is in."""
    if _is_ref(value):
        return [list(value)]
    if depth > 32 or not value or not isinstance(value, (list, dict)):
        return None
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return None
        value = [value[k] for k in sorted(value)]
    found = []
    for child in value:
        refs = _nested_refs(child, depth + 1)
        if refs is None:
            return None
        found += refs
    return found


def _is_ref(value):
    """Whether value is a tensor reference [layer name, node, tensor]."""
    return (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
            and all(type(i) is int for i in value[1:]))


def model_from_keras(spec, depth=0):
    """minidl's config (with class_name) of a Keras Sequential / Functional spec."""
    if depth > 32:
        raise UnsupportedKerasConfig("models are nested more than 32 deep")
    if not isinstance(spec, dict) or not isinstance(spec.get("config"), dict):
        raise UnsupportedKerasConfig(f"a model spec must be an object with a config, got "
                                     f"{spec!r:.200}")
    kind, config = spec.get("class_name"), spec["config"]
    layers = config.get("layers")
    if not isinstance(layers, list) or not layers:
        raise UnsupportedKerasConfig(f"{kind} {config.get('name')!r}: no layers list")
    if kind == "Sequential":
        items = [_item_from_keras(s, depth) for s in layers]
        if items[0]["class_name"] != "InputLayer":
            shape = config.get("build_input_shape") or layers[0]["config"].get("batch_input_shape")
            if not isinstance(shape, list):
                raise UnsupportedKerasConfig(f"Sequential {config.get('name')!r} has no input "
                                             "shape (no InputLayer, no build_input_shape)")
            items.insert(0, {"class_name": "InputLayer", "config": {"shape": list(shape[1:])}})
        return {"class_name": "Sequential", "name": config.get("name"),
                "trainable": config.get("trainable", True), "layers": items}
    if kind in ("Functional", "Model"):
        where = f"{kind} {config.get('name')!r}"
        items = []
        for s in layers:
            item = _item_from_keras(s, depth)
            item["name"] = item["config"].get("name", s.get("name"))
            nodes = s.get("inbound_nodes") or []
            item["inbound_nodes"] = []
            for node in nodes:
                refs, training, options = _refs(node, f"{where}, layer {item['name']!r}")
                entry = {"args": refs, "training": training}
                if options:
                    entry["kwargs"] = options
                item["inbound_nodes"].append(entry)
            items.append(item)
        inputs, in_kind = _io_refs(config.get("input_layers"), where)
        outputs, out_kind = _io_refs(config.get("output_layers"), where)
        return {"class_name": "Model", "name": config.get("name"),
                "trainable": config.get("trainable", True), "layers": items,
                "input_layers": inputs, "output_layers": outputs,
                "input_keys": list(config["input_layers"]) if in_kind == "dict" else None,
                "output_keys": list(config["output_layers"]) if out_kind == "dict" else None,
                "input_structure": in_kind, "output_structure": out_kind,
                "output_nesting": (_nesting_of_refs(config["output_layers"])
                                   if out_kind == "nested" else None)}
    raise UnsupportedKerasConfig(f"model class {kind!r}: minidl reads Keras's Sequential and "
                                 "Functional models (a subclassed model's file needs its class)")


def _item_from_keras(spec, depth):
    if isinstance(spec, dict) and spec.get("class_name") in ("Sequential", "Functional", "Model"):
        config = model_from_keras(spec, depth + 1)
        if config["class_name"] == "Model" and "name" in spec.get("config", {}):
            config["name"] = spec["config"]["name"]
        return {"class_name": config["class_name"], "config": config}
    class_name, config = layer_from_keras(spec)
    return {"class_name": class_name, "config": config}


# ------------------------------------------------------------------ minidl -> Keras
def _dtype_policy(name="float32"):
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name},
            "registered_name": None}


def _keras_initializer(name):
    return {"module": "keras.initializers",
            "class_name": "".join(p.capitalize() for p in str(name).split("_")),
            "config": {}, "registered_name": None}


def _keras_object(value, module):
    if not isinstance(value, dict):
        return value
    return {"module": module, "class_name": value.get("class_name"),
            "config": value.get("config", {}), "registered_name": None}


def layer_to_keras(layer, input_shape=None):
    """Keras's serialized spec of a minidl layer (a Lambda is refused: Keras saves its code)."""
    cls_name = keras_class_name(layer)
    if cls_name == "Lambda":
        raise UnsupportedKerasConfig(f"{layer.describe()}: a Lambda layer's function cannot be "
                                     "written to a Keras file (Keras saves its bytecode); save "
                                     "as .minidl or use a registered layer class")
    # RNN(LSTMCell(...)) runs as an LSTM, which Keras writes as the RNN of its cell
    config = rnn_config(layer) if hasattr(layer, "keras_cell") else dict(layer.get_config())
    if cls_name == "InputLayer":
        return {"module": "keras.layers", "class_name": "InputLayer",
                "config": {"batch_shape": [None] + list(config["shape"]),
                           "dtype": config.get("dtype", "float32"),
                           "sparse": False, "ragged": False, "name": config["name"],
                           "optional": False}, "registered_name": None}
    config = _config_to_keras(config)
    registered = get_registered_name(layer)
    builtin = LAYER_CLASSES.get(type(layer).__name__) is type(layer)
    spec = {"module": "keras.layers" if builtin else None, "class_name": cls_name,
            "config": config, "registered_name": None if builtin else registered}
    if input_shape is not None and getattr(layer, "state_count", None) and \
            layer.multiple_inputs:
        # a recurrent layer called with initial_state: Keras builds its RNN with
        # build(sequences_shape, initial_state_shape) and writes the shapes by those names
        spec["build_config"] = {"shapes_dict": {"sequences_shape": input_shape[0],
                                                "initial_state_shape": input_shape[1:]}}
    elif input_shape is not None:
        spec["build_config"] = {"input_shape": input_shape}
    return spec


def _config_to_keras(config):
    """A minidl layer or cell config in Keras's serialized form (the layers and cells nested
    in it too)."""
    config = dict(config)
    config["dtype"] = _dtype_policy(config.get("dtype") or "float32")
    for key in _INITIALIZER_KEYS:
        if isinstance(config.get(key), str):
            config[key] = _keras_initializer(config[key])
    for key in _OBJECT_KEYS:
        if isinstance(config.get(key), dict):
            module = "keras.constraints" if "constraint" in key else "keras.regularizers"
            config[key] = _keras_object(config[key], module)
    for key in _NESTED_KEYS:
        if _is_spec(config.get(key)):
            config[key] = _nested_to_keras(config[key])
    for key in _NESTED_LIST_KEYS:
        if isinstance(config.get(key), list) and all(map(_is_spec, config[key])):
            config[key] = [_nested_to_keras(item) for item in config[key]]
    return config


def _nested_to_keras(spec):
    name = spec["class_name"]
    builtin = FILE_CLASSES.get(name) is not None
    out_name = "RNN" if name == "StackedRNN" else name
    return {"module": "keras.layers" if builtin else None, "class_name": out_name,
            "config": _config_to_keras(spec["config"]),
            "registered_name": None if builtin else name}


def _tensor(t, ref):
    return {"class_name": "__keras_tensor__",
            "config": {"shape": list(t.shape), "dtype": "float32", "keras_history": ref}}


def model_to_keras(model):
    """Keras's serialized spec of a Sequential or functional minidl model (nested included)."""
    kind = keras_model_class(model)
    if kind == "Sequential":
        in_shape = [None] + list(model._input.layer.shape)
        called = _first_call_shapes(model)
        layers = [layer_to_keras(model._input.layer)]
        for item in model.layers:
            layers.append(model_to_keras(item) if is_model(item)
                          else layer_to_keras(item, called.get(id(item))))
        config = {"name": model.name, "trainable": model.trainable, "dtype": _dtype_policy(),
                  "layers": layers, "build_input_shape": in_shape}
        return {"module": "keras", "class_name": "Sequential", "config": config,
                "registered_name": None, "build_config": {"input_shape": in_shape}}
    g = model.graph
    where, specs, order = {}, {}, []
    for t in g.inputs:
        where[id(t)] = [t.layer.name, 0, 0]
        specs[id(t.layer)] = dict(layer_to_keras(t.layer), name=t.layer.name, inbound_nodes=[])
        order.append(id(t.layer))
    for entry in g.entries:
        item = entry.model if hasattr(entry, "model") else entry.layer
        if id(item) not in specs:
            if is_model(item):
                spec = model_to_keras(item)
            else:
                shapes = [list(t.shape) for t in entry.inputs]
                spec = layer_to_keras(item, shapes if item.multiple_inputs else shapes[0])
            specs[id(item)] = dict(spec, name=item.name, inbound_nodes=[])
            order.append(id(item))
        spec = specs[id(item)]
        tensors = [_tensor(t, where[id(t)]) for t in entry.inputs]
        many = item.multiple_inputs if not is_model(item) else len(tensors) > 1
        node = {"args": [tensors] if many else tensors, "kwargs": {}}
        if many and getattr(item, "state_count", None) and len(tensors) == 1 + item.state_count:
            # a recurrent layer called with initial_state: Keras's call(x, initial_state=[...])
            node = {"args": tensors[:1], "kwargs": {"initial_state": tensors[1:]}}
        if entry.training is not None:
            node["kwargs"]["training"] = entry.training
        # the call's keyword arguments (attention's use_causal_mask), plain values as Keras
        # writes them
        node["kwargs"].update(getattr(entry, "options", None) or {})
        spec["inbound_nodes"].append(node)
        k = len(spec["inbound_nodes"]) - 1
        for j, t in enumerate(entry.outputs):
            where[id(t)] = [item.name, k, j]
    inputs = [where[id(t)] for t in g.inputs]
    outputs = [where[id(t)] for t in g.outputs]
    order = [id(item) for item in keras_functional_order(model)]   # Keras's model.layers
    config = {"name": model.name, "trainable": model.trainable, "layers": [specs[i] for i in order],
              "input_layers": _io(inputs, g.input_structure, g.input_keys),
              "output_layers": _io(outputs, g.output_structure, g.output_keys,
                                   g.output_nesting)}
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": config, "registered_name": "Functional",
            "build_config": {"input_shape": None}}


def subclassed_to_keras(model):
    """Keras's serialized spec of a subclassed model: its class by name (registered_name
    "package>Name" when registered), get_config(), and the input shape(s) it was built
    for; the class itself (its code) is never written, as Keras."""
    config = dict(model.get_config())
    if not isinstance(config.get("dtype"), dict):
        config["dtype"] = _dtype_policy(config.get("dtype") or "float32")
    shapes = [[None] + list(t.sample_shape) for t in model.graph.inputs]
    return {"module": None, "class_name": type(model).__name__, "config": config,
            "registered_name": get_registered_name(model),
            "build_config": {"input_shape": shapes if model.graph.input_structure == "list"
                             else shapes[0]}}


def subclassed_class(spec):
    """(name, class) of the class a Keras spec of a subclassed model names (registered, or
    in custom_objects), or (None, None)."""
    for key in (spec.get("registered_name"), spec.get("class_name")):
        if isinstance(key, str):
            cls = get_registered_object(key)
            if isinstance(cls, type):
                return key, cls
    return None, None


def subclassed_config(spec):
    """The config to pass to a subclassed model's from_config: Keras's, with its dtype
    policy object as the policy's name."""
    config = dict(spec["config"])
    if "dtype" in config:
        config["dtype"] = _dtype_name(config["dtype"], f"{spec.get('class_name')} config")
    return config


def _first_call_shapes(model):
    """{id(layer): the input shape(s) of its first call} (Keras's build_config)."""
    shapes = {}
    for entry in model.graph.entries:
        item = entry.model if hasattr(entry, "model") else entry.layer
        if id(item) not in shapes:
            given = [list(t.shape) for t in entry.inputs]
            shapes[id(item)] = given if len(given) > 1 else given[0]
    return shapes


def _nesting_of_refs(value):
    """The nesting of Keras's nested output_layers, each reference replaced by its position."""
    marked = tree.traverse(lambda r: 0 if _is_ref(r) else None, value)
    return structure.nesting_spec(marked)


def _io(refs, structure, keys, nesting=None):
    if structure == "nested":   # Keras writes the references nested as the outputs are
        return tree.pack_sequence_as(nesting, refs)
    if structure == "single":
        return refs[0]
    if structure == "dict" and keys:
        return dict(zip(keys, refs))
    return refs
