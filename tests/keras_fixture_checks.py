"""What the recurrent layers' tests share when they compare with numbers printed by Keras 3.15.1
(tests/fixtures/keras_*.py): the loss those fixture scripts differentiate, and the comparison."""

import numpy as np


def loss_gradient(y, k=0):
    """d/dy of sum(y * (k + 1) * sin(arange)), the loss the fixture scripts differentiate (k:
    which of a layer's outputs y is)."""
    return ((k + 1) * np.sin(np.arange(y.size))).reshape(y.shape).astype(y.dtype)


def listed(y):
    """A layer's outputs as a list (one output or several)."""
    return list(y) if isinstance(y, list) else [y]


def close_to_keras(actual, expected, what, atol=2e-6):
    """actual equals Keras's float32 numbers within float32 noise (rtol 2e-5)."""
    np.testing.assert_allclose(actual, np.array(expected, np.float32), rtol=2e-5, atol=atol,
                               err_msg=what)
