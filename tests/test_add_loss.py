"""Layer.add_loss and tensor arguments of a custom layer's call, on every backend, against one
SGD step of real Keras 3.15.1 (tests/data/make_keras_add_loss.py): an endpoint layer whose
loss is the model's only one (compiled without a loss, fit without targets), and a layer adding
a penalty beside a compiled loss."""

import os

import numpy as np
import pytest

import minidl
from minidl import layers, ops

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_add_loss.npz"))


def _case(name):
    return {k.split("/", 1)[1]: KERAS[k] for k in KERAS.files if k.startswith(name + "/")}


class Endpoint(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.loss_fn = minidl.losses.BinaryCrossentropy(from_logits=True)

    def call(self, logits, targets=None, sample_weight=None):
        if targets is not None:
            self.add_loss(self.loss_fn(targets, logits, sample_weight))
        return ops.sigmoid(logits)


class Penalty(layers.Layer):
    def call(self, x):
        self.add_loss(0.05 * ops.sum(ops.square(x)))
        return x


def _weights(c, kind):
    return [c[f"{kind}{i}"] for i in range(len([k for k in c if k.startswith(kind)]))]


def test_endpoint_layer_is_the_whole_loss(backend):
    c = _case("endpoint")
    inputs, targets, weights = layers.Input((5,)), layers.Input((1,)), layers.Input((1,))
    # targets and weights reach call by position, as Keras passes them
    model = minidl.Model([inputs, targets, weights],
                         Endpoint()(layers.Dense(1)(inputs), targets, weights))
    model.set_weights(_weights(c, "before"))
    model.compile(minidl.optimizers.SGD(0.5))
    loss = model.train_on_batch([c["x"], c["t"], c["w"]], None)
    np.testing.assert_allclose(loss, c["loss"], rtol=1e-5)
    for got, want in zip(model.get_weights(), _weights(c, "after")):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    history = model.fit([c["x"], c["t"], c["w"]], epochs=2, batch_size=4, verbose=0)
    assert list(history.history) == ["loss"] and history.history["loss"][1] < loss


def test_added_penalty_joins_the_compiled_loss(backend):
    c = _case("penalty")
    x = _case("endpoint")["x"]
    inputs = layers.Input((5,))
    model = minidl.Model(inputs, layers.Dense(2)(Penalty()(layers.Dense(3)(inputs))))
    model.set_weights(_weights(c, "before"))
    model.compile(minidl.optimizers.SGD(0.1), "mse")
    np.testing.assert_allclose(model.evaluate(x, c["y"], verbose=0), c["eval_loss"], rtol=1e-5)
    np.testing.assert_allclose(model.train_on_batch(x, c["y"]), c["loss"], rtol=1e-5)
    for got, want in zip(model.get_weights(), _weights(c, "after")):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_layer_losses_after_an_eager_call(backend):
    layer = Penalty()
    x = np.ones((2, 3), np.float32)
    layer(x)
    assert len(layer.losses) == 1
    np.testing.assert_allclose(ops.convert_to_numpy(layer.losses[0]), 0.3, rtol=1e-6)
    layer(2 * x)   # replaced at each call, as Keras's
    assert len(layer.losses) == 1
    np.testing.assert_allclose(ops.convert_to_numpy(layer.losses[0]), 1.2, rtol=1e-6)


def test_tensor_arguments_by_keyword_and_their_errors(backend, tmp_path):
    inputs, targets = layers.Input((5,)), layers.Input((1,))
    endpoint = Endpoint()
    out = endpoint(layers.Dense(1)(inputs), targets=targets)
    model = minidl.Model([inputs, targets], out)
    model.compile("adam")
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((6, 5)).astype(np.float32), (rng.random((6, 1)) > 0.5).astype(np.float32)
    model.fit([x, t], epochs=1, verbose=0)
    path = str(tmp_path / "m.minidl")
    model.save(path)
    loaded = minidl.models.load_model(path, custom_objects={"Endpoint": Endpoint})
    np.testing.assert_allclose(loaded.predict([x, t], verbose=0), model.predict([x, t], verbose=0),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="call takes 3 positional arguments .inputs, targets, sample_weight., got 4"):
        Endpoint()(inputs, targets, targets, targets)
    with pytest.raises(TypeError, match="two values for argument 'targets'"):
        Endpoint()(inputs, targets, targets=targets)
    with pytest.raises(TypeError, match="every call must pass them"):
        endpoint(layers.Dense(1)(inputs))
