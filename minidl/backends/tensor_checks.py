"""Argument checks of the tensor ops (minidl/backends/base.py), shared by every backend:
each error names the op, the argument and the shapes."""

import numpy as np

from .contract.checks import MAX_RANK


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
