"""The storages a model's passes share (layers/buffers.py LentBuffers, models/graph.py).

A training step holds every layer's forward results for backward, but a gradient is dead once
the layers that made it are back-propagated, and a convolution's output that only a max pool
reads is dead once the pool has run. The model's own passes lend those from one pool; these
tests check that it changes no number (against the same model with lending switched off, on
every backend) and that it holds fewer bytes than a buffer per layer.
"""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.layers.buffers import LentBuffers
from minidl.models import Model
from minidl.models.graph import Graph


@pytest.fixture(autouse=True)
def _numpy_afterwards():
    """The tests below pick backends; later test modules expect numpy active."""
    yield
    minidl.set_backend("numpy")


def _no_lending(monkeypatch):
    forward, backward = Graph.forward, Graph.backward
    monkeypatch.setattr(Graph, "forward", lambda self, xs, training, lend=False: forward(self, xs, training))
    monkeypatch.setattr(Graph, "backward",
                        lambda self, *a, lend=False, **k: backward(self, *a, **k))


def _branchy_model(seed):
    """Every way a gradient meets another: a residual Add, a Concatenate, a Dense called
    twice, two outputs, convolutions read only by a pool (their outputs lent)."""
    minidl.set_seed(seed)
    inp = layers.Input((12, 12, 3))
    h = layers.Conv2D(8, 3, padding="same")(inp)           # read by a max pool only: lent
    h = layers.MaxPooling2D(2)(h)
    h = layers.BatchNormalization()(h)
    h = layers.Activation("gelu")(h)
    r = layers.Conv2D(8, 3, padding="same", activation="relu")(h)
    h = layers.Add()([h, r])
    a = layers.AveragePooling2D(2)(layers.Conv2D(6, 1)(h))  # lent, read by an average pool
    b = layers.MaxPooling2D(2)(h)
    h = layers.Flatten()(layers.Concatenate()([a, b]))
    shared = layers.Dense(7, activation="tanh")
    h = layers.Add()([shared(h), shared(layers.Dense(int(h.shape[-1]))(h))])
    out1 = layers.Dense(4, activation="softmax", name="cls")(h)
    out2 = layers.Dense(2, name="reg")(h)
    model = Model(inp, [out1, out2])
    model.compile("adam", ["sparse_categorical_crossentropy", "mse"])
    return model


def _data(n=16):
    rng = np.random.default_rng(1)
    return (rng.standard_normal((n, 12, 12, 3)).astype(np.float32),
            [rng.integers(0, 4, n).astype(np.int32), rng.standard_normal((n, 2)).astype(np.float32)])


def _train_and_predict(model, x, ys):
    for _ in range(3):
        model.train_on_batch(x, ys)
    preds = model.predict(x, verbose=0)
    return [w.copy() for w in model.get_weights()], preds


def test_lending_changes_no_number(active_backend, monkeypatch):
    x, ys = _data()
    lent_weights, lent_preds = _train_and_predict(_branchy_model(5), x, ys)
    with monkeypatch.context() as m:
        _no_lending(m)
        kept_weights, kept_preds = _train_and_predict(_branchy_model(5), x, ys)
    for got, want in zip(lent_weights, kept_weights):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(lent_preds, kept_preds):
        np.testing.assert_array_equal(got, want)


def test_a_nested_model_keeps_its_own_buffers(active_backend, monkeypatch):
    """A model used twice as a layer returns dL/dinput twice in one backward: its graph
    must not lend (the caller still holds the first when the second is made)."""
    def build():
        minidl.set_seed(2)
        inner_in = layers.Input((6, 6, 4))
        inner = Model(inner_in, layers.MaxPooling2D(2)(layers.Conv2D(4, 3, padding="same")(inner_in)))
        inp = layers.Input((6, 6, 4))
        h = layers.Concatenate()([inner(inp), inner(layers.Conv2D(4, 1)(inp))])
        model = Model(inp, layers.Dense(3)(layers.Flatten()(h)))
        model.compile("sgd", "mse")
        return model
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6, 6, 4)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    lent = _train_and_predict(build(), x, y)
    with monkeypatch.context() as m:
        _no_lending(m)
        kept = _train_and_predict(build(), x, y)
    for got, want in zip(lent[0], kept[0]):
        np.testing.assert_array_equal(got, want)


