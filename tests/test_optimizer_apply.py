"""optimizer.apply / apply_gradients as a custom train_step uses them (Keras 3): an optimizer
that was never compiled is built for the weights it is first given (a GAN's second optimizer),
a subset of a built optimizer's weights is updated alone (the others and their momentum stay),
and apply_gradients(zip(grads, variables)) takes minidl's weights; every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops


def _models():
    gen = minidl.Sequential([layers.Input((3,)), layers.Dense(4, name="g")])
    disc = minidl.Sequential([layers.Input((4,)), layers.Dense(1, name="d")])
    return gen, disc


def test_a_second_optimizer_builds_for_its_weights(backend):
    gen, disc = _models()
    x = ops.convert_to_tensor(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))
    d_opt = minidl.optimizers.SGD(0.1, momentum=0.9)
    g_opt = minidl.optimizers.SGD(0.1)
    before = [w.numpy().copy() for w in disc.trainable_weights]
    with minidl.GradientTape() as tape:
        loss = ops.mean(disc(gen(x)))
    grads = tape.gradient(loss, disc.trainable_weights + gen.trainable_weights)
    d_opt.apply(grads[:2], disc.trainable_weights)
    g_opt.apply_gradients(zip(grads[2:], gen.trainable_weights))
    for w, b, g in zip(disc.trainable_weights, before, grads[:2]):
        np.testing.assert_allclose(w.numpy(), b - 0.1 * ops.convert_to_numpy(g), rtol=1e-5, atol=1e-6)
    assert d_opt.iterations == 1 and g_opt.iterations == 1


def test_a_subset_leaves_the_other_weights_and_their_momentum(backend):
    gen, disc = _models()
    both = gen.trainable_weights + disc.trainable_weights
    opt = minidl.optimizers.SGD(0.1, momentum=0.9)
    x = ops.convert_to_tensor(np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32))

    def grads():
        with minidl.GradientTape() as tape:
            loss = ops.mean(ops.square(disc(gen(x))))
        return tape.gradient(loss, both)

    opt.apply(grads(), both)            # every weight gets momentum
    frozen = [w.numpy().copy() for w in gen.trainable_weights]
    g = grads()
    opt.apply(g[2:], disc.trainable_weights)   # the discriminator alone
    for w, f in zip(gen.trainable_weights, frozen):
        np.testing.assert_array_equal(w.numpy(), f)
    # the generator's momentum was kept: its next step is momentum * v + g as if uninterrupted
    opt.apply(grads(), both)
    assert opt.iterations == 3


def test_nested_sources_and_a_schedule_written_with_ops(backend):
    """GradientTape.gradient over [a.trainable_variables, b.trainable_variables] gives the
    gradients nested alike; a schedule may return an ops tensor (Keras's tensors are floats)."""
    gen, disc = _models()
    x = ops.convert_to_tensor(np.ones((4, 3), np.float32))
    with minidl.GradientTape() as tape:
        loss = ops.mean(disc(gen(x)))
    grads = tape.gradient(loss, [gen.trainable_variables, disc.trainable_variables])
    assert [len(g) for g in grads] == [2, 2] and grads[0][0].shape == (3, 4)

    class Halved(minidl.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return ops.convert_to_tensor(0.2) * 0.5

    assert minidl.optimizers.SGD(Halved()).current_learning_rate() == pytest.approx(0.1)


def test_random_layers_called_on_data_augment_by_default(backend):
    """Keras's random layers called on arrays (a tf.data map) augment unless training=False,
    each call with new numbers."""
    images = np.random.default_rng(0).random((2, 12, 12, 3)).astype(np.float32)
    crop = layers.RandomCrop(8, 8, seed=3)
    first, second = crop(images), crop(images)
    assert first.shape == (2, 8, 8, 3) and not np.allclose(first, second)
    flip = layers.RandomFlip("horizontal", seed=1)
    np.testing.assert_array_equal(flip(images, training=False), images)


@pytest.mark.parametrize("make", [
    lambda: minidl.optimizers.MultiOptimizer(
        lambda v: minidl.optimizers.Adam(0.01) if v.path.startswith("g") else minidl.optimizers.SGD(0.1, momentum=0.9)),
    lambda: minidl.optimizers.LossScaleOptimizer(minidl.optimizers.SGD(0.1, momentum=0.9))],
    ids=["multi", "loss_scale"])
def test_a_subset_through_a_composite_optimizer(backend, make):
    """MultiOptimizer and the wrappers step a subset too: the weights not given and their
    sub-optimizer's state are put back."""
    gen, disc = _models()
    both = gen.trainable_weights + disc.trainable_weights
    opt = make()
    x = ops.convert_to_tensor(np.random.default_rng(3).standard_normal((8, 3)).astype(np.float32))

    def grads():
        with minidl.GradientTape() as tape:
            loss = ops.mean(ops.square(disc(gen(x))))
        return tape.gradient(loss, both)

    opt.apply(grads(), both)
    frozen = [w.numpy().copy() for w in gen.trainable_weights]
    moved = [w.numpy().copy() for w in disc.trainable_weights]
    for _ in range(2):
        opt.apply(grads()[2:], disc.trainable_weights)
    for w, f in zip(gen.trainable_weights, frozen):
        np.testing.assert_array_equal(w.numpy(), f)
    assert any(not np.array_equal(w.numpy(), m) for w, m in zip(disc.trainable_weights, moved))
