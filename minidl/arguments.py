"""Checks of user-given arguments, shared by layers, optimizers and schedules.

Every error names the owner (a layer, an optimizer, a schedule) and the argument.
"""

import math
import numbers


def number(value, argument, owner, *, low=None, low_inclusive=True, high=None,
           high_inclusive=False, allow_none=False):
    """`value` as a finite float within the bounds (None passes when allow_none), else a
    TypeError / ValueError naming the argument."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {argument} must be a number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{owner}: {argument} must be finite, got {value}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        raise ValueError(f"{owner}: {argument} must be {'>=' if low_inclusive else '>'} {low}, "
                         f"got {value}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        raise ValueError(f"{owner}: {argument} must be {'<=' if high_inclusive else '<'} {high}, "
                         f"got {value}")
    return value
