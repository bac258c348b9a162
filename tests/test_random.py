"""minidl.random (keras.random): reproducible for a seed, the same numbers on every backend,
the right distributions, and usable in a layer's call with a SeedGenerator."""

import numpy as np
import pytest

import minidl
from minidl import autodiff, layers, ops, random
from minidl.models import Sequential

DRAWS = {
    "normal": lambda seed: random.normal((400, 50), mean=1.0, stddev=2.0, seed=seed),
    "uniform": lambda seed: random.uniform((400, 50), minval=-1.0, maxval=3.0, seed=seed),
    "truncated_normal": lambda seed: random.truncated_normal((400, 50), stddev=0.5, seed=seed),
    "randint": lambda seed: random.randint((400, 50), 3, 9, seed=seed),
    "gamma": lambda seed: random.gamma((400, 50), 2.5, seed=seed),
    "beta": lambda seed: random.beta((400, 50), 2.0, 5.0, seed=seed),
    "binomial": lambda seed: random.binomial((400, 50), 10, 0.3, seed=seed),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_are_reproducible_and_the_same_on_every_backend(backend, name):
    with autodiff.on_backend(backend):
        a, b, c = (DRAWS[name](seed).numpy() for seed in (7, 7, 8))
    assert a.shape == (400, 50)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with autodiff.on_backend(minidl.backends.numpy_backend.NumpyBackend()):
        np.testing.assert_array_equal(a, DRAWS[name](7).numpy())


def test_distributions_have_their_moments():
    x = {name: draw(3).numpy().astype(np.float64) for name, draw in DRAWS.items()}
    assert abs(x["normal"].mean() - 1.0) < 0.05 and abs(x["normal"].std() - 2.0) < 0.05
    assert x["uniform"].min() >= -1.0 and x["uniform"].max() < 3.0 and abs(x["uniform"].mean() - 1.0) < 0.05
    assert np.abs(x["truncated_normal"]).max() <= 1.0 and abs(x["truncated_normal"].std() - 0.44) < 0.02
    assert x["randint"].min() == 3 and x["randint"].max() == 8 and DRAWS["randint"](1).dtype == "int32"
    assert abs(x["gamma"].mean() - 2.5) < 0.1 and abs(x["beta"].mean() - 2 / 7) < 0.01
    assert abs(x["binomial"].mean() - 3.0) < 0.05 and np.all(x["binomial"] == np.round(x["binomial"]))


def test_seed_generator_advances_and_replays():
    g1, g2 = random.SeedGenerator(5), random.SeedGenerator(5)
    first, second = random.uniform((8,), seed=g1).numpy(), random.uniform((8,), seed=g1).numpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, random.uniform((8,), seed=g2).numpy())
    assert g1.state == (5, 2) and random.SeedGenerator.from_config(g1.get_config()).initial_seed == 5
    minidl.set_seed(3)
    a = random.normal((4,)).numpy()
    minidl.set_seed(3)
    np.testing.assert_array_equal(a, random.normal((4,)).numpy())


def test_categorical_dropout_and_shuffle(backend):
    with autodiff.on_backend(backend):
        logits = ops.convert_to_tensor(np.log(np.asarray([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0]], np.float32) + 1e-30))
        picks = random.categorical(logits, 3000, seed=1).numpy()
        assert picks.shape == (2, 3000) and picks.dtype == np.int32
        np.testing.assert_allclose(np.bincount(picks[0], minlength=3) / 3000, [0.7, 0.2, 0.1], atol=0.03)
        assert np.all(picks[1] == 2)
        x = ops.ones((200, 30))
        y = random.dropout(x, 0.25, seed=4).numpy()
        assert set(np.unique(y)) <= {0.0, np.float32(1.0 / 0.75)} and abs((y == 0).mean() - 0.25) < 0.02
        rows = random.dropout(x, 0.5, noise_shape=(200, 1), seed=4).numpy()
        assert np.all(rows == rows[:, :1])
        s = random.shuffle(ops.arange(10), seed=2).numpy()
        assert sorted(s.tolist()) == list(range(10)) and s.tolist() != list(range(10))
    with pytest.raises(ValueError, match="rate must be in"):
        random.dropout(np.ones(3, np.float32), 1.0)
    with pytest.raises(ValueError, match="maxval"):
        random.randint((2,), 5, 5)
    with pytest.raises(ValueError, match="seed must be"):
        random.normal((2,), seed="x")


class NoisyDropout(layers.Layer):
    """A layer that draws in its call, Keras style: its SeedGenerator made in __init__."""

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.seed_generator = random.SeedGenerator(11)

    def call(self, inputs):
        return random.dropout(inputs, self.rate, seed=self.seed_generator)


def test_a_layer_draws_new_masks_each_call_through_its_seed_generator():
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((64,)), NoisyDropout(0.5)])
    x = np.ones((4, 64), np.float32)
    a, b = model.predict(x, verbose=0), model.predict(x, verbose=0)
    assert set(np.unique(a)) <= {0.0, 2.0} and not np.array_equal(a, b)
    assert abs((a == 0).mean() - 0.5) < 0.1
