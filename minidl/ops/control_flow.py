"""keras.ops's control flow, custom gradients, segment and scatter ops, and dtype helpers.

minidl runs eagerly, so control flow is Python control flow: the branch or loop body runs on the
tensors as they are, each op recording its gradient (gradients flow through cond, scan, map and
fori_loop as through the ops inside). Predicates and loop conditions are read on the host.
Segment and scatter sums are one scatter-add (the backend's take_backward); segment max / min /
prod compare every row with every segment (an (N, S, ...) mask: meant for modest sizes).
"""

import numpy as np

from .. import autodiff
from ..autodiff import Tensor
from .core import (as_tensor, cast, convert_to_tensor, is_tensor, maximum, minimum, record, where,
                   _dtype_name)
from .reductions import max as reduce_max, min as reduce_min, prod, sum as reduce_sum
from .shapes import concatenate, expand_dims, reshape, stack, take, zeros_on


# ------------------------------------------------------------ pytrees (lists, tuples, dicts)
def _flatten(tree):
    if isinstance(tree, (list, tuple)):
        leaves, builders = [], []
        for item in tree:
            sub, build = _flatten(item)
            leaves.extend(sub)
            builders.append((len(sub), build))

        def rebuild(values):
            out, at = [], 0
            for count, build in builders:
                out.append(build(values[at:at + count]))
                at += count
            return type(tree)(out) if not hasattr(tree, "_fields") else type(tree)(*out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = sorted(tree)
        sub, build = _flatten([tree[k] for k in keys])
        return sub, lambda values: dict(zip(keys, build(values)))
    return [tree], lambda values: values[0]


def _truth(pred):
    value = np.asarray(pred.numpy() if is_tensor(pred) else pred)
    if value.size != 1:
        raise ValueError(f"ops.cond: pred must be a scalar, got shape {value.shape}")
    return bool(value.reshape(()))


# ------------------------------------------------------------ control flow
def cond(pred, true_fn, false_fn):
    """true_fn() if pred else false_fn()."""
    return true_fn() if _truth(pred) else false_fn()


def switch(index, branches, *operands):
    """branches[index](*operands), index clamped to the valid range (as Keras)."""
    k = int(np.asarray(index.numpy() if is_tensor(index) else index).reshape(()))
    return branches[min(max(k, 0), len(branches) - 1)](*operands)


def fori_loop(lower, upper, body_fun, init_val):
    """val = body_fun(i, val) for i in range(lower, upper)."""
    val = init_val
    for i in range(int(_scalar(lower)), int(_scalar(upper))):
        val = body_fun(i, val)
    return val


def _scalar(v):
    return np.asarray(v.numpy() if is_tensor(v) else v).reshape(())


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """loop_vars = body(*loop_vars) while cond(*loop_vars) (at most maximum_iterations times)."""
    single = not isinstance(loop_vars, (list, tuple))
    state = (loop_vars,) if single else tuple(loop_vars)
    steps = 0
    while (maximum_iterations is None or steps < maximum_iterations) and _truth(cond(*state)):
        out = body(*state)
        state = (out,) if single else tuple(out) if isinstance(out, (list, tuple)) else (out,)
        steps += 1
    return state[0] if single else type(loop_vars)(state)


def _unstack_leaves(xs, length, reverse):
    leaves, build = _flatten(xs)
    ts = [as_tensor(leaf) for leaf in leaves]
    n = length if not ts else ts[0].shape[0]
    order = range(n - 1, -1, -1) if reverse else range(n)
    return n, [(build([t[i] for t in ts]) if ts else None) for i in order]


def _stack_trees(trees, reverse):
    if not trees or trees[0] is None:
        return None
    if reverse:
        trees = trees[::-1]
    leaves0, build = _flatten(trees[0])
    columns = [[_flatten(tree)[0][k] for tree in trees] for k in range(len(leaves0))]
    return build([stack(col, 0) for col in columns])


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """(carry, stacked ys) of carry, y = f(carry, x) over the leading axis of xs (or `length`
    steps with x None)."""
    if xs is None and length is None:
        raise ValueError("ops.scan: give xs or length")
    n, items = _unstack_leaves(xs, length, reverse) if xs is not None else (
        length, [None] * length)
    carry, ys = init, []
    for x in items:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, _stack_trees(ys, reverse)


def associative_scan(f, elems, reverse=False, axis=0):
    """The inclusive prefix scan of elems along axis with an associative f (in order: result[i]
    = f(result[i - 1], elems[i]))."""
    leaves, build = _flatten(elems)
    ts = [as_tensor(leaf) for leaf in leaves]
    from .composite import moveaxis
    moved = [moveaxis(t, axis, 0) for t in ts]
    n = moved[0].shape[0]
    order = range(n - 1, -1, -1) if reverse else range(n)
    out, acc = [], None
    for i in order:
        item = build([t[i] for t in moved])
        acc = item if acc is None else (f(item, acc) if reverse else f(acc, item))
        out.append(acc)
    if reverse:
        out = out[::-1]
    stacked = _stack_trees(out, False)
    sl, sb = _flatten(stacked)
    return sb([moveaxis(t, 0, axis) for t in sl])


def map(f, xs):  # noqa: A001 - keras.ops.map
    """f applied to each slice of xs along its leading axis, the results stacked."""
    _, items = _unstack_leaves(xs, None, False)
    return _stack_trees([f(x) for x in items], False)


def vectorized_map(function, elements):
    return map(function, elements)


def vectorize(pyfunc, *, excluded=None, signature=None):
    """A function applying pyfunc over the leading (broadcast) axes of its tensor arguments:
    scalar cores, or the core dimensions of a numpy-style signature '(n),(n)->()'."""
    excluded = set(excluded or ())
    cores = None
    if signature is not None:
        inputs = signature.split("->")[0]
        cores = [len([d for d in part.strip("()").split(",") if d.strip()])
                 for part in inputs.replace(" ", "").split("),")]

    def wrapped(*args, **kwargs):
        positions = [k for k, a in enumerate(args) if k not in excluded]
        ts = {k: as_tensor(args[k]) for k in positions}
        core = {k: (cores[i] if cores else 0) for i, k in enumerate(positions)}
        loop = [len(ts[k].shape) - core[k] for k in positions]
        if not positions or max(loop) == 0:
            return pyfunc(*args, **kwargs)
        lead = np.broadcast_shapes(*[ts[k].shape[:len(ts[k].shape) - core[k]] for k in positions])
        from .shapes import broadcast_to
        full_args = list(args)
        for k in positions:
            full_args[k] = broadcast_to(ts[k], tuple(lead) + ts[k].shape[len(ts[k].shape) - core[k]:])
        results = []
        for i in range(lead[0]):
            call = list(full_args)
            for k in positions:
                call[k] = full_args[k][i]
            results.append(wrapped(*call, **kwargs))
        return _stack_trees(results, False)
    return wrapped


def custom_gradient(f):
    """A decorator: f(*args) returns (y, grad_fn); the gradient of y is grad_fn(upstream) (one
    gradient, or a tuple with one per argument), not the gradient through f's ops."""
    def wrapped(*args, **kwargs):
        inputs = [as_tensor(a) if is_tensor(a) else a for a in args]
        with autodiff.recording(None):
            y, grad_fn = f(*[Tensor(t.value, t.backend) if isinstance(t, Tensor) else t
                             for t in inputs], **kwargs)
        out = Tensor(as_tensor(y).value, as_tensor(y).backend)
        tensors = tuple(t for t in inputs if isinstance(t, Tensor))

        def rule(g):
            grads = grad_fn(g)
            grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
            return tuple(None if gi is None else as_tensor(gi) for gi in grads)
        return record(out, tensors, rule)
    wrapped.__name__ = getattr(f, "__name__", "custom_gradient")
    wrapped.__doc__ = f.__doc__
    return wrapped


# ------------------------------------------------------------ segments and scatter
def _segment_ids(segment_ids, num_segments, backend, op):
    ids = np.asarray(as_tensor(segment_ids, backend).numpy()).astype(np.int64).reshape(-1)
    n = int(ids.max()) + 1 if num_segments is None and ids.size else int(num_segments or 0)
    return ids, n


def _scatter_add_rows(values, index, rows):
    """out (rows, ...) with out[index[j]] += values[j] (one take_backward, recorded with take
    as its gradient). index entries outside [0, rows) are dropped."""
    v = cast(as_tensor(values), "float32")
    index = np.asarray(index, np.int64).reshape(-1)
    keep = (index >= 0) & (index < rows)
    if not keep.all():
        v = take(v, np.nonzero(keep)[0].astype(np.int32), axis=0)
        index = index[keep]
    index = index.astype(np.int32)
    out = zeros_on(v.backend, (rows,) + v.shape[1:])
    if index.size:
        idx = convert_to_tensor(index, backend=v.backend)
        v.backend.take_backward(out.value, v.value, idx.value, 0)
    return record(out, (v,), lambda g: (take(g, index, axis=0),))


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """out[s] = the sum of the rows of data whose segment id is s."""
    t = as_tensor(data)
    ids, n = _segment_ids(segment_ids, num_segments, t.backend, "segment_sum")
    if ids.shape[0] != t.shape[0]:
        raise ValueError(f"ops.segment_sum: segment_ids has {ids.shape[0]} entries, data has "
                         f"{t.shape[0]} rows")
    out = _scatter_add_rows(t, ids, n)
    return cast(out, "int32") if t.dtype == "int32" else out


def _segment_reduce(data, segment_ids, num_segments, reduce, fill, op):
    t = cast(as_tensor(data), "float32")
    ids, n = _segment_ids(segment_ids, num_segments, t.backend, op)
    if ids.shape[0] != t.shape[0]:
        raise ValueError(f"ops.{op}: segment_ids has {ids.shape[0]} entries, data has {t.shape[0]} rows")
    member = convert_to_tensor((ids[:, None] == np.arange(n)[None, :]).astype(np.float32),
                               backend=t.backend)                       # (N, S)
    member = reshape(member, member.shape + (1,) * (len(t.shape) - 1))
    picked = where(member, expand_dims(t, 1), fill)                     # (N, S, ...)
    return reduce(picked, 0)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """out[s] = the largest row of data in segment s (-inf for an empty one, as Keras)."""
    return _segment_reduce(data, segment_ids, num_segments, reduce_max, float("-inf"),
                           "segment_max")


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segment_reduce(data, segment_ids, num_segments, reduce_min, float("inf"),
                           "segment_min")


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segment_reduce(data, segment_ids, num_segments, prod, 1.0, "segment_prod")


def _flat_positions(indices, shape, op):
    idx = np.asarray(as_tensor(indices).numpy() if is_tensor(indices) else indices).astype(np.int64)
    if idx.ndim < 1 or idx.shape[-1] > len(shape):
        raise ValueError(f"ops.{op}: indices must be (..., k) with k <= {len(shape)} (the rank of "
                         f"shape {tuple(shape)}), got shape {idx.shape}")
    k = idx.shape[-1]
    strides = np.asarray([int(np.prod(shape[d + 1:k])) for d in range(k)], np.int64)
    return (idx * strides).sum(-1).reshape(-1), int(np.prod(shape[:k])), tuple(shape[k:])


def scatter(indices, values, shape):
    """A zeros tensor of `shape` with `values` added at `indices` (..., k) (duplicates add up)."""
    shape = tuple(int(s) for s in shape)
    flat, rows, rest = _flat_positions(indices, shape, "scatter")
    v = as_tensor(values)
    v = reshape(v, (flat.shape[0],) + rest)
    out = reshape(_scatter_add_rows(v, flat, rows), shape)
    return cast(out, "int32") if v.dtype == "int32" else out


def scatter_update(inputs, indices, updates, reduction=None):
    """inputs with the entries (or slices) at `indices` replaced by `updates` (reduction None),
    or combined with them ('add', 'max', 'min', 'mul')."""
    t = as_tensor(inputs)
    shape = t.shape
    flat, rows, rest = _flat_positions(indices, shape, "scatter_update")
    u = reshape(cast(as_tensor(updates, t.backend), "float32"), (flat.shape[0],) + rest)
    base = reshape(cast(t, "float32"), (rows,) + rest)
    if reduction in (None, "add"):
        added = _scatter_add_rows(u, flat, rows)
        if reduction == "add":
            out = base + added
        else:   # the last update of a repeated index wins
            last = {int(p): j for j, p in enumerate(flat)}
            keep = np.asarray(sorted(last.values()), np.int32)
            hit = np.zeros(rows, np.float32)
            hit[flat] = 1.0
            hit_t = reshape(convert_to_tensor(hit, backend=t.backend), (rows,) + (1,) * len(rest))
            out = base * (1.0 - hit_t) + _scatter_add_rows(take(u, keep, axis=0), flat[keep], rows)
    elif reduction in ("max", "min", "mul"):
        out = base
        for j, p in enumerate(flat):   # sequential, so that repeated indices combine
            row = out[int(p)]
            new = {"max": maximum, "min": minimum}.get(reduction, lambda a, b: a * b)(row, u[j])
            out = concatenate([out[:int(p)], expand_dims(new, 0), out[int(p) + 1:]], 0)
    else:
        raise ValueError(f"ops.scatter_update: reduction must be None, 'add', 'max', 'min' or "
                         f"'mul', got {reduction!r}")
    out = reshape(out, shape)
    return cast(out, "int32") if t.dtype == "int32" else out


# ------------------------------------------------------------ dtypes
def dtype(x):
    """The dtype name of a tensor ('float32' or 'int32')."""
    return as_tensor(x).dtype if is_tensor(x) else str(np.asarray(x).dtype)


_LIMITS = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
           "int32": (-2147483648, 2147483647), "uint32": (0, 4294967295)}


def saturate_cast(x, dtype):  # noqa: A002 - keras's argument name
    """x cast to dtype with values clipped to its range first (no wrap-around)."""
    t = as_tensor(x)
    name = np.dtype(dtype).name
    if name in _LIMITS:
        lo, hi = _LIMITS[name]
        if name in ("int32", "uint32"):   # float32 cannot hold these limits exactly
            lo, hi = max(lo, -2147483520), min(hi, 2147483520)
        t = minimum(maximum(cast(t, "float32"), float(lo)), float(hi))
    return cast(t, _dtype_name(dtype))
