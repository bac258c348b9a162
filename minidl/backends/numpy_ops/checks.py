"""Argument checks shared by the numpy kernels: every error names the op, the argument and the shapes."""


def check_shape(op, name, array, shape):
    """Raise ValueError unless `array` has exactly `shape`."""
    if tuple(array.shape) != tuple(shape):
        raise ValueError(f"{op}: {name} must have shape {tuple(shape)}, got {tuple(array.shape)}")


def check_same_size(op, name, array, other_name, other):
    """Raise ValueError unless `array` and `other` hold the same number of elements."""
    if array.size != other.size:
        raise ValueError(f"{op}: {name} of shape {tuple(array.shape)} and {other_name} of shape "
                         f"{tuple(other.shape)} must hold the same number of elements")


def check_scalar_out(op, out):
    """The (1,) tensors that receive loss sums and metric counts."""
    if tuple(out.shape) != (1,):
        raise ValueError(f"{op}: out must have shape (1,), got {tuple(out.shape)}")

