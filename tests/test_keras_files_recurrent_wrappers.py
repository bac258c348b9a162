"""Bidirectional, RNN(cell), RNN(stacked cells) and TimeDistributed in Keras 3's files, against
what real Keras 3.15.1 wrote (tests/fixtures/keras_recurrent_wrappers.py writes the .json: each
.keras file's config.json, metadata.json and every dataset of its model.weights.h5, the inputs
and Keras's predictions). The Keras files are rebuilt from it byte-for-value: minidl loads them
and predicts as Keras did; the files minidl writes hold Keras's groups, in Keras's order, with
Keras's values; minidl's files from before it followed Keras's layout still load."""

import json
import os
import zipfile

import numpy as np
import pytest

import minidl
from minidl import layers as L

h5py = pytest.importorskip("h5py")

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_recurrent_wrappers.json")
with open(FIXTURE) as _f:
    KERAS = json.load(_f)
KINDS = sorted(KERAS["models"])
X = np.array(KERAS["x"], np.float32)


def build(kind):
    """The model the fixture script built, with minidl's layers."""
    inp = minidl.Input((4, 3))
    layer = {
        "bidirectional_lstm": lambda: L.Bidirectional(L.LSTM(2)),
        "bidirectional_gru_sum": lambda: L.Bidirectional(L.GRU(2, return_sequences=True),
                                                         merge_mode="sum"),
        "bidirectional_backward_layer": lambda: L.Bidirectional(
            L.LSTM(2), backward_layer=L.LSTM(2, go_backwards=True, activation="relu")),
        "rnn_lstm_cell": lambda: L.RNN(L.LSTMCell(2)),
        "rnn_gru_cell": lambda: L.RNN(L.GRUCell(2), return_sequences=True),
        "rnn_simple_rnn_cell": lambda: L.RNN(L.SimpleRNNCell(2)),
        "rnn_cell_list": lambda: L.RNN([L.LSTMCell(2), L.GRUCell(3)]),
        "rnn_stacked_rnn_cells": lambda: L.RNN(
            L.StackedRNNCells([L.SimpleRNNCell(2), L.LSTMCell(2)]), return_sequences=True),
        "time_distributed_dense": lambda: L.TimeDistributed(L.Dense(2)),
    }[kind]()
    return minidl.Model(inp, layer(inp))


def keras_weights_file(kind, path):
    """The model.weights.h5 Keras wrote: its groups (with their name attributes) and datasets."""
    spec = KERAS["models"][kind]
    with h5py.File(path, "w") as f:
        for group, name in spec["groups"]:
            f.require_group(group).attrs["name"] = name
        for dataset, values in spec["datasets"]:
            f.create_dataset(dataset, data=np.array(values, np.float32))
    return path


def keras_file(kind, tmp_path):
    spec = KERAS["models"][kind]
    weights = keras_weights_file(kind, tmp_path / "model.weights.h5")
    path = tmp_path / f"{kind}.keras"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", json.dumps(spec["metadata"]))
        z.writestr("config.json", json.dumps(spec["config"]))
        z.write(weights, "model.weights.h5")
    return path


def h5_layout(source):
    """{group path: name attribute} and [(dataset path, values)] in the file's order."""
    groups, datasets = {}, []
    with h5py.File(source, "r") as f:
        def visit(name, node):
            if isinstance(node, h5py.Dataset):
                datasets.append((name, np.asarray(node)))
            elif "name" in node.attrs:
                groups[name] = node.attrs["name"]
        f.visititems(visit)
    return groups, datasets


def close_to_keras(y, kind):
    np.testing.assert_allclose(np.asarray(y), np.array(KERAS["models"][kind]["y"], np.float32),
                               rtol=2e-5, atol=2e-6, err_msg=kind)


@pytest.mark.parametrize("kind", KINDS)
def test_keras_written_model_loads_and_predicts_as_keras(active_backend, kind, tmp_path):
    model = minidl.saving.load_model(keras_file(kind, tmp_path))
    close_to_keras(model.predict(X, verbose=0), kind)


@pytest.mark.parametrize("kind", KINDS)
def test_keras_written_weights_load_into_the_same_model(active_backend, kind, tmp_path):
    model = build(kind)
    model.load_weights(str(keras_weights_file(kind, tmp_path / "k.weights.h5")))
    close_to_keras(model.predict(X, verbose=0), kind)


