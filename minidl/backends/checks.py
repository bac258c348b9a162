"""Argument checks shared by the backends: every error names the op, the argument and the shapes."""

import numbers


def check_shape(op, name, array, shape):
    """Raise ValueError unless `array` has exactly `shape`."""
    if tuple(array.shape) != tuple(shape):
        raise ValueError(f"{op}: {name} must have shape {tuple(shape)}, got {tuple(array.shape)}")


def check_pixels(op, name, shape):
    """Raise ValueError unless images `shape` (N, H, W, C) have at least one pixel: a mean or
    a sample over none has no value."""
    if shape[1] * shape[2] < 1:
        raise ValueError(f"{op}: {name} must have at least 1 pixel (H, W >= 1), got {tuple(shape)}")


def check_same_size(op, name, array, other_name, other):
    """Raise ValueError unless `array` and `other` hold the same number of elements."""
    if array.size != other.size:
        raise ValueError(f"{op}: {name} of shape {tuple(array.shape)} and {other_name} of shape "
                         f"{tuple(other.shape)} must hold the same number of elements")


def check_dropout_args(op, rate, seed):
    """dropout_forward's scalars: a rate in [0, 1) (1 would scale the kept units by 1 / 0) and
    an integer seed (Python or numpy: numpy's integers are numbers.Integral)."""
    if not 0 <= rate < 1:
        raise ValueError(f"{op}: rate must be in [0, 1), got {rate}")
    if not isinstance(seed, numbers.Integral):
        raise TypeError(f"{op}: seed must be an int, got {type(seed).__name__}")


def is_sparse(targets):
    """True for class-index targets (an integer dtype: int32 (N,)), False for float targets
    shaped like the predictions: how every backend tells the two apart."""
    return getattr(getattr(targets, "dtype", None), "kind", None) in ("i", "u")


def check_scalar_out(op, out):
    """The (1,) tensors that receive loss sums and metric counts."""
    check_shape(op, "out", out, (1,))


def check_concat(op, parts, whole, parts_name, whole_name):
    """parts must match whole in every axis but the last, and their last axes add up to its."""
    lead = tuple(whole.shape[:-1])
    for index, part in enumerate(parts):
        if tuple(part.shape[:-1]) != lead:
            raise ValueError(f"{op}: {parts_name}[{index}] of shape {tuple(part.shape)} does not "
                             f"match {whole_name} of shape {tuple(whole.shape)} but in the last axis")
    total = sum(part.shape[-1] for part in parts)
    if total != whole.shape[-1]:
        raise ValueError(f"{op}: last axes of {parts_name} add up to {total}, "
                         f"{whole_name} has {whole.shape[-1]}")


def require_input(op, name, x, shape):
    """activation_backward of an activation in activations.NEEDS_INPUT needs its forward input x."""
    if x is None:
        raise ValueError(f"{op}: activation {name!r} needs the forward input x (its derivative is "
                         f"not a function of the output y)")
    if tuple(x.shape) != tuple(shape):
        raise ValueError(f"{op}: x must have shape {tuple(shape)}, got {tuple(x.shape)}")
