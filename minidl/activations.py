"""Keras's activations: the names layers and backends understand (ACTIVATIONS, resolve) and
Keras 3's activation functions with get / serialize / deserialize (activation_functions.py).
The math lives in the backends."""

# The one list of activations (their kernel codes and which need the forward input x in
# backward): activation_codes.py, a leaf module the backend contract imports.
from .activation_codes import ACTIVATIONS, CODES, NEEDS_INPUT, code  # noqa: F401

# Keras spellings that name the same function (Keras serializes the canonical name too).
ALIASES = {"swish": "silu", "hard_swish": "hard_silu", None: "linear"}

# The `alpha` an activation named in a layer's activation= gets (Keras's defaults:
# leaky_relu(negative_slope=0.2), elu(alpha=1.0)); the others ignore alpha.
DEFAULT_ALPHA = {"leaky_relu": 0.2, "elu": 1.0}


def resolve(identifier, owner="layer", allow_functions=True):
    """Normalize a layer's activation argument (None, a name, a Keras alias or one of the
    activation functions below with its default arguments) to one of ACTIVATIONS. A function
    of your own (written with minidl.ops), or the registered name of one, is kept as the
    function when allow_functions (layers then run it on a tape: layers/core.py)."""
    if callable(identifier) and FUNCTIONS.get(getattr(identifier, "__name__", None)) is identifier:
        identifier = identifier.__name__
    if callable(identifier) and not isinstance(identifier, str) and allow_functions:
        return identifier
    if isinstance(identifier, str) and identifier.lower() not in CODES \
            and identifier.lower() not in ALIASES and allow_functions:
        found = get_registered_object(identifier)
        if callable(found):
            return found
    if isinstance(identifier, str):
        identifier = identifier.lower()
    if identifier in ALIASES:
        return ALIASES[identifier]
    if isinstance(identifier, str) and identifier in CODES:
        return identifier
    raise ValueError(f"{owner}: unknown activation {identifier!r}; expected one of "
                     f"{ACTIVATIONS} (or an alias: {sorted(a for a in ALIASES if a)}), or a "
                     "function of your own (registered with register_keras_serializable to be "
                     "saved)")


def config_name(activation):
    """A layer's activation as get_config writes it: the name, or a function's registered
    name (load_model finds it through custom_objects or register_keras_serializable)."""
    if isinstance(activation, str):
        return activation
    from .custom_objects import get_registered_name
    return get_registered_name(activation)


def default_alpha(name):
    """The alpha activation_forward/backward get for `name` used through activation=."""
    return DEFAULT_ALPHA.get(name, 0.0)


from .custom_objects import get_custom_objects, get_registered_object  # noqa: E402

# Keras 3's functions: keras.activations.relu(x, ...), ... (imported last: they use minidl.ops,
# whose backends read the tables above)
from .activation_functions import (FUNCTIONS, celu, elu, exponential, gelu, glu, hard_shrink,  # noqa: E402
                                   hard_sigmoid, hard_silu, hard_swish, hard_tanh, leaky_relu, linear,
                                   log_sigmoid, log_softmax, mish, relu, relu6, selu, sigmoid, silu,
                                   soft_shrink, softmax, softplus, softsign, sparse_plus, sparse_sigmoid,
                                   sparsemax, squareplus, swish, tanh, tanh_shrink, threshold)


def get(identifier):
    """Keras's activations.get: the function named by a string (Keras's names and aliases),
    by a serialize() dict, or a callable itself; None is linear."""
    if identifier is None:
        return linear
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation):
    """The name of a built-in activation function (Keras writes the bare name), or the
    registered name of one of your own (@register_keras_serializable)."""
    name = getattr(activation, "__name__", None)
    if FUNCTIONS.get(name) is activation:
        return name
    registered = next((key for key, value in get_custom_objects().items() if value is activation), None)
    if registered is None:
        raise ValueError(f"Unknown activation function '{activation}' cannot be serialized due to "
                         "invalid function name. Make sure to use an activation name that matches the "
                         "references defined in activations.py or use "
                         "`@keras.saving.register_keras_serializable()` to register any custom activations.")
    return {"module": None, "class_name": "function", "config": registered,
            "registered_name": registered}


def deserialize(config, custom_objects=None):
    """The activation function a name or a serialize() dict stands for; names of your own come
    from custom_objects, a custom_object_scope or the registry."""
    name = config
    if isinstance(config, dict):
        name = config.get("registered_name") or config.get("config")
    if isinstance(name, str):
        found = FUNCTIONS.get(name) or get_registered_object(name, custom_objects)
        if found is not None and callable(found):
            return found
    raise ValueError(f"Could not interpret activation function identifier: {config!r}; known: "
                     f"{sorted(FUNCTIONS)} or a function registered with register_keras_serializable")
