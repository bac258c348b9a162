"""Keras's own files: .keras zips, HDF5 models and weights (minidl/keras_files).

The fixtures in tests/fixtures/keras_files were written by real Keras 3.15.1
(make_fixtures.py, with Keras's predictions on fixed inputs); the writing side is checked
here by re-reading minidl's files with zipfile and h5py for the layout Keras expects (the
check that real Keras loads them is make_fixtures.py --check, run where Keras is installed).
"""

import io
import json
import os
import zipfile

import numpy as np
import pytest

import minidl
from minidl import layers as L
from minidl.models import ModelFileError, load_model

h5py = pytest.importorskip("h5py")

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_files")
MODELS = ["mlp", "cnn", "two_inputs", "nested", "residual"]


def fixture_io(name):
    xs = [np.load(os.path.join(FIXTURES, f"{name}_x{i}.npy")) for i in range(4)
          if os.path.exists(os.path.join(FIXTURES, f"{name}_x{i}.npy"))]
    return (xs if len(xs) > 1 else xs[0]), np.load(os.path.join(FIXTURES, f"{name}_y.npy"))


# ------------------------------------------------------------- files real Keras wrote
@pytest.mark.parametrize("name", MODELS)
def test_keras_files_load_and_predict_as_keras(active_backend, name):
    x, want = fixture_io(name)
    model = load_model(os.path.join(FIXTURES, f"{name}.keras"))
    np.testing.assert_allclose(model.predict(x, verbose=0), want, atol=1e-5)
    assert model.compiled and type(model.optimizer).__name__ == "Adam"
    # Keras's optimizer state came too: Adam after 2 epochs of 2 steps
    assert int(model.optimizer.get_state(model.backend)["iterations"]) == 4
    legacy = load_model(os.path.join(FIXTURES, f"{name}.h5"))
    np.testing.assert_allclose(legacy.predict(x, verbose=0), want, atol=1e-5)
    assert legacy.compiled
    fresh = minidl.models.clone_model(model) if hasattr(minidl.models, "clone_model") else \
        type(model).from_config(model.get_config())
    fresh.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    np.testing.assert_allclose(fresh.predict(x, verbose=0), want, atol=1e-5)


