"""Subclassed models in Keras's files (.keras, .weights.h5), and layers holding their
activation functions (keras-examples gaps 3 and 20).

Keras 3 writes a subclassed model's variables where its attribute walk reaches them
(keras/src/saving/saving_lib.py; minidl/keras_files/state_walk.py). The fixtures
subclassed_net.* were written by real Keras 3.15.1 (tests/fixtures/keras_files/
make_subclassed_fixtures.py, classes in subclassed_models.py); the layouts and numbers below
were printed by it. That real Keras loads minidl's files is checked with
`make_subclassed_fixtures.py --check DIR`, where Keras is installed.
"""

import json
import os
import sys
import zipfile

import numpy as np
import pytest

import minidl
from minidl import layers as L
from minidl.models import ModelFileError, load_model

h5py = pytest.importorskip("h5py")

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_files")
sys.path.insert(0, FIXTURES)
from subclassed_models import PACKAGE, define  # noqa: E402

# Keras's predictions on subclassed_net_x0.npy, printed by make_subclassed_fixtures.py
KERAS_Y = [[-0.6152476668357849, -0.2952197194099426, -0.5752022862434387],
           [-0.5737177729606628, -0.21974220871925354, -0.5049769878387451],
           [-0.7787963151931763, -0.6507943272590637, -0.8879505395889282]]
# the datasets of Keras's subclassed_net.weights.h5 (optimizer/ aside), as h5py lists them
KERAS_NET_LAYOUT = [
    "a_head/vars/0", "a_head/vars/1", "block/inner/vars/0", "block/inner/vars/1",
    "block/norm/vars/0", "block/norm/vars/1", "block/vars/0", "bn/vars/0", "bn/vars/1",
    "bn/vars/2", "bn/vars/3", "layers/dense/vars/0", "layers/dense/vars/1",
    "layers/dense_1/vars/0", "layers/dense_1/vars/1", "layers/sequential/layers/dense/vars/0",
    "layers/sequential/layers/dense/vars/1", "layers/sequential/layers/dense_1/vars/0",
    "layers/sequential/layers/dense_1/vars/1"]
# Adam's first momentum entries in Keras's loaded optimizer (adam/scaled_scale_momentum,
# adam/dense_5_bias_momentum: the Scaled layer's own weight and the head's bias)
KERAS_MOMENTUM = {("block", 0): 0.010998743586242199, ("a_head", 1): 0.02063077874481678}


@pytest.fixture(scope="module")
def classes():
    from minidl.custom_objects import _GLOBAL, _NAMES
    made = define(minidl)
    yield made
    for cls in made.values():
        _GLOBAL.pop(f"{PACKAGE}>{cls.__name__}", None)
        _NAMES.pop(cls, None)


def datasets(f):
    out = []
    f.visititems(lambda name, obj: out.append(name) if isinstance(obj, h5py.Dataset)
                 and not name.startswith("optimizer") else None)
    return out


def fixture_x():
    return np.load(os.path.join(FIXTURES, "subclassed_net_x0.npy"))


# ------------------------------------------------------------- files real Keras wrote
def test_keras_written_subclassed_files_load(active_backend, classes):
    x = fixture_x()
    model = load_model(os.path.join(FIXTURES, "subclassed_net.keras"))
    assert isinstance(model, classes["Net"]) and model.hidden == [6, 5] and model.out == 3
    np.testing.assert_allclose(model.predict(x, verbose=0), KERAS_Y, atol=1e-5)
    # Keras's optimizer state, slots in Keras's variable order (the layer's own weight first)
    state = model.optimizer.get_state(model.backend)
    assert int(state["iterations"]) == 4
    order = {id(w): i for i, w in enumerate(model.graph.trainable_weights())}
    for (attribute, k), want in KERAS_MOMENTUM.items():
        index = order[id(getattr(model, attribute).weights[k])]
        assert float(np.ravel(state[f"momentum/{index}"])[0]) == pytest.approx(want, rel=1e-5)
    fresh = classes["Net"]()
    fresh(x)
    fresh.load_weights(os.path.join(FIXTURES, "subclassed_net.weights.h5"))
    np.testing.assert_allclose(fresh.predict(x, verbose=0), KERAS_Y, atol=1e-5)


