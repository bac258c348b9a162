"""loss_weights scale every loss's gradient the same way: a built-in loss, a Loss subclass of
your own (call() written with minidl.ops), a plain function (LossFunctionWrapper) and a loss
new in Keras 3 (focal cross-entropy, its call() on minidl.ops) all take one SGD step of
loss_weight times the unweighted step."""

import numpy as np
import pytest

from minidl import layers, losses, ops, optimizers
from minidl.models import Sequential


class SquaredError(losses.Loss):
    """The mean squared error written with minidl.ops: trained through autodiff."""

    def call(self, y_true, y_pred):
        return ops.mean(ops.square(y_pred - y_true), axis=-1)


def squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_pred - y_true), axis=-1)


def _step(loss, loss_weights, activation="linear"):
    """The kernel change of one SGD step (learning rate 0.1) from fixed weights."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.uniform(0.1, 0.9, size=(16, 3)).astype(np.float32)
    model = Sequential([layers.Input((4,)), layers.Dense(3, activation=activation)])
    kernel = rng.normal(size=(4, 3)).astype(np.float32) * 0.3
    model.set_weights([kernel, np.zeros(3, np.float32)])
    model.compile(optimizer=optimizers.SGD(0.1), loss=loss, loss_weights=loss_weights)
    model.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    return model.get_weights()[0] - kernel


@pytest.mark.parametrize("make_loss", [losses.MeanSquaredError, SquaredError, lambda: squared_error,
                                       lambda: losses.BinaryFocalCrossentropy(gamma=1.0)],
                         ids=["builtin", "loss_subclass", "function", "keras3_focal"])
def test_loss_weight_scales_the_step(active_backend, make_loss):
    activation = "sigmoid" if isinstance(make_loss(), losses.BinaryFocalCrossentropy) else "linear"
    once = _step(make_loss(), 1.0, activation)
    thrice = _step(make_loss(), 3.0, activation)
    assert np.abs(once).max() > 1e-4
    np.testing.assert_allclose(thrice, 3.0 * once, rtol=2e-4, atol=1e-7)


def test_a_loss_of_your_own_steps_as_the_builtin(active_backend):
    np.testing.assert_allclose(_step(SquaredError(), 2.5), _step(losses.MeanSquaredError(), 2.5),
                               rtol=2e-4, atol=1e-7)