def test_functional_layers_in_keras_order(tmp_path):
    """Keras names weight groups in its model.layers order (by depth), which differs from
    the order a residual block runs in; minidl writes and reads in Keras's order."""
    from minidl.keras_files.state_walk import keras_functional_order
    minidl.set_backend("numpy")
    path = os.path.join(FIXTURES, "residual.keras")
    keras_order = [s["config"]["name"] for s in
                   json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"]]
    model = load_model(path)
    assert [l.name for l in model.layers] != keras_order        # minidl runs them otherwise
    model.save(tmp_path / "again.keras")
    written = json.loads(zipfile.ZipFile(tmp_path / "again.keras").read("config.json"))
    assert [s["config"]["name"] for s in written["config"]["layers"]] == keras_order
    assert [l.name for l in keras_functional_order(model)] == keras_order


def test_keras_layer_names_and_configs_are_kept():
    minidl.set_backend("numpy")
    model = load_model(os.path.join(FIXTURES, "cnn.keras"))
    assert [type(l).__name__ for l in model.layers] == [
        "Conv2D", "BatchNormalization", "MaxPooling2D", "Dropout", "Conv2D", "Activation",
        "AveragePooling2D", "Flatten", "Dense", "Softmax"]
    assert model.layers[0].padding == "same" and model.layers[3].rate == 0.25
    assert model.layers[4].use_bias is False
    shared = load_model(os.path.join(FIXTURES, "two_inputs.keras")).get_layer("shared")
    assert len(shared._inbound_nodes) == 2      # one layer called on both inputs


# ------------------------------------------------------------- files minidl writes
def small_cnn():
    model = minidl.Sequential([
        L.InputLayer((8, 8, 3)), L.Conv2D(4, 3, padding="same", activation="relu"),
        L.BatchNormalization(), L.MaxPooling2D(), L.DepthwiseConv2D(3, padding="same"),
        L.SeparableConv2D(5, 3), L.PReLU(), L.GlobalAveragePooling2D(), L.Dropout(0.5),
        L.Dense(3, activation="softmax")], name="small_cnn")
    rng = np.random.default_rng(1)
    for layer in model.layers:
        layer.set_weights([rng.standard_normal(w.shape).astype("float32") * 0.3 + 1.0
                           for w in layer.weights])
    return model


def keras_layout(f):
    found = {}
    f.visititems(lambda name, node: found.__setitem__(
        name, tuple(node.shape) if isinstance(node, h5py.Dataset) else dict(node.attrs)))
    return found


def test_keras_zip_written_in_keras_layout(active_backend, tmp_path):
    model = small_cnn()
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    x = np.random.default_rng(2).standard_normal((4, 8, 8, 3)).astype("float32")
    model.fit(x, np.eye(3, dtype="float32")[[0, 1, 2, 0]], epochs=1, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        config = json.loads(z.read("config.json"))
        metadata = json.loads(z.read("metadata.json"))
        weights = z.read("model.weights.h5")
    assert metadata["keras_version"].startswith("3.")
    assert config["class_name"] == "Sequential" and config["module"] == "keras"
    specs = config["config"]["layers"]
    assert specs[0]["class_name"] == "InputLayer"
    assert specs[0]["config"]["batch_shape"] == [None, 8, 8, 3]
    assert specs[1]["module"] == "keras.layers" and specs[1]["class_name"] == "Conv2D"
    assert specs[1]["config"]["kernel_initializer"]["class_name"] == "GlorotUniform"
    assert specs[1]["config"]["dtype"]["config"]["name"] == "float32"
    assert specs[1]["build_config"] == {"input_shape": [None, 8, 8, 3]}
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"
    assert config["compile_config"]["metrics"] == ["accuracy"]
    with h5py.File(io.BytesIO(weights), "r") as f:
        layout = keras_layout(f)
    assert layout["vars"] == {"name": "small_cnn"}
    assert layout["layers/conv2d/vars"] == {"name": model.layers[0].name}
    assert layout["layers/conv2d/vars/0"] == (3, 3, 3, 4)
    assert [layout[f"layers/batch_normalization/vars/{i}"] for i in range(4)] == [(4,)] * 4
    assert layout["layers/depthwise_conv2d/vars/0"] == (3, 3, 4, 1)
    assert layout["layers/separable_conv2d/vars/1"] == (1, 1, 4, 5)
    assert "layers/max_pooling2d/vars" in layout and "layers/dropout/vars" in layout
    # Keras's Adam: iterations, learning_rate, then momentum and velocity of each weight
    n_trainable = len(model.trainable_weights)
    assert layout["optimizer/vars/0"] == () and layout["optimizer/vars/2"] == (3, 3, 3, 4)
    assert f"optimizer/vars/{2 + 2 * n_trainable - 1}" in layout
    again = load_model(path)
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    for key, value in model.optimizer.get_state(model.backend).items():
        np.testing.assert_array_equal(again.optimizer.get_state(again.backend)[key], value)


def test_weights_h5_is_hdf5_in_keras_layout(active_backend, tmp_path):
    model = small_cnn()
    path = tmp_path / "w.weights.h5"
    model.save_weights(path)
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89HDF\r\n\x1a\n"
    with h5py.File(path, "r") as f:
        layout = keras_layout(f)
    assert layout["layers/dense/vars/0"] == (5, 3) and "optimizer/vars/0" not in layout
    other = small_cnn()
    for layer in other.layers:
        layer.set_weights([np.zeros(w.shape, "float32") for w in layer.weights])
    other.load_weights(path)
    for a, b in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_functional_and_nested_round_trip(active_backend, tmp_path):
    a, b = L.Input((6,), name="a"), L.Input((6,), name="b")
    shared = L.Dense(5, activation="gelu")
    inner = minidl.Sequential([L.InputLayer((10,)), L.Dense(4), L.LayerNormalization()])
    merged = L.Concatenate()([shared(a), L.Subtract()([shared(a), shared(b)])])
    outputs = [L.Dense(2)(inner(merged)), L.Softmax()(merged)]
    model = minidl.Model([a, b], outputs, name="fun")
    xs = [np.random.default_rng(i).standard_normal((3, 6)).astype("float32") for i in range(2)]
    model.save(tmp_path / "fun.keras")
    config = json.loads(zipfile.ZipFile(tmp_path / "fun.keras").read("config.json"))
    assert config["class_name"] == "Functional"
    subtract = [s for s in config["config"]["layers"] if s["class_name"] == "Subtract"][0]
    args = subtract["inbound_nodes"][0]["args"]
    assert len(args) == 1 and [t["config"]["keras_history"] for t in args[0]] == \
        [[shared.name, 1, 0], [shared.name, 2, 0]]        # a merge layer's inputs: one list
    with h5py.File(io.BytesIO(zipfile.ZipFile(tmp_path / "fun.keras")
                              .read("model.weights.h5")), "r") as f:
        layout = keras_layout(f)
    assert "layers/input_layer_1/vars" in layout     # Keras's functional layers: inputs too
    assert layout["layers/sequential/layers/dense/vars/0"] == (10, 4)
    again = load_model(tmp_path / "fun.keras")
    for got, want in zip(again.predict(xs, verbose=0), model.predict(xs, verbose=0)):
        np.testing.assert_array_equal(got, want)


def test_training_position_survives_a_keras_file(tmp_path):
    minidl.set_backend("numpy")
    model = small_cnn()
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    x = np.random.default_rng(2).standard_normal((4, 8, 8, 3)).astype("float32")
    model.fit(x, np.eye(3, dtype="float32")[[0, 1, 2, 0]], epochs=2, verbose=0)
    model.save(tmp_path / "m.keras")
    assert load_model(tmp_path / "m.keras").trained_epochs == 2


# ------------------------------------------------------------- Keras 2 files, made here
def keras2_file(path, dense_kernel, dense_bias, extra_layer=False):
    """A tf.keras 2 whole-model file: Keras 2's configs (batch_input_shape, initializers as
    {class_name, config}), inbound nodes as lists, weight names with ':0'."""
    config = {"class_name": "Functional", "config": {
        "name": "model", "layers": [
            {"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [],
             "config": {"batch_input_shape": [None, 3], "dtype": "float32",
                        "sparse": False, "ragged": False, "name": "input_1"}},
            {"class_name": "Dense", "name": "dense", "inbound_nodes": [[["input_1", 0, 0, {}]]],
             "config": {"name": "dense", "trainable": True, "dtype": "float32", "units": 2,
                        "activation": "relu", "use_bias": True,
                        "kernel_initializer": {"class_name": "GlorotUniform",
                                               "config": {"seed": None}},
                        "bias_initializer": {"class_name": "Zeros", "config": {}},
                        "kernel_regularizer": None, "bias_regularizer": None,
                        "activity_regularizer": None, "kernel_constraint": None,
                        "bias_constraint": None}}],
        "input_layers": [["input_1", 0, 0]], "output_layers": [["dense", 0, 0]]}}
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.13.1"
        f.attrs["training_config"] = json.dumps({
            "loss": "mse", "metrics": ["accuracy"], "loss_weights": None,
            "optimizer_config": {"class_name": "SGD", "config": {"name": "SGD",
                                                                 "learning_rate": 0.05}}})
        g = f.create_group("model_weights")
        names = ["input_1", "dense"] + (["extra"] if extra_layer else [])
        g.attrs["layer_names"] = np.array([n.encode() for n in names])
        g.create_group("input_1").attrs["weight_names"] = np.array([], dtype="S1")
        d = g.create_group("dense")
        d.attrs["weight_names"] = np.array([b"dense/kernel:0", b"dense/bias:0"])
        d.create_dataset("dense/kernel:0", data=dense_kernel)
        d.create_dataset("dense/bias:0", data=dense_bias)
        if extra_layer:
            e = g.create_group("extra")
            e.attrs["weight_names"] = np.array([b"extra/kernel:0"])
            e.create_dataset("extra/kernel:0", data=np.ones((7, 7), "float32"))


def test_keras2_h5_model_loads(active_backend, tmp_path):
    rng = np.random.default_rng(3)
    kernel, bias = rng.standard_normal((3, 2)).astype("float32"), np.array([0.5, -0.5], "f")
    keras2_file(tmp_path / "k2.h5", kernel, bias)
    model = load_model(tmp_path / "k2.h5")
    x = rng.standard_normal((4, 3)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), np.maximum(x @ kernel + bias, 0),
                               atol=1e-6)
    assert model.compiled and model.optimizer.get_config()["learning_rate"] == 0.05


def test_keras2_sequential_with_the_input_shape_on_its_first_layer(tmp_path):
    minidl.set_backend("numpy")
    config = {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
        {"class_name": "Dense", "config": {"name": "dense_1", "units": 2, "activation": "tanh",
                                           "batch_input_shape": [None, 3], "dtype": "float32",
                                           "use_bias": False}}]}}
    kernel = np.arange(6, dtype="float32").reshape(3, 2) / 10
    with h5py.File(tmp_path / "k2seq.h5", "w") as f:
        f.attrs["model_config"] = json.dumps(config).encode()
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = [b"dense_1"]
        d = g.create_group("dense_1")
        d.attrs["weight_names"] = [b"dense_1/kernel:0"]
        d.create_dataset("dense_1/kernel:0", data=kernel)
    model = load_model(tmp_path / "k2seq.h5")
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), np.tanh(x @ kernel), atol=1e-6)