def test_subclassed_files_written_in_keras_layout(active_backend, classes, tmp_path):
    x = fixture_x()
    model = classes["Net"](name="net")
    model.compile("adam", "mse")
    model.fit(np.ones((8, 7), "float32"), np.zeros((8, 3), "float32"), verbose=0)
    model.save(tmp_path / "net.keras")
    model.save_weights(tmp_path / "net.weights.h5")
    with h5py.File(tmp_path / "net.weights.h5", "r") as f:
        assert datasets(f) == KERAS_NET_LAYOUT
        assert f["block/vars"].attrs["name"] == model.block.name
        assert len(f["optimizer/vars"]) == 2 + 2 * 17      # Adam: 17 trainable weights
    with zipfile.ZipFile(tmp_path / "net.keras") as z:
        spec = json.loads(z.read("config.json"))
    assert spec["class_name"] == "Net" and spec["registered_name"] == f"{PACKAGE}>Net"
    assert spec["config"]["hidden"] == [6, 5]
    assert spec["build_config"] == {"input_shape": [None, 7]}
    want = model.predict(x, verbose=0)
    again = load_model(tmp_path / "net.keras")
    np.testing.assert_allclose(again.predict(x, verbose=0), want, atol=1e-6)
    for key, value in model.optimizer.get_state(model.backend).items():
        np.testing.assert_allclose(again.optimizer.get_state(again.backend)[key], value, atol=1e-7)
    fresh = classes["Net"]()
    fresh.build((None, 7))
    fresh.load_weights(tmp_path / "net.weights.h5")
    np.testing.assert_allclose(fresh.predict(x, verbose=0), want, atol=1e-6)


