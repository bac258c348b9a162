"""Embedding, Masking and Keras masks: values, weights and errors as Keras 3.15.1 has them;
masks passed through the graph (functional and Sequential) by the layers that support them;
GlobalAveragePooling1D and the losses honouring them. The models' losses, outputs and weights
after one SGD step are those Keras printed (tests/_keras_sequence_values.py, written by
tests/keras_reference/sequence_layers.py), on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers
from minidl.models import Model, Sequential, load_model

from _keras_sequence_values import MASKED_MODELS
from layer_runs import LayerRun


def det(shape, scale=0.3):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + 0.3) * scale).reshape(shape).astype("float32")


IDS = np.array([[1, 2, 3, 0], [4, 5, 0, 0], [0, 7, 8, 9]], dtype=np.int32)


def masked_model(name):
    """The minidl twin of each model of masked_models() in the Keras script, with its data."""
    if name == "embedding_dense_mse":
        inp = layers.Input((None,), dtype="int32")
        h = layers.Dropout(0.0)(layers.Embedding(10, 3, mask_zero=True)(inp))
        return Model(inp, layers.Dense(2, activation="tanh")(h)), IDS, det((3, 4, 2), 1.0), "mse", []
    if name == "embedding_gap_mse":
        inp = layers.Input((4,), dtype="int32")
        h = layers.GlobalAveragePooling1D()(layers.Embedding(10, 3, mask_zero=True)(inp))
        return Model(inp, layers.Dense(1)(h)), IDS, det((3, 1), 1.0), "mse", []
    xs = det((3, 4, 2), 1.0)
    xs[0, 3] = 0.0
    xs[1, 2:] = 0.0
    labels = np.array([[0, 1, 2, 1], [2, 2, 0, 0], [1, 0, 1, 2]])
    if name == "masking_sigmoid_binary_ce":
        inp = layers.Input((4, 2))
        h = layers.Dense(2, activation="sigmoid")(layers.Masking(mask_value=0.0)(inp))
        return (Model(inp, h), xs, (det((3, 4, 2), 1.0) > 0).astype("float32"), "binary_crossentropy",
                ["binary_accuracy"])
    model = Sequential([layers.Input((4, 2)), layers.Masking(mask_value=0.0),
                        layers.Dense(3, activation="softmax")])
    return model, xs, labels, "sparse_categorical_crossentropy", ["accuracy"]


@pytest.mark.parametrize("case", MASKED_MODELS, ids=lambda c: c["name"])
def test_masked_models_match_keras(active_backend, case):
    model, x, y, loss, metrics = masked_model(case["name"])
    model.compile(optimizer=optimizers.SGD(0.1), loss=loss, metrics=metrics)
    model.set_weights([det(w.shape) for w in model.get_weights()])
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert logs.pop("loss") == pytest.approx(case["loss"], rel=1e-5, abs=1e-6)
    assert logs == pytest.approx(case["metrics"], rel=1e-5)   # counting the unmasked steps only
    np.testing.assert_allclose(model.predict(x, verbose=0), case["y"], atol=2e-5)
    model.train_on_batch(x, y)
    for got, want in zip(model.get_weights(), case["weights"]):
        np.testing.assert_allclose(got, want, atol=3e-5)


def test_embedding_weights_config_and_values(active_backend):
    layer = layers.Embedding(10, 3, name="emb")
    out = layer(np.array([[1, 2], [9, 1]], dtype=np.float32))
    assert [(w.name, w.shape) for w in layer.weights] == [("embeddings", (10, 3))]
    table = layer.get_weights()[0]
    assert np.all(np.abs(table) <= 0.05)   # Keras's "uniform": RandomUniform(-0.05, 0.05)
    np.testing.assert_array_equal(out, table[[[1, 2], [9, 1]]])
    config = layer.get_config()
    assert {k: config[k] for k in ("input_dim", "output_dim", "mask_zero")} == dict(
        input_dim=10, output_dim=3, mask_zero=False)
    assert layers.Embedding.from_config(config).get_config() == config
    # float arrays of integers are taken, as in Keras; rank 1 and rank 3 inputs work too
    np.testing.assert_array_equal(layer(np.array([[3.0, 4.0]])), table[[[3, 4]]])
    assert layers.Embedding(4, 3)(np.array([3.0, 1.0])).shape == (2, 3)
    assert layers.Embedding(4, 3)(np.zeros((2, 3, 4))).shape == (2, 3, 4, 3)


def test_embedding_gradient_adds_repeated_rows(active_backend):
    layer = layers.Embedding(5, 2)
    layer(np.zeros((1, 1)))
    b = layer.backend
    run = LayerRun(layer)
    run.forward(b.from_numpy(np.array([[1, 3, 1]], dtype=np.float32)), True)
    run.backward(b.from_numpy(np.arange(6, dtype=np.float32).reshape(1, 3, 2)))
    want = np.zeros((5, 2), np.float32)
    want[1] = [0 + 4, 1 + 5]
    want[3] = [2, 3]
    np.testing.assert_array_equal(b.to_numpy(layer.embeddings.grad), want)


@pytest.mark.parametrize("bad", [10, -1, 12.0])
def test_indices_out_of_range_are_refused(active_backend, bad):
    layer = layers.Embedding(10, 3, name="words")
    with pytest.raises(ValueError, match=r"Embedding 'words'.*\[0, 10\).*got"):
        layer(np.array([[1, bad]], dtype=np.float32))


def test_embedding_arguments_are_checked():
    with pytest.raises(ValueError, match="input_dim"):
        layers.Embedding(0, 3)
    with pytest.raises(ValueError, match="output_dim"):
        layers.Embedding(3, 2.5)
    with pytest.raises(ValueError, match="initializer"):
        layers.Embedding(3, 2, embeddings_initializer="nope")


def test_embedding_regularizer_constraint_and_initial_weights(active_backend):
    table = det((6, 2), 3.0)
    model = Sequential([layers.Input((3,)), layers.Embedding(6, 2, weights=[table],
                                                             embeddings_regularizer="l2",
                                                             embeddings_constraint="non_neg"),
                        layers.GlobalAveragePooling1D(), layers.Dense(1)])
    np.testing.assert_array_equal(model.layers[0].get_weights()[0], table)
    model.compile("sgd", "mse")
    x = np.array([[1, 2, 3]], np.float32)
    y = np.zeros((1, 1), np.float32)
    plain = float(np.mean((model.predict(x, verbose=0) - y) ** 2))
    assert model.evaluate(x, y, verbose=0) == pytest.approx(plain + 0.01 * np.sum(table ** 2), rel=1e-5)
    model.train_on_batch(x, y)
    assert np.all(model.layers[0].get_weights()[0] >= 0)


def test_sequential_with_an_integer_input_trains_and_saves(active_backend, tmp_path):
    minidl.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.integers(1, 50, size=(64, 12))
    x[:, 8:] = 0
    y = (x[:, :4].mean(axis=1, keepdims=True) > 25).astype(np.float32)
    model = Sequential([layers.Input((12,), dtype="int32"), layers.Embedding(50, 8, mask_zero=True),
                        layers.Dense(8, activation="relu"), layers.GlobalAveragePooling1D(),
                        layers.Dense(1, activation="sigmoid")])
    model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    path = tmp_path / "emb.minidl"
    model.save(path)
    loaded = load_model(path)
    assert loaded.layers[0].mask_zero and loaded.inputs[0].dtype == "int32"
    np.testing.assert_allclose(loaded.predict(x[:5], verbose=0), model.predict(x[:5], verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_masks_reach_the_layers_that_use_them(active_backend):
    """The mask passes through Dense, Dropout, Activation and LayerNormalization (as Keras); a
    layer that does not support masking (Conv1D) drops it; Add keeps it when both inputs have one."""
    inp = layers.Input((4,))
    emb = layers.Embedding(10, 3, mask_zero=True)(inp)
    h = layers.LayerNormalization()(layers.Activation("relu")(layers.Dropout(0.5)(layers.Dense(3)(emb))))
    merged = layers.Add()([h, emb])
    pooled = layers.GlobalAveragePooling1D()(merged)
    unmasked = layers.GlobalAveragePooling1D()(layers.Conv1D(3, 1)(emb))
    model = Model(inp, [pooled, unmasked, merged])
    x = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], dtype=np.float32)
    got_pooled, got_unmasked, full = model.predict(x, verbose=0)
    np.testing.assert_allclose(got_pooled[0], full[0, :2].mean(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_pooled[1], full[1, 0], rtol=1e-5, atol=1e-6)
    conv = model.layers[-2] if isinstance(model.layers[-2], layers.Conv1D) else [
        l for l in model.layers if isinstance(l, layers.Conv1D)][0]
    conv_out = Model(inp, conv.output).predict(x, verbose=0)
    np.testing.assert_allclose(got_unmasked, conv_out.mean(axis=1), rtol=1e-5, atol=1e-6)
    assert [m is not None for m in model.graph.output_masks] == [False, False, True]


def test_masking_layer_values_and_mask(active_backend):
    x = det((2, 3, 2), 1.0)
    x[0, 1] = 5.0
    layer = layers.Masking(mask_value=5.0)
    out = layer(x)
    want = x.copy()
    want[0, 1] = 0.0
    np.testing.assert_array_equal(out, want)
    assert layers.Masking.from_config(layer.get_config()).mask_value == 5.0


def test_an_eager_call_after_a_masked_model_has_no_mask(active_backend):
    inp = layers.Input((4,))
    pool = layers.GlobalAveragePooling1D()
    model = Model(inp, pool(layers.Embedding(10, 3, mask_zero=True)(inp)))
    model.predict(np.array([[1, 2, 0, 0]], np.float32), verbose=0)
    x = det((2, 4, 3), 1.0)
    np.testing.assert_allclose(pool(x), x.mean(axis=1), rtol=1e-5, atol=1e-6)