def test_load_weights_by_name_and_skip_mismatch(tmp_path):
    minidl.set_backend("numpy")
    rng = np.random.default_rng(4)
    kernel, bias = rng.standard_normal((3, 2)).astype("float32"), np.zeros(2, "float32")
    keras2_file(tmp_path / "k2.h5", kernel, bias, extra_layer=True)
    model = minidl.Sequential([L.InputLayer((3,)), L.Dense(2, name="dense"),
                               L.Dense(4, name="other")])
    before = model.layers[1].get_weights()
    with pytest.raises(ModelFileError):   # by position: 'extra' (7, 7) does not fit 'other'
        model.load_weights(tmp_path / "k2.h5")
    model.load_weights(tmp_path / "k2.h5", by_name=True)   # only 'dense' matches by name
    np.testing.assert_array_equal(model.layers[0].get_weights()[0], kernel)
    np.testing.assert_array_equal(model.layers[1].get_weights()[0], before[0])
    with pytest.warns(UserWarning, match="skipping"):
        model.load_weights(tmp_path / "k2.h5", skip_mismatch=True)


# ------------------------------------------------------------- refused, clearly
def test_crafted_files_get_model_file_error(tmp_path):
    minidl.set_backend("numpy")
    source = os.path.join(FIXTURES, "mlp.keras")
    with zipfile.ZipFile(source) as z:
        members = {n: z.read(n) for n in z.namelist()}

    def variant(name, **changes):
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as z:
            for member, data in dict(members, **changes).items():
                if data is not None:
                    z.writestr(member, data)
        return path

    config = json.loads(members["config.json"])
    huge = json.loads(members["config.json"])
    huge["config"]["layers"][1]["config"]["units"] = 1 << 28   # 2**30 parameters declared
    cases = {
        "not_json.keras": ({"config.json": b"{not json"}, "not readable JSON"),
        "huge.keras": ({"config.json": json.dumps(huge).encode()}, "parameters need"),
        "no_weights.keras": ({"model.weights.h5": None}, "no model.weights.h5"),
        "extra.keras": ({"run_me.py": b"import os"}, "unknown member"),
        "lambda.keras": ({"config.json": json.dumps(dict(config, config=dict(
            config["config"], layers=config["config"]["layers"][:1] + [
                {"class_name": "Lambda", "config": {"name": "l", "function": "os.system"}}])))
            .encode()}, "cannot be rebuilt"),
    }
    for name, (changes, message) in cases.items():
        with pytest.raises(ModelFileError, match=message):
            load_model(variant(name, **changes))
    # a dataset of the wrong shape, and one of strings, in a weights file
    path = tmp_path / "bad.weights.h5"
    model = load_model(source)
    model.save_weights(path)
    with h5py.File(path, "a") as f:
        del f["layers/dense/vars/0"]
        f.create_dataset("layers/dense/vars/0", data=np.zeros((7, 7), "float32"))
    with pytest.raises(ModelFileError, match=r"shape \(7, 7\)"):
        model.load_weights(path)
    with h5py.File(path, "a") as f:
        del f["layers/dense/vars/0"]
        f.create_dataset("layers/dense/vars/0", data=np.array([b"x"] * 48).reshape(6, 8))
    before = model.get_weights()
    with pytest.raises(ModelFileError, match="expected numbers"):
        model.load_weights(path)
    for a, b in zip(model.get_weights(), before):     # a failed load changes nothing
        np.testing.assert_array_equal(a, b)