class Inner(minidl.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.a = L.Dense(2)
        self.drop = L.Dropout(0.1)

    def call(self, x):
        return self.drop(self.a(x))


class Holder(minidl.Model):
    """Keras's walk: attributes sorted (alias before head), a dict holding a list, a
    nested subclassed model, a property reaching a private attribute first."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.head = L.Dense(3)
        self.blocks = {"x": L.Dense(4), "y": [L.Dense(4), L.Dense(4)]}
        self.seq = minidl.Sequential([L.Dense(4), L.BatchNormalization()])
        self.inner = Inner()
        self._hidden = L.Dense(4)
        self.alias = self.head

    @property
    def first(self):
        return self._hidden

    def call(self, x):
        x = self.blocks["x"](self._hidden(x))
        for layer in self.blocks["y"]:
            x = layer(x)
        return self.inner(self.head(self.seq(x)))


# the same class written with Keras 3.15.1 saves these datasets (printed by h5py)
KERAS_HOLDER_LAYOUT = [
    "alias/vars/0", "alias/vars/1", "blocks/container/dense/vars/0",
    "blocks/container/dense/vars/1", "blocks/container/dense_1/vars/0",
    "blocks/container/dense_1/vars/1", "blocks/dense/vars/0", "blocks/dense/vars/1",
    "first/vars/0", "first/vars/1", "inner/a/vars/0", "inner/a/vars/1",
    "layers/sequential/layers/batch_normalization/vars/0",
    "layers/sequential/layers/batch_normalization/vars/1",
    "layers/sequential/layers/batch_normalization/vars/2",
    "layers/sequential/layers/batch_normalization/vars/3",
    "layers/sequential/layers/dense/vars/0", "layers/sequential/layers/dense/vars/1"]


def test_nested_containers_and_models_round_trip(active_backend, tmp_path):
    x = np.linspace(-1, 1, 10, dtype="float32").reshape(2, 5)
    model = Holder()
    want = minidl.ops.convert_to_numpy(model(x))
    model.save_weights(tmp_path / "h.weights.h5")
    with h5py.File(tmp_path / "h.weights.h5", "r") as f:
        assert datasets(f) == KERAS_HOLDER_LAYOUT
        assert "inner/drop/vars" in f and "vars" in f     # a group for every layer
    model.save(tmp_path / "h.keras")
    loaded = load_model(tmp_path / "h.keras", custom_objects={"Holder": Holder})
    np.testing.assert_allclose(minidl.ops.convert_to_numpy(loaded(x)), want, atol=1e-6)
    fresh = Holder()
    fresh(x)
    fresh.load_weights(tmp_path / "h.weights.h5")
    np.testing.assert_allclose(minidl.ops.convert_to_numpy(fresh(x)), want, atol=1e-6)


# ------------------------------------------------------------------ errors
class Unregistered(minidl.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = L.Dense(units)

    def call(self, x):
        return self.dense(x)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_a_class_that_cannot_be_found_is_keras_error(tmp_path):
    minidl.set_backend("numpy")
    model = Unregistered(3)
    model.build((None, 4))
    model.save(tmp_path / "u.keras")
    spec = json.loads(zipfile.ZipFile(tmp_path / "u.keras").read("config.json"))
    assert spec["registered_name"] == "Unregistered" and spec["module"] is None
    with pytest.raises(TypeError, match="Could not locate class 'Unregistered'.*"
                                        "register_keras_serializable"):
        load_model(tmp_path / "u.keras")
    loaded = load_model(tmp_path / "u.keras", custom_objects={"Unregistered": Unregistered})
    assert loaded.units == 3
    np.testing.assert_array_equal(loaded.dense.get_weights()[0], model.dense.get_weights()[0])


def test_weights_that_do_not_fit_are_refused(tmp_path, classes):
    minidl.set_backend("numpy")
    model = Unregistered(3)
    model.build((None, 4))
    model.save_weights(tmp_path / "u.weights.h5")
    other = Unregistered(5)
    other.build((None, 4))
    before = other.dense.get_weights()[0].copy()
    with pytest.raises(ModelFileError, match=r"dense/vars/0 has shape \(4, 3\)"):
        other.load_weights(tmp_path / "u.weights.h5")
    np.testing.assert_array_equal(other.dense.get_weights()[0], before)   # nothing changed
    net = classes["Net"]()
    net.build((None, 7))
    with pytest.raises(ModelFileError, match="no weights for"):
        net.load_weights(tmp_path / "u.weights.h5")


# ------------------------------------------------------------------ gap 20
def test_from_config_keeps_the_activation_function():
    minidl.set_backend("numpy")
    acts = minidl.activations
    dense = L.Dense.from_config(L.Dense(3, activation="relu").get_config())
    assert dense.activation is acts.relu and dense.get_config()["activation"] == "relu"
    assert L.Dense(2).activation is acts.linear
    conv = L.Conv2D.from_config(L.Conv2D(2, 3, activation="gelu").get_config())
    assert conv.activation is acts.gelu
    lstm = L.LSTM.from_config(L.LSTM(3, activation="relu").get_config())
    assert lstm.activation is acts.relu and lstm.recurrent_activation is acts.sigmoid
    assert lstm.get_config()["recurrent_activation"] == "sigmoid"
    assert L.Activation("swish").activation is acts.silu


def test_a_models_own_add_weight_variables_are_its_top_level_vars(active_backend, tmp_path):
    # Keras 3.15.1 writes a subclassed model's add_weight variables at the file's top-level
    # vars (printed for the same class: ['d/vars/0', 'd/vars/1', 'vars/0']), before its layers
    class Latent(minidl.Model):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.d = L.Dense(2)

        def build(self, input_shape):
            self.w = self.add_weight(shape=(3, 3), initializer="ones", name="latent")

        def call(self, x):
            return self.d(minidl.ops.matmul(x, self.w))

    x = np.arange(6, dtype="float32").reshape(2, 3)
    model = Latent()
    model(x)
    model.set_weights([np.full((3, 3), 0.5, "float32"), np.full((3, 2), 0.1, "float32"),
                       np.zeros(2, "float32")])
    path = str(tmp_path / "latent.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        assert datasets(f) == ["d/vars/0", "d/vars/1", "vars/0"]
        np.testing.assert_array_equal(f["vars/0"][()], np.full((3, 3), 0.5))
    again = Latent()
    again(x)
    again.load_weights(path)
    # Keras's prediction from that file: [[0.45, 0.45], [1.8, 1.8]]
    np.testing.assert_allclose(np.asarray(again(x)), [[0.45, 0.45], [1.8, 1.8]], rtol=1e-6)
