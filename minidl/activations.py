"""Activation names understood by layers and backends; the math lives in the backends."""

# The one list of activations. The C and OpenCL kernels number them by position here
# (csrc/elementwise.h, kernels/elementwise.cl): 0 linear, 1 relu, ... 5 softmax.
ACTIVATIONS = ("linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax")
_CODES = {name: code for code, name in enumerate(ACTIVATIONS)}


def get(identifier, owner="layer"):
    """Normalize an activation argument (None, a name) to one of ACTIVATIONS."""
    if identifier is None:
        return "linear"
    if isinstance(identifier, str) and identifier.lower() in ACTIVATIONS:
        return identifier.lower()
    raise ValueError(f"{owner}: unknown activation {identifier!r}; expected one of {ACTIVATIONS}")


def code(op, name):
    """The kernels' number for activation `name`, or a ValueError naming the backend op."""
    try:
        return _CODES[name]
    except (KeyError, TypeError):
        raise ValueError(f"{op}: unknown activation {name!r}; known: {list(ACTIVATIONS)}") from None
