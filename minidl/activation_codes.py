"""The one list of activations the backends run and the number each has in the C and OpenCL
kernels: a leaf module (it imports nothing), so that the backend contract
(backends/contract/activations.py) can check a name without importing Keras's activation
functions, which are built on the backends. minidl.activations re-exports it."""

# The C and OpenCL kernels number the activations by position here
# (csrc/internal/vector_kernels.h, kernels/elementwise.cl): new ones go at the end.
# "gelu" is Keras's gelu(approximate=False) (the erf form, Keras's default); "gelu_approximate"
# is gelu(approximate=True), the tanh form. "silu" is also Keras's "swish", "hard_silu" its
# "hard_swish"; hard_sigmoid is Keras 3's relu6(x + 3) / 6.
ACTIVATIONS = ("linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax",
               "gelu", "gelu_approximate", "silu", "elu", "selu", "softplus", "softsign",
               "hard_sigmoid", "hard_silu", "mish", "exponential", "relu6")
CODES = {name: code for code, name in enumerate(ACTIVATIONS)}

# Activations whose derivative is not a function of their output y = f(x):
# activation_backward needs the forward input x for them.
NEEDS_INPUT = frozenset({"gelu", "gelu_approximate", "silu", "elu", "softplus", "hard_silu",
                         "mish"})


def code(op, name):
    """The kernels' number for activation `name`, or a ValueError naming the backend op."""
    try:
        return CODES[name]
    except (KeyError, TypeError):
        raise ValueError(f"{op}: unknown activation {name!r}; known: {list(ACTIVATIONS)}") from None
