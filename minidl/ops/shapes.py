"""Shape ops: reshape, transpose, broadcasting, slicing and indexing, take, concatenate, stack,
split, tile, repeat. Views that keep the element order are backend reshapes (no copy); every
other one is one strided gather (the backend's strided_copy), whose gradient is the matching
scatter-add."""

import math

import numpy as np

from ..autodiff import Tensor
from ..backends.checks import contiguous_strides
from .core import (as_tensor, cast, convert_to_tensor, empty_like_shape, is_tensor, record,
                   reduce_to, shape_tuple)


def _gather(t, out_shape, offset, strides):
    """out[i] = t.flat[offset + i . strides], with its scatter-add gradient."""
    out = empty_like_shape(t.backend, out_shape, t.dtype)
    t.backend.strided_copy(out.value, t.value, offset, strides)
    if t.dtype != "float32":
        return out

    def rule(g):
        dx = zeros_on(t.backend, t.shape)
        t.backend.strided_add(dx.value, g.value, offset, strides)
        return (dx,)
    return record(out, (t,), rule)


def zeros_on(backend, shape):
    out = empty_like_shape(backend, shape)
    backend.fill(out.value, 0.0)
    return out


def reshape(x, newshape):
    """x with a new shape of the same size (one entry may be -1); shares x's storage."""
    t = as_tensor(x)
    shape = shape_tuple(newshape)
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        raise ValueError(f"ops.reshape: invalid shape {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or math.prod(t.shape) % known:
            raise ValueError(f"ops.reshape: cannot reshape {t.shape} to {shape}")
        shape = tuple(math.prod(t.shape) // known if s == -1 else s for s in shape)
    if math.prod(shape) != math.prod(t.shape):
        raise ValueError(f"ops.reshape: cannot reshape {t.shape} ({math.prod(t.shape)} elements) "
                         f"to {shape}")
    out = Tensor(t.backend.reshape(t.value, shape), t.backend)
    return record(out, (t,), lambda g: (reshape(g, t.shape),))


def transpose(x, axes=None):
    """x with its axes permuted (reversed when axes is None)."""
    t = as_tensor(x)
    rank = len(t.shape)
    axes = tuple(reversed(range(rank))) if axes is None else tuple(_axis(a, rank) for a in axes)
    if sorted(axes) != list(range(rank)):
        raise ValueError(f"ops.transpose: axes {axes} is not a permutation of {rank} axes")
    strides = contiguous_strides(t.shape)
    return _gather(t, tuple(t.shape[a] for a in axes), 0, tuple(strides[a] for a in axes))


def _axis(axis, rank, op="axis"):
    a = int(axis)
    if not -rank <= a < rank:
        raise ValueError(f"ops: {op} {axis} is out of range for a tensor of rank {rank}")
    return a % rank


def expand_dims(x, axis):
    t = as_tensor(x)
    rank = len(t.shape) + 1
    a = _axis(axis, rank)
    return reshape(t, t.shape[:a] + (1,) + t.shape[a:])


def squeeze(x, axis=None):
    t = as_tensor(x)
    if axis is None:
        return reshape(t, tuple(s for s in t.shape if s != 1))
    axes = {_axis(a, len(t.shape)) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    for a in axes:
        if t.shape[a] != 1:
            raise ValueError(f"ops.squeeze: axis {a} of shape {t.shape} has size {t.shape[a]}, not 1")
    return reshape(t, tuple(s for k, s in enumerate(t.shape) if k not in axes))


def broadcast_to(x, shape):
    t = as_tensor(x)
    shape = shape_tuple(shape)
    try:
        if np.broadcast_shapes(t.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"ops.broadcast_to: shape {t.shape} does not broadcast to {shape}") from None
    if t.shape == shape:
        return t
    lead = len(shape) - len(t.shape)
    own = contiguous_strides(t.shape)
    strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else s
                                  for s, n, m in zip(own, t.shape, shape[lead:]))
    out = empty_like_shape(t.backend, shape, t.dtype)
    t.backend.strided_copy(out.value, t.value, 0, strides)
    return record(out, (t,), lambda g: (reduce_to(g, t),))


# --------------------------------------------------------------- indexing
def getitem(x, key):
    """x[key] for ints, slices (any step), Ellipsis and None; one integer array (or int32 tensor)
    index among full slices becomes a take."""
    t = as_tensor(x)
    key = key if isinstance(key, tuple) else (key,)
    arrays = [k for k, v in enumerate(key) if _is_index_array(v)]
    if arrays:
        return _advanced(t, key, arrays)
    if sum(v is Ellipsis for v in key) > 1:
        raise IndexError("ops: an index can only have a single ellipsis ('...')")
    used = sum(1 for v in key if v is not None and v is not Ellipsis)
    if used > len(t.shape):
        raise IndexError(f"ops: too many indices ({used}) for a tensor of shape {t.shape}")
    expanded = []
    for v in key:
        if v is Ellipsis:
            expanded += [slice(None)] * (len(t.shape) - used)
        else:
            expanded.append(v)
    expanded += [slice(None)] * (len(t.shape) - sum(1 for v in expanded if v is not None))
    offset, shape, strides, axis = 0, [], [], 0
    own = contiguous_strides(t.shape)
    for v in expanded:
        if v is None:
            shape.append(1)
            strides.append(0)
            continue
        n = t.shape[axis]
        if isinstance(v, slice):
            start, stop, step = v.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(step * own[axis])
            offset += start * own[axis] if shape[-1] else 0
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if not -n <= v < n:
                raise IndexError(f"ops: index {v} is out of bounds for axis {axis} of size {n}")
            offset += (int(v) % n) * own[axis]
        else:
            raise TypeError(f"ops: unsupported index {v!r} (ints, slices, ..., None and one "
                            "integer array are supported)")
        axis += 1
    shape, strides = tuple(shape), tuple(strides)
    if offset == 0 and strides == contiguous_strides(shape) and math.prod(shape) == math.prod(t.shape):
        return reshape(t, shape)
    return _gather(t, shape, offset, strides)


def _is_index_array(v):
    if isinstance(v, Tensor):
        return True
    return isinstance(v, (list, np.ndarray)) and np.asarray(v).dtype.kind in "iu"


def _advanced(t, key, arrays):
    if len(arrays) != 1 or Ellipsis in key or any(
            not (isinstance(v, slice) and v == slice(None)) for k, v in enumerate(key) if k != arrays[0]):
        raise IndexError("ops: integer-array indexing takes one array index, the other entries "
                         "being full slices ':' (use ops.take for more)")
    return take(t, key[arrays[0]], axis=arrays[0])


def take(x, indices, axis=None):
    """numpy.take: the entries of x at integer `indices` along `axis` (x flattened when None)."""
    t = as_tensor(x)
    if t.dtype == "int32":   # int tensors: through float and back (exact for |n| < 2**24)
        return cast(take(cast(t, "float32"), indices, axis), "int32")
    if axis is None:
        t, axis = reshape(t, (-1,)), 0
    axis = _axis(axis, len(t.shape))
    idx = cast(indices if is_tensor(indices) else
               convert_to_tensor(np.asarray(indices, dtype=np.int32), backend=t.backend), "int32")
    flat = reshape(idx, (-1,)) if len(idx.shape) != 1 else idx
    out_shape = t.shape[:axis] + (flat.shape[0],) + t.shape[axis + 1:]
    out = empty_like_shape(t.backend, out_shape, t.dtype)
    t.backend.take(out.value, t.value, flat.value, axis)

    def rule(g):
        dx = zeros_on(t.backend, t.shape)
        t.backend.take_backward(dx.value, g.value, flat.value, axis)
        return (dx,)
    if t.dtype == "float32":
        out = record(out, (t,), rule)
    return reshape(out, t.shape[:axis] + idx.shape + t.shape[axis + 1:])


# --------------------------------------------------------------- joining
def concatenate(xs, axis=0):
    """The tensors xs joined along `axis`."""
    ts = [as_tensor(x) for x in xs]
    if not ts:
        raise ValueError("ops.concatenate: needs at least one tensor")
    rank = len(ts[0].shape)
    axis = _axis(axis, rank)
    for t in ts[1:]:
        if len(t.shape) != rank or any(a != b for k, (a, b) in enumerate(zip(t.shape, ts[0].shape))
                                       if k != axis):
            raise ValueError(f"ops.concatenate: shapes {[u.shape for u in ts]} differ off axis {axis}")
    dtype = "float32" if any(t.dtype == "float32" for t in ts) else "int32"
    ts = [cast(t, dtype) for t in ts]
    shape = list(ts[0].shape)
    shape[axis] = sum(t.shape[axis] for t in ts)
    out = zeros_on(ts[0].backend, shape) if dtype == "float32" else None
    if out is None:   # int tensors: through float and back (exact for |n| < 2**24)
        return cast(concatenate([cast(t, "float32") for t in ts], axis), "int32")
    own = contiguous_strides(tuple(shape))
    offsets, start = [], 0
    for t in ts:
        offsets.append(start * own[axis])
        ts[0].backend.strided_add(out.value, t.value, offsets[-1], own)
        start += t.shape[axis]

    def rule(g):
        grads = []
        for t, off in zip(ts, offsets):
            part = empty_like_shape(g.backend, t.shape)
            g.backend.strided_copy(part.value, g.value, off, own)
            grads.append(part)
        return tuple(grads)
    return record(out, tuple(ts), rule)


def stack(x, axis=0):
    ts = [as_tensor(t) for t in x]
    if not ts:
        raise ValueError("ops.stack: needs at least one tensor")
    axis = _axis(axis, len(ts[0].shape) + 1)
    return concatenate([expand_dims(t, axis) for t in ts], axis)


def split(x, indices_or_sections, axis=0):
    """A list of pieces of x along `axis`: n equal sections, or cut at the given indices."""
    t = as_tensor(x)
    axis = _axis(axis, len(t.shape))
    n = t.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(f"ops.split: axis {axis} of size {n} does not split into "
                             f"{indices_or_sections} equal sections")
        cuts = [n // sections * k for k in range(1, sections)]
    else:
        cuts = [int(c) for c in indices_or_sections]
    bounds = [0] + cuts + [n]
    lead = (slice(None),) * axis
    return [getitem(t, lead + (slice(a, max(a, b)),)) for a, b in zip(bounds[:-1], bounds[1:])]


def tile(x, repeats):
    """x repeated `repeats` times along each axis (numpy.tile)."""
    t = as_tensor(x)
    reps = shape_tuple(repeats)
    rank = max(len(reps), len(t.shape))
    reps = (1,) * (rank - len(reps)) + reps
    t = reshape(t, (1,) * (rank - len(t.shape)) + t.shape)
    interleaved = reshape(t, tuple(d for n in t.shape for d in (1, n)))
    big = broadcast_to(interleaved, tuple(d for r, n in zip(reps, t.shape) for d in (r, n)))
    return reshape(big, tuple(r * n for r, n in zip(reps, t.shape)))


def repeat(x, repeats, axis=None):
    """Each element of x repeated `repeats` (an int) times along `axis` (x flattened when None)."""
    t = as_tensor(x)
    if not isinstance(repeats, (int, np.integer)) or repeats < 0:
        raise ValueError(f"ops.repeat: repeats must be an int >= 0, got {repeats!r}")
    if axis is None:
        t, axis = reshape(t, (-1,)), 0
    axis = _axis(axis, len(t.shape))
    wide = broadcast_to(expand_dims(t, axis + 1),
                        t.shape[:axis + 1] + (int(repeats),) + t.shape[axis + 1:])
    return reshape(wide, t.shape[:axis] + (t.shape[axis] * int(repeats),) + t.shape[axis + 1:])