def test_tta_evaluate_is_unchanged_by_lending(active_backend, monkeypatch):
    x, ys = _data()
    model = _branchy_model(3)
    model.train_on_batch(x, ys)
    weights = model.get_weights()
    got = model.predict(x, verbose=0, tta="flip")
    with monkeypatch.context() as m:
        _no_lending(m)
        again = _branchy_model(3)
        again.set_weights(weights)
        want = again.predict(x, verbose=0, tta="flip")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def _chain(seed=0):
    minidl.set_seed(seed)
    model = minidl.Sequential([layers.Input((16, 16, 3))] + [
        layer for _ in range(3) for layer in
        (layers.Conv2D(8, 3, padding="same"), layers.MaxPooling2D(2, padding="same"),
         layers.BatchNormalization(), layers.Activation("relu"))] +
        [layers.Flatten(), layers.Dense(3)])
    model.compile("sgd", "mse")
    return model


def _bytes_of_a_step(model, x, y, monkeypatch):
    """The bytes the first training step allocates (every buffer is made then)."""
    b = minidl.get_backend()
    made = [0]
    empty = b.empty

    def counting(shape, dtype="float32"):
        made[0] += int(np.prod(shape)) * 4
        return empty(shape, dtype)
    with monkeypatch.context() as m:
        m.setattr(b, "empty", counting)
        model.train_on_batch(x, y)
    return made[0]


def test_a_chain_holds_the_gradients_in_flight_not_one_per_layer(monkeypatch):
    minidl.set_backend("cpu")
    x = np.random.default_rng(0).standard_normal((32, 16, 16, 3)).astype(np.float32)
    y = np.zeros((32, 3), np.float32)
    model = _chain()
    lent = _bytes_of_a_step(model, x, y, monkeypatch)
    pool = model.graph._lent
    slots = len(pool._slots)
    model.train_on_batch(x, y)   # the second step may replace one storage (its requests
    # meet the pool in another order than the first's), later ones allocate nothing
    assert len(pool._slots) == slots
    assert _bytes_of_a_step(model, x, y, monkeypatch) == 0
    # 13 layers give dL/dinput; three at once is the most a chain needs (dout, an
    # activation's dL/dz and dx), the conv outputs lent to the forward among them
    assert slots <= 3, [s[1] for s in pool._slots]
    with monkeypatch.context() as m:
        _no_lending(m)
        kept = _bytes_of_a_step(_chain(), x, y, monkeypatch)
    assert lent < 0.8 * kept, (lent, kept)   # measured 0.76: the forward buffers stay


def test_the_pool_lends_reuses_and_releases():
    minidl.set_backend("numpy")
    b = minidl.get_backend()
    pool = LentBuffers(b)
    a = pool.lend((4, 5))
    c = pool.lend((10,))
    assert b.storage(a) is not b.storage(c)
    pool.release(a)
    d = pool.lend((2, 5))            # the smallest free storage that fits: a's
    assert b.storage(d) is b.storage(a)
    pool.release_unreferenced([b.reshape(c, (2, 5))])   # c is still referenced, d is not
    e = pool.lend((3,))
    assert b.storage(e) is b.storage(d)
    big = pool.lend((100,))          # nothing free: a new storage
    assert len(pool._slots) == 3 and big.shape == (100,)
    pool.release_all()
    pool.lend((200,))                # the largest free one is replaced, not kept beside
    assert len(pool._slots) == 3


@pytest.mark.parametrize("name", ["numpy", "cpu", "opencl"])
def test_storage_is_shared_by_views_only(name):
    if name not in minidl.available_backends():
        pytest.skip(f"{name} is not usable here")
    minidl.set_backend(name)
    b = minidl.get_backend()
    x, y = b.empty((6, 4)), b.empty((6, 4))
    assert b.storage(b.reshape(x, (24,))) is b.storage(x)
    assert b.storage(b.view(x, (2, 3))) is b.storage(x)
    assert b.storage(y) is not b.storage(x)