def test_what_keras_files_cannot_hold_is_refused(tmp_path):
    minidl.set_backend("numpy")
    model = minidl.Sequential([L.InputLayer((3,)), L.Lambda(lambda t: t), L.Dense(2)])
    with pytest.raises(ValueError, match="Lambda"):
        model.save(tmp_path / "lam.keras")
    assert not os.path.exists(tmp_path / "lam.keras")
    plain = minidl.Sequential([L.InputLayer((3,)), L.Dense(2)])
    with pytest.raises(ValueError, match="weights only"):
        plain.save(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="whole model"):
        plain.save_weights(tmp_path / "m.keras")


def test_a_missing_h5py_names_the_extra(monkeypatch):
    import importlib
    from minidl import keras_files
    real = importlib.import_module

    def no_h5py(name, *args):
        if name == "h5py":
            raise ImportError("No module named 'h5py'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_h5py)
    with pytest.raises(ImportError, match=r"minidl\[keras-files\]"):
        keras_files.require("h5py", "keras-files")


# ------------------------------------------------------------- Keras's pretrained files
def keras2_weights_file(path, model, leave_out=()):
    """Keras 2's weights layout as Keras's published application files have it (layers in
    reverse order here: they are matched by name), from a minidl model's weights."""
    keras_names = {"DepthwiseConv2D": {"kernel": "depthwise_kernel"}}
    weighted = [l for l in model.layers if l.weights and l.name not in leave_out]
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = np.array([l.name.encode() for l in reversed(weighted)])
        for layer in weighted:
            g = f.create_group(layer.name)
            rename = keras_names.get(type(layer).__name__, {})
            names = [f"{layer.name}/{rename.get(w.name, w.name)}:0" for w in layer.weights]
            g.attrs["weight_names"] = np.array([n.encode() for n in names])
            for n, value in zip(names, layer.get_weights()):
                g.create_dataset(n, data=value)


def test_pretrained_imagenet_file_from_keras_cache(tmp_path, monkeypatch):
    import minidl.applications as applications
    minidl.set_backend("numpy")
    build = dict(alpha=0.35, include_top=False, input_shape=(96, 96, 3), pooling="avg")
    source = applications.MobileNetV2(weights=None, **build)
    rng = np.random.default_rng(7)
    for layer in source.layers:
        if layer.weights:
            layer.set_weights([rng.uniform(0.5, 1.5, w.shape).astype("float32")
                               if "variance" in w.name else
                               rng.normal(0, 0.2, w.shape).astype("float32")
                               for w in layer.weights])
    folder = tmp_path / "models"
    folder.mkdir()
    name = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"
    keras2_weights_file(folder / name, source)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    model = applications.MobileNetV2(weights="imagenet", **build)
    for a, b in zip(model.get_weights(), source.get_weights()):
        np.testing.assert_array_equal(a, b)
    again = applications.MobileNetV2(weights=str(folder / name), **build)   # a path
    x = rng.uniform(0, 255, (2, 96, 96, 3)).astype("float32")
    np.testing.assert_array_equal(again.predict(x, verbose=0), source.predict(x, verbose=0))
    keras2_weights_file(folder / name, source, leave_out=("Conv_1",))
    with pytest.raises(ModelFileError, match="no weights for the layers.*Conv_1"):
        applications.MobileNetV2(weights="imagenet", **build)
    with pytest.raises(FileNotFoundError, match="0.35_128_no_top.h5"):
        applications.MobileNetV2(weights="imagenet", **dict(build, input_shape=(128, 128, 3)))


def test_layers_of_your_own_in_a_keras_file(tmp_path):
    from minidl.custom_objects import _GLOBAL, _NAMES
    minidl.set_backend("numpy")

    class Gate(L.Activation):                            # a user class built on a layer
        def __init__(self, name=None, trainable=True):
            super().__init__("sigmoid", name=name, trainable=trainable)

        def get_config(self):
            return {"name": self.name, "trainable": self.trainable}

    model = minidl.Sequential([L.InputLayer((3,)), L.Dense(2), Gate()])
    x = np.ones((2, 3), "float32")
    model.save(tmp_path / "plain.keras")
    spec = json.loads(zipfile.ZipFile(tmp_path / "plain.keras").read("config.json"))
    assert spec["config"]["layers"][-1]["module"] is None    # not one of Keras's layers
    with pytest.raises(ModelFileError, match="Gate.*custom_objects"):
        load_model(tmp_path / "plain.keras")
    loaded = load_model(tmp_path / "plain.keras", custom_objects={"Gate": Gate})
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    try:
        minidl.saving.register_keras_serializable(package="mine")(Gate)
        model.save(tmp_path / "registered.keras")
        spec = json.loads(zipfile.ZipFile(tmp_path / "registered.keras").read("config.json"))
        assert spec["config"]["layers"][-1]["registered_name"] == "mine>Gate"
        assert isinstance(load_model(tmp_path / "registered.keras").layers[-1], Gate)
    finally:
        _GLOBAL.pop("mine>Gate", None)
        _NAMES.pop(Gate, None)


@pytest.mark.parametrize("name, optimizer, loss, slots", [
    ("rmsprop", "RMSprop", "SparseCategoricalCrossentropy", 2),
    ("adamw", "AdamW", "CategoricalCrossentropy", 4),
    ("lion", "Lion", "Huber", 2),
    ("adamax", "Adamax", "MeanAbsoluteError", 4),
    ("sgd", "SGD", "BinaryCrossentropy", 2),
    ("nadam", "Nadam", "MeanSquaredError", 4)])
def test_keras_compile_settings_and_optimizer_state(name, optimizer, loss, slots, tmp_path):
    """Optimizers, losses and metrics as real Keras wrote them, with the state of one step."""
    minidl.set_backend("numpy")
    model = load_model(os.path.join(FIXTURES, f"compile_{name}.keras"))
    assert type(model.optimizer).__name__ == optimizer
    assert type(model._heads[0].loss).__name__ == loss
    state = model.optimizer.get_state(model.backend)
    assert int(state["iterations"]) == 1 and len(state) - 1 == slots
    assert any(np.any(v != 0) for k, v in state.items() if k != "iterations")
    config = model.optimizer.get_config()
    if name == "rmsprop":
        assert config["rho"] == pytest.approx(0.8) and model._heads[0].loss.from_logits
        assert model.metrics_names == ["loss", "accuracy"]
    if name == "sgd":
        assert config["nesterov"] and config["momentum"] == pytest.approx(0.9)
    model.save(tmp_path / "again.keras")      # and back, the state with it
    again = load_model(tmp_path / "again.keras")
    for key, value in state.items():
        np.testing.assert_array_equal(again.optimizer.get_state(again.backend)[key], value)
    if name == "nadam":   # Keras's trailing u_product, as Keras wrote it after one step
        import h5py
        import io
        import zipfile
        with zipfile.ZipFile(tmp_path / "again.keras") as z:
            f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
            last = f["optimizer/vars"][str(len(f["optimizer/vars"]) - 1)][()]
        assert float(last) == pytest.approx(0.9 * (1 - 0.5 * 0.96))


def test_recurrent_weights_sit_in_the_cell_and_the_older_minidl_layout_still_loads(tmp_path):
    # Keras 3.15.1 writes an LSTM's weights at layers/lstm/cell/vars/{0,1,2} (its layer's own
    # layers/lstm/vars is empty); minidl wrote them at layers/lstm/vars before following it
    model = minidl.Sequential([L.Input((5, 3)), L.LSTM(4)])
    path = str(tmp_path / "lstm.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        datasets = []
        f.visititems(lambda name, node: datasets.append(name)
                     if isinstance(node, h5py.Dataset) else None)
    assert datasets == ["layers/lstm/cell/vars/0", "layers/lstm/cell/vars/1",
                        "layers/lstm/cell/vars/2"]
    older = str(tmp_path / "older.weights.h5")
    with h5py.File(path, "r") as new, h5py.File(older, "w") as old:
        for name in datasets:
            old.create_dataset(name.replace("/cell/vars", "/vars"), data=new[name][()])
    again = minidl.Sequential([L.Input((5, 3)), L.LSTM(4)])
    again.load_weights(older)
    for a, b in zip(again.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
