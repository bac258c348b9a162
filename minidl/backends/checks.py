"""Argument checks shared by the backends: every error names the op, the argument and the shapes.
The layer ops' checks first, then those of the tensor ops (minidl.ops; the op tables in base.py)."""

import numbers

import numpy as np

MAX_RANK = 8   # the tensor ops take tensors of rank <= MAX_RANK (base.py documents it with them)


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


# ------------------------------------------------------------ the tensor ops

def check_name(op, name, names):
    if name not in names:
        raise ValueError(f"{op}: unknown operation {name!r}; known: {', '.join(names)}")


def check_rank(op, *tensors):
    for t in tensors:
        if np.ndim(t) > MAX_RANK:
            raise ValueError(f"{op}: tensors of rank at most {MAX_RANK}, got shape {tuple(t.shape)}")


def check_broadcast(op, out_shape, **operands):
    """Each operand (a tensor or a float) broadcasts to out_shape, else a ValueError."""
    for arg, t in operands.items():
        if isinstance(t, float):
            continue
        shape = tuple(t.shape)
        if len(shape) > len(out_shape) or any(
                s not in (1, o) for s, o in zip(shape[::-1], tuple(out_shape)[::-1])):
            raise ValueError(f"{op}: {arg} of shape {shape} does not broadcast to out's shape "
                             f"{tuple(out_shape)}")


def check_strided(op, x, out_shape, offset, strides):
    """The strided addresses stay inside x (a view never reads or writes past its tensor)."""
    if len(strides) != len(out_shape):
        raise ValueError(f"{op}: strides {tuple(strides)} must have one entry per axis of "
                         f"{tuple(out_shape)}")
    if 0 in out_shape:
        return
    low = offset + sum(min(0, s * (n - 1)) for s, n in zip(strides, out_shape))
    high = offset + sum(max(0, s * (n - 1)) for s, n in zip(strides, out_shape))
    if low < 0 or high >= x.size:
        raise ValueError(f"{op}: offset {offset} and strides {tuple(strides)} over {tuple(out_shape)} "
                         f"address elements {low}..{high} outside x of size {x.size}")


def check_take(op, x, indices, axis, out_shape):
    if indices.dtype != np.int32 or indices.ndim != 1:
        raise ValueError(f"{op}: indices must be an int32 vector, got {indices.dtype} of shape "
                         f"{tuple(indices.shape)}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"{op}: axis {axis} out of range for x of shape {tuple(x.shape)}")
    want = tuple(x.shape[:axis]) + (indices.shape[0],) + tuple(x.shape[axis + 1:])
    if tuple(out_shape) != want:
        raise ValueError(f"{op}: out must have shape {want}, got {tuple(out_shape)}")


def check_rows(op, out, x, out_dtype):
    """x a (rows, n) float tensor and out of its shape with dtype out_dtype (argsort_rows,
    scan_rows)."""
    if len(x.shape) != 2 or np.dtype(x.dtype).kind != "f":
        raise ValueError(f"{op}: x must be a float (rows, n) tensor, got {x.dtype} of shape "
                         f"{tuple(x.shape)}")
    if tuple(out.shape) != tuple(x.shape) or np.dtype(out.dtype) != np.dtype(out_dtype):
        raise ValueError(f"{op}: out must be {np.dtype(out_dtype)} of shape {tuple(x.shape)}, got "
                         f"{out.dtype} of shape {tuple(out.shape)}")


def reduced_axes(op, out_shape, x_shape):
    if len(out_shape) != len(x_shape) or any(o not in (1, s) for o, s in zip(out_shape, x_shape)):
        raise ValueError(f"{op}: out of shape {tuple(out_shape)} must have x's rank {len(x_shape)} "
                         f"with 1 on the reduced axes, x has shape {tuple(x_shape)}")
    return tuple(k for k, (o, s) in enumerate(zip(out_shape, x_shape)) if o == 1)


def check_indices(op, indices, n):
    if indices.size and (indices.min() < -n or indices.max() >= n):
        raise IndexError(f"{op}: indices must be in [{-n}, {n}), got {indices.min()}..{indices.max()}")


def contiguous_strides(shape):
    """Element strides of a C-contiguous tensor of `shape`."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def broadcast_strides(shape, out_shape):
    """Strides that read a contiguous tensor of `shape` broadcast to `out_shape` (0 on the axes
    it is repeated along)."""
    lead = len(out_shape) - len(shape)
    own = contiguous_strides(shape)
    return [0] * lead + [0 if n == 1 and m != 1 else s
                         for s, n, m in zip(own, shape, out_shape[lead:])]