@pytest.mark.parametrize("kind", KINDS)
def test_minidl_writes_kerass_groups_and_values(active_backend, kind, tmp_path):
    model = minidl.saving.load_model(keras_file(kind, tmp_path))
    path = str(tmp_path / "m.weights.h5")
    model.save_weights(path)
    groups, datasets = h5_layout(path)
    spec = KERAS["models"][kind]
    assert sorted(groups) == sorted(g for g, _ in spec["groups"])
    assert [name for name, _ in datasets] == [name for name, _ in spec["datasets"]]
    for (name, value), (_, expected) in zip(datasets, spec["datasets"]):
        np.testing.assert_array_equal(value, np.array(expected, np.float32), err_msg=name)
    # a new model of the same layers reads minidl's file as Keras's
    again = build(kind)
    again.load_weights(path)
    close_to_keras(again.predict(X, verbose=0), kind)


@pytest.mark.parametrize("kind", KINDS)
def test_minidl_keras_config_matches_kerass(kind, tmp_path):
    """The class names and nested layer configs Keras's loader reads (Bidirectional's layer,
    backward_layer and merge_mode; RNN's cell; TimeDistributed's layer)."""
    model = minidl.saving.load_model(keras_file(kind, tmp_path))
    model.save(str(tmp_path / "m.keras"))
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        mine = json.loads(z.read("config.json"))["config"]["layers"][1]
    theirs = KERAS["models"][kind]["config"]["config"]["layers"][1]

    def shape(spec):
        """class names, names and the nested specs' structure, recursively."""
        config = spec["config"]
        out = {"class_name": spec["class_name"], "module": spec.get("module")}
        for key in ("merge_mode", "return_sequences", "go_backwards", "units", "activation"):
            if key in config:
                out[key] = config[key]
        for key in ("layer", "backward_layer", "cell"):
            if isinstance(config.get(key), dict):
                out[key] = shape(config[key])
        if isinstance(config.get("cells"), list):
            out["cells"] = [shape(c) for c in config["cells"]]
        return out

    assert shape(mine) == shape(theirs)
    if theirs["class_name"] == "Bidirectional":
        assert mine["config"]["layer"]["config"]["name"] == \
            theirs["config"]["layer"]["config"]["name"] == "forward_" + \
            theirs["config"]["layer"]["config"]["name"][len("forward_"):]


def _older_minidl_file(kind, path):
    """The .weights.h5 minidl wrote before it followed Keras's wrappers: a wrapper's weights all
    in its own vars (forward then backward, a stack's cells in order) under minidl's class
    name (stacked_rnn; lstm, gru, simple_rnn for RNN(cell), with the cell's vars)."""
    spec = KERAS["models"][kind]
    values = dict((name, np.array(v, np.float32)) for name, v in spec["datasets"])
    order = {"bidirectional": ["forward_layer/cell", "backward_layer/cell"],
             "time_distributed": ["layer"]}
    with h5py.File(path, "w") as f:
        f.require_group("vars")
        f.require_group("layers/input_layer/vars")
        if kind.startswith(("bidirectional", "time_distributed")):
            top = "bidirectional" if kind.startswith("bidirectional") else "time_distributed"
            flat = [values[name] for part in order[top] for name in values
                    if name.startswith(f"layers/{top}/{part}/vars/")]
            old = f"layers/{top}"
        elif kind in ("rnn_cell_list", "rnn_stacked_rnn_cells"):
            cells = ["lstm_cell", "gru_cell"] if kind == "rnn_cell_list" else \
                ["simple_rnn_cell", "lstm_cell"]
            flat = [values[f"layers/rnn/cell/cells/{c}/vars/{i}"] for c in cells for i in range(3)]
            old = "layers/stacked_rnn"
        else:
            old = "layers/" + {"rnn_lstm_cell": "lstm", "rnn_gru_cell": "gru",
                               "rnn_simple_rnn_cell": "simple_rnn"}[kind]
            f.require_group(f"{old}/vars")
            old, flat = old + "/cell", [values[f"layers/rnn/cell/vars/{i}"] for i in range(3)]
        group = f.require_group(f"{old}/vars")
        for i, value in enumerate(flat):
            group.create_dataset(str(i), data=value)
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_minidls_older_wrapper_files_still_load(kind, tmp_path):
    model = build(kind)
    model.load_weights(str(_older_minidl_file(kind, tmp_path / "old.weights.h5")))
    close_to_keras(model.predict(X, verbose=0), kind)


def test_bidirectional_forward_name_is_not_prefixed_twice():
    """Keras's naming: forward_<name> from a layer called "forward_lstm" stays forward_lstm."""
    layer = L.Bidirectional(L.LSTM(2, name="forward_lstm"))
    assert layer.forward_layer.name == "forward_lstm"
    assert layer.backward_layer.name == "backward_forward_lstm"
    again = L.Bidirectional.from_config(layer.get_config())
    assert again.forward_layer.name == "forward_lstm"
    assert again.backward_layer.name == "backward_forward_lstm"
