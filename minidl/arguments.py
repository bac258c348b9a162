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


def int_tuple(value, argument, owner, allow_minus_one=False):
    """A tuple of positive ints (one -1 allowed when asked) or a TypeError/ValueError naming it."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{owner}: {argument} must be a tuple of ints, got {value!r}")
    items = tuple(value)
    if not items or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                            for d in items):
        raise TypeError(f"{owner}: {argument} must be a non-empty tuple of ints, got {value!r}")
    items = tuple(int(d) for d in items)
    minus_ones = sum(d == -1 for d in items)
    if any(d <= 0 and not (d == -1 and allow_minus_one) for d in items) or minus_ones > 1:
        extra = " and at most one -1" if allow_minus_one else ""
        raise ValueError(f"{owner}: {argument} must hold positive ints{extra}, got {items}")
    return items
