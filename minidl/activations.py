"""Activation names understood by layers and backends; the math lives in the backends."""

# The one list of activations. The C and OpenCL kernels number them by position here
# (csrc/internal/vector_kernels.h, kernels/elementwise.cl): new ones go at the end.
# "gelu" is Keras's gelu(approximate=False) (the erf form, Keras's default); "gelu_approximate"
# is gelu(approximate=True), the tanh form. "silu" is also Keras's "swish", "hard_silu" its
# "hard_swish"; hard_sigmoid is Keras 3's relu6(x + 3) / 6.
ACTIVATIONS = ("linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax",
               "gelu", "gelu_approximate", "silu", "elu", "selu", "softplus", "softsign",
               "hard_sigmoid", "hard_silu", "mish", "exponential", "relu6")
_CODES = {name: code for code, name in enumerate(ACTIVATIONS)}

# Keras spellings that name the same function (Keras serializes the canonical name too).
ALIASES = {"swish": "silu", "hard_swish": "hard_silu", None: "linear"}

# Activations whose derivative is not a function of their output y = f(x):
# activation_backward needs the forward input x for them.
NEEDS_INPUT = frozenset({"gelu", "gelu_approximate", "silu", "elu", "softplus", "hard_silu",
                         "mish"})

# The `alpha` an activation named in a layer's activation= gets (Keras's defaults:
# leaky_relu(negative_slope=0.2), elu(alpha=1.0)); the others ignore alpha.
DEFAULT_ALPHA = {"leaky_relu": 0.2, "elu": 1.0}


def get(identifier, owner="layer"):
    """Normalize an activation argument (None, a name or a Keras alias) to one of ACTIVATIONS."""
    if isinstance(identifier, str):
        identifier = identifier.lower()
    if identifier in ALIASES:
        return ALIASES[identifier]
    if isinstance(identifier, str) and identifier in _CODES:
        return identifier
    raise ValueError(f"{owner}: unknown activation {identifier!r}; expected one of "
                     f"{ACTIVATIONS} (or an alias: {sorted(a for a in ALIASES if a)})")


def default_alpha(name):
    """The alpha activation_forward/backward get for `name` used through activation=."""
    return DEFAULT_ALPHA.get(name, 0.0)


def code(op, name):
    """The kernels' number for activation `name`, or a ValueError naming the backend op."""
    try:
        return _CODES[name]
    except (KeyError, TypeError):
        raise ValueError(f"{op}: unknown activation {name!r}; known: {list(ACTIVATIONS)}") from None
