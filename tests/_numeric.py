"""Central differences for the float64 gradient checks of tests/test_losses.py and
tests/test_regularizers.py."""

import numpy as np


def central_differences(f, array, step=1e-6):
    """d f() / d array for every element of `array` (changed in place, then restored)."""
    numeric = np.empty_like(array)
    for i in range(array.size):
        old = array.flat[i]
        array.flat[i] = old + step
        up = f()
        array.flat[i] = old - step
        down = f()
        array.flat[i] = old
        numeric.flat[i] = (up - down) / (2 * step)
    return numeric
