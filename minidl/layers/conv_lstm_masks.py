"""Keras masks for ConvLSTM: which state rows each step updates, and what it outputs.

Keras's RNN takes a mask (N, T), or one with the state's spatial axes too (N, T, *out): the
mask Masking makes of a (N, T, H, W, C) input is (N, T, H, W), and Keras's rnn loop keeps the
previous h and c of each masked pixel (tiled over the filters), so a mask per pixel works
where the output has the input's spatial sizes ("same" padding, strides 1) and fails with a
shape error elsewhere, as here. A masked step keeps the states; the output of a masked step
is the previous output (0 before the first step that ran), or 0 with zero_output_for_mask.

The masks here are time-major in processing order (reversed for go_backwards), (T, N, M, 1)
with M = 1 or the output's pixels: a step's (N, M, 1) broadcasts over the state rows (N OH OW,
f) viewed (N, M, OH OW f / M), whose order is sample, then pixel.
"""

import math

from .base import format_shape


def step_masks(layer, call, n, steps):
    """(the steps that run, the factor of each step's output), each (T, N, M, 1), from the
    call's mask; (None, None) without one. With zero_output_for_mask the factor is the mask,
    else 1.0 from the first step that ran on (a skipped step repeats the last output, which
    is the kept state; before any step Keras outputs 0)."""
    mask = call.mask
    if isinstance(mask, list):
        mask = mask[0]
    if mask is None:
        return None, None
    b = layer.backend
    spatial = layer._own_axes(call.out_image)
    shape = tuple(b.shape(mask))
    if shape not in ((n, steps), (n, steps) + spatial):
        raise ValueError(f"{layer.describe()}: the mask must have shape {(n, steps)} (batch, "
                         f"time) or {(n, steps) + spatial} (with the output's spatial sizes, "
                         f"as Masking makes for 'same' padding and strides 1), for inputs "
                         f"{format_shape(call.x_shape)}; got {shape}")
    m = math.prod(shape[2:])
    ordered = call.buffer("mask_ordered", (n, m, steps))   # (sample, pixel, step in order)
    if call.backwards:
        b.strided_copy(ordered, mask, (steps - 1) * m, (steps * m, 1, -m))
    else:
        b.strided_copy(ordered, mask, 0, (steps * m, 1, m))
    step_mask = call.buffer("step_mask", (steps, n, m, 1))
    b.strided_copy(step_mask, ordered, 0, (1, m * steps, steps, 0))
    if layer.zero_output_for_mask:
        return step_mask, step_mask
    seen = call.buffer("mask_seen", (n * m, steps))
    b.scan_rows(seen, b.reshape(ordered, (n * m, steps)), "cumsum")
    b.binary(seen, seen, 1.0, "minimum")
    factor = call.buffer("output_factor", (steps, n, m, 1))
    b.strided_copy(factor, seen, 0, (1, m * steps, steps, 0))
    return step_mask, factor


def mask_at(b, call, seq, t):
    """Step t's (N, M, 1) part of a (T, N, M, 1) mask or factor."""
    _, n, m, _ = b.shape(seq)
    out = call.buffer("mask_step", (n, m, 1))
    b.strided_copy(out, seq, t * n * m, (m, 1, 1))
    return out


def by_mask(b, rows, m):
    """A (rows, f) state viewed (N, M, rest) to broadcast against a step's mask (N, M, 1)."""
    n, count, _ = b.shape(m)
    total = math.prod(b.shape(rows))
    return b.reshape(rows, (n, count, total // (n * count)))


def keep_skipped(b, new, m, previous):
    """new = new where the step ran (m = 1), else previous: a skipped row keeps its state."""
    view = by_mask(b, new, m)
    b.where(view, m, view, by_mask(b, previous, m))


def split_skipped(b, d_step, d_carry, m):
    """d_step = d_carry on the rows that ran, 0 elsewhere; d_carry keeps the skipped rows'
    part (it passes straight to the step before)."""
    step, carry = by_mask(b, d_step, m), by_mask(b, d_carry, m)
    b.binary(step, carry, m, "multiply")
    b.binary(carry, carry, step, "subtract")


def apply_factor(b, seq, factor):
    """seq (T N rows, f) *= factor (T, N, M, 1), per step and row."""
    steps, n, m, _ = b.shape(factor)
    total = math.prod(b.shape(seq))
    view = b.reshape(seq, (steps, n, m, total // (steps * n * m)))
    b.binary(view, view, factor, "multiply")
