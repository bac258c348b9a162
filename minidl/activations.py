"""Activation names understood by layers; the math lives in the backends."""

ACTIVATIONS = ("linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax")


def get(identifier, owner="layer"):
    """Normalize an activation argument (None, a name) to one of ACTIVATIONS."""
    if identifier is None:
        return "linear"
    if isinstance(identifier, str) and identifier.lower() in ACTIVATIONS:
        return identifier.lower()
    raise ValueError(f"{owner}: unknown activation {identifier!r}; expected one of {ACTIVATIONS}")
