"""The argument checks of the executable contract: one vocabulary for every section. A check
costs a tuple comparison when it passes; the message (op, argument, shapes) is built only when
it fails."""

from ..checks import MAX_RANK, check_shape  # noqa: F401 -- MAX_RANK: the tensor ops' rank limit

PRECISIONS = ("bfloat16", "float16")   # what round_to_precision rounds to (base.py re-exports it)

# Operation names of the tensor ops (contract/tensor_ops.py; minidl.ops builds on them); a
# backend's kernels use the position of a name in its tuple as the operation's code.
UNARY_OPS = ("negative", "abs", "sign", "sqrt", "square", "exp", "log", "log1p", "relu",
             "sigmoid", "tanh", "reciprocal", "logical_not", "floor", "round", "erf", "sin", "cos",
             "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh")
BINARY_OPS = ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
              "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
              "logical_or")
REDUCE_OPS = ("sum", "max", "min", "prod")


def same_shape(op, name, tensor, shape):
    """Raise ValueError unless `tensor` (any backend's: it has .shape) has exactly `shape`."""
    if tensor.shape != shape:
        check_shape(op, name, tensor, shape)


def optional_shape(op, name, tensor, shape):
    """same_shape, with None allowed (an optional argument the op does without)."""
    if tensor is not None and tensor.shape != shape:
        check_shape(op, name, tensor, shape)


def step_at_least_one(op, step):
    """The step counters of the bias-corrected optimizers count from 1 (1 - beta ** 0 is 0)."""
    if step < 1:
        raise ValueError(f"{op}: step is 1-based, got {step}")


def check_precision(op, precision):
    """None (float32) or one of PRECISIONS, else a ValueError naming the op."""
    if precision is not None and precision not in PRECISIONS:
        raise ValueError(f"{op}: precision must be None or one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision
