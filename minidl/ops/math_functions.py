"""keras.ops.math's functions beyond minidl.ops's core: erfc, erfinv, cdist, extract_sequences,
and einops-style rearrange. Composed of differentiable minidl.ops."""

import math
import re

import numpy as np

from .core import abs as absolute, as_tensor, cast, equal, erf, exp, less, log, sqrt, stop_gradient, where
from .reductions import sum as reduce_sum
from .shapes import expand_dims, reshape, take, transpose


def erfc(x):
    return 1.0 - erf(x)


def erfinv(x):
    """The inverse error function: Giles's single-precision approximation (2010), refined by
    one Newton step on erf; its gradient is the exact sqrt(pi) / 2 exp(y^2)."""
    t = cast(as_tensor(x), "float32")
    c = stop_gradient(t)
    w = negative_log(1.0 - c * c)
    small = less(w, 5.0)
    ws = where(small, w - 2.5, 0.0)
    p_small = _poly(ws, [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                         0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941])
    wl = sqrt(where(small, 5.0, w)) - 3.0
    p_large = _poly(wl, [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682])
    y = stop_gradient(where(small, p_small, p_large) * c)
    # Newton: y - (erf(y) - x) / erf'(y); with y held constant this also carries the gradient
    slope = exp(-(y * y)) * (2.0 / math.sqrt(math.pi))
    edge = equal(absolute(c), 1.0)                  # +-inf: the Newton step would be 0 / 0
    return where(edge, y, y - (erf(y) - t) / where(edge, 1.0, slope))


def negative_log(v):
    return -log(v)


def _poly(t, coefficients):
    out = coefficients[0]
    for c in coefficients[1:]:
        out = out * t + c
    return out


def cdist(x, y):
    """Euclidean distances between the rows of x (..., P, M) and of y (..., R, M): (..., P, R)."""
    a, b = cast(as_tensor(x), "float32"), cast(as_tensor(y, as_tensor(x).backend), "float32")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"ops.cdist: x {a.shape} and y {b.shape} must have the same last axis")
    d = expand_dims(a, -2) - expand_dims(b, -3)
    return sqrt(reduce_sum(d * d, -1))


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of the last axis of x: (..., num_frames, sequence_length), frames starting every
    sequence_stride samples (one gather)."""
    t = as_tensor(x)
    n = t.shape[-1]
    if sequence_length > n:
        raise ValueError(f"ops.extract_sequences: sequence_length {sequence_length} exceeds the last "
                         f"axis of x {t.shape}")
    frames = 1 + (n - sequence_length) // sequence_stride
    index = (np.arange(frames)[:, None] * sequence_stride + np.arange(sequence_length)[None, :])
    return take(t, index.astype(np.int32), axis=len(t.shape) - 1)


def _groups(side):
    """'b (h w) c' -> [['b'], ['h', 'w'], ['c']]."""
    out, tokens = [], re.findall(r"\(|\)|[A-Za-z_][A-Za-z0-9_]*|\.\.\.|\d+", side)
    group = None
    for tok in tokens:
        if tok == "(":
            if group is not None:
                raise ValueError("ops.rearrange: nested parentheses in the pattern")
            group = []
        elif tok == ")":
            if group is None:
                raise ValueError("ops.rearrange: unbalanced parentheses in the pattern")
            out.append(group)
            group = None
        elif group is not None:
            group.append(tok)
        else:
            out.append([tok])
    if group is not None:
        raise ValueError("ops.rearrange: unbalanced parentheses in the pattern")
    return out


def rearrange(tensor, pattern, **axes_lengths):
    """einops's rearrange: a reshape, a transpose and a reshape given by a pattern such as
    'b (h p1) (w p2) c -> b h w (p1 p2 c)' (lengths of split axes by keyword)."""
    t = as_tensor(tensor)
    if "->" not in pattern:
        raise ValueError(f"ops.rearrange: pattern must contain '->', got {pattern!r}")
    left, right = (_groups(side) for side in pattern.split("->"))
    if len(left) != len(t.shape):
        raise ValueError(f"ops.rearrange: pattern {pattern!r} has {len(left)} input axes, the tensor "
                         f"has shape {t.shape}")
    sizes = dict(axes_lengths)
    for group, dim in zip(left, t.shape):
        unknown = [name for name in group if name not in sizes]
        known = math.prod(sizes[name] for name in group if name in sizes)
        if len(unknown) > 1:
            raise ValueError(f"ops.rearrange: cannot infer the lengths of {unknown} in {pattern!r}")
        if unknown:
            if dim % known:
                raise ValueError(f"ops.rearrange: axis of size {dim} does not split as {group}")
            sizes[unknown[0]] = dim // known
        elif known != dim:
            raise ValueError(f"ops.rearrange: axis of size {dim} does not match {group} = {known}")
    names = [name for group in left for name in group]
    out_names = [name for group in right for name in group]
    if sorted(names) != sorted(out_names):
        raise ValueError(f"ops.rearrange: both sides of {pattern!r} must name the same axes")
    t = reshape(t, tuple(sizes[name] for name in names))
    order = [names.index(name) for name in out_names]
    if order != list(range(len(order))):
        t = transpose(t, order)
    return reshape(t, tuple(math.prod(sizes[name] for name in group) for group in right))
