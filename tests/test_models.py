"""The Keras-style API end to end on the numpy backend: training, saving, errors."""

import json
import zipfile

import numpy as np
import pytest

import minidl
from minidl import callbacks, layers, optimizers
from minidl.models import Model, ModelFileError, Sequential, load_model


@pytest.fixture(autouse=True)
def numpy_backend():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


def blobs(n=300, seed=0):
    """Three Gaussian blobs in 4-D: a synthetic task a small model must learn."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, size=(3, 4))
    y = rng.integers(0, 3, size=n)
    x = centers[y] + rng.normal(size=(n, 4))
    return x.astype(np.float32), y


def small_cnn():
    return Sequential([layers.Input((8, 8, 2)),
                       layers.Conv2D(4, 3, padding="same", activation="relu"),
                       layers.BatchNormalization(), layers.MaxPooling2D(2),
                       layers.Dropout(0.2), layers.Flatten(),
                       layers.Dense(3, activation="softmax")])


def images(n=64, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    x = rng.normal(size=(n, 8, 8, 2)).astype(np.float32)
    x[:, :, :, 0] += y[:, None, None]  # the class shows in channel 0's brightness
    return x, y


def test_dense_model_learns_blobs():
    x, y = blobs()
    model = Sequential([layers.Input((4,)), layers.Dense(16, activation="relu"),
                        layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=15, verbose=0, validation_split=0.2)
    assert history.history["accuracy"][-1] > 0.9
    assert history.history["val_accuracy"][-1] > 0.85
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, acc = model.evaluate(x, y)
    assert acc > 0.9
    probs = model.predict(x, batch_size=50)
    assert probs.shape == (300, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-5)


def test_cnn_learns_and_batch_api_matches_keras():
    x, y = images()
    model = small_cnn()
    model.compile(optimizer=optimizers.SGD(0.05, momentum=0.9),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    first = model.train_on_batch(x[:32], y[:32])
    assert isinstance(first, list) and len(first) == 2
    for _ in range(30):
        loss, acc = model.train_on_batch(x, y)
    assert loss < first[0] and acc > 0.8
    # test mode uses BatchNormalization's moving statistics: a different, finite value
    assert np.isfinite(model.test_on_batch(x, y)[0])
    assert model.predict_on_batch(x[:5]).shape == (5, 3)


def test_functional_residual_model_trains():
    x, y = images(96)
    inp = layers.Input((8, 8, 2))
    h = layers.Conv2D(4, 3, padding="same", use_bias=False)(inp)
    h = layers.BatchNormalization()(h)
    h = layers.Activation("relu")(h)
    r = layers.Conv2D(4, 3, padding="same")(h)
    h = layers.Add()([h, r])
    h = layers.ReLU()(h)
    c = layers.Concatenate()([h, layers.ZeroPadding2D(0)(h)])
    h = layers.GlobalAveragePooling2D()(c)
    out = layers.Dense(3, activation="softmax")(h)
    model = Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    before = model.evaluate(x, y)[0]
    model.fit(x, y, batch_size=16, epochs=8, verbose=0)
    assert model.evaluate(x, y)[0] < before


def test_summary_matches_keras_counts(capsys):
    model = Sequential([layers.Input((32, 32, 3)),
                        layers.Conv2D(32, 3, padding="same", activation="relu"),
                        layers.MaxPooling2D(2), layers.Flatten(),
                        layers.Dense(10, activation="softmax")])
    model.summary()
    text = capsys.readouterr().out
    assert "(None, 32, 32, 32)" in text and "896" in text
    assert "(None, 8192)" in text and "81,930" in text or "81930" in text
    assert "Total params: 82,826" in text


def test_save_load_round_trip_and_resume(tmp_path):
    x, y = images()
    model = small_cnn()
    model.compile(optimizer=optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    path = tmp_path / "m.minidl"
    model.save(path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert loaded.optimizer.iterations == model.optimizer.iterations
    assert loaded.trained_epochs == 2
    for a, b in zip(loaded.optimizer.get_state(loaded.backend).values(),
                    model.optimizer.get_state(model.backend).values()):
        np.testing.assert_array_equal(a, b)
    # training resumes identically: same batches, same dropout masks, same updates
    model.fit(x, y, batch_size=16, epochs=4, initial_epoch=2, verbose=0)
    loaded.fit(x, y, batch_size=16, epochs=4, initial_epoch=2, verbose=0)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_resumed_run_equals_uninterrupted(tmp_path):
    x, y = images()
    minidl.set_seed(5)
    a = small_cnn()
    a.compile(optimizer=optimizers.SGD(0.05, momentum=0.9), loss="sparse_categorical_crossentropy")
    a.save(tmp_path / "init.minidl")
    a.fit(x, y, batch_size=16, epochs=3, verbose=0)
    b = load_model(tmp_path / "init.minidl")
    b.fit(x, y, batch_size=16, epochs=1, verbose=0,
          callbacks=[callbacks.ModelCheckpoint(str(tmp_path / "ckpt.minidl"))])
    c = load_model(tmp_path / "ckpt.minidl")
    c.fit(x, y, batch_size=16, epochs=3, initial_epoch=c.trained_epochs, verbose=0)
    for wa, wc in zip(a.get_weights(), c.get_weights()):
        np.testing.assert_array_equal(wa, wc)


def test_corrupted_and_truncated_files_raise_clear_errors(tmp_path):
    model = small_cnn()
    path = tmp_path / "m.minidl"
    model.save(path)
    data = path.read_bytes()
    (tmp_path / "trunc.minidl").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="trunc.minidl"):
        load_model(tmp_path / "trunc.minidl")
    (tmp_path / "junk.minidl").write_bytes(b"not a model at all")
    with pytest.raises(ModelFileError, match="junk.minidl"):
        load_model(tmp_path / "junk.minidl")
    with zipfile.ZipFile(tmp_path / "foreign.minidl", "w") as z:
        z.writestr("minidl_model.json", json.dumps({"format": "something-else", "version": 1}))
    with pytest.raises(ModelFileError, match="something-else"):
        load_model(tmp_path / "foreign.minidl")
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.minidl")


def test_failed_save_leaves_previous_file_intact(tmp_path, monkeypatch):
    model = small_cnn()
    path = tmp_path / "m.minidl"
    model.save(path)
    before = path.read_bytes()
    from minidl.models import minidl_files

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")
    monkeypatch.setattr(minidl_files, "_npz_bytes", boom)
    with pytest.raises(RuntimeError):
        model.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.minidl"]


def test_weights_api_and_shape_errors(tmp_path):
    model = small_cnn()
    weights = model.get_weights()
    assert weights[0].shape == (3, 3, 2, 4) and weights[1].shape == (4,)
    model.set_weights(weights)
    bad = list(weights)
    bad[0] = np.zeros((3, 3, 2, 5))
    with pytest.raises(ValueError, match=r"conv2d.*kernel.*\(3, 3, 2, 4\).*\(3, 3, 2, 5\)"):
        model.set_weights(bad)
    model.save_weights(tmp_path / "w.minidl")
    other = small_cnn()
    other.load_weights(tmp_path / "w.minidl")
    for a, b in zip(other.get_weights(), weights):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="weight arrays"):
        model.set_weights(weights[:-1])


def test_clear_errors_for_bad_input():
    model = small_cnn()
    x, y = images(8)
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, y)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match=r"\(None, 8, 8, 2\).*\(8, 8, 8, 3\)"):
        model.fit(np.zeros((8, 8, 8, 3)), y, verbose=0)
    with pytest.raises(ValueError, match=r"class labels must be in \[0, 2\]"):
        model.fit(x, y + 3, verbose=0)
    with pytest.raises(ValueError, match="same length"):
        model.fit(x, y[:5], verbose=0)
    bad = x.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.fit(bad, y, verbose=0)
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(x, y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match="non-empty"):
        model.predict(np.zeros((0, 8, 8, 2)))
    with pytest.raises(ValueError, match="Dense 'boom'.*units"):
        layers.Dense(0, name="boom")
    with pytest.raises(ValueError, match="Conv2D.*rank 4.*\\(None, 10\\)"):
        Sequential([layers.Input((10,)), layers.Conv2D(2, 3)])


def test_callbacks_drive_training(tmp_path):
    x, y = blobs(200)
    model = Sequential([layers.Input((4,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    csv = tmp_path / "log.csv"
    history = model.fit(x, y, epochs=30, batch_size=50, verbose=0, validation_data=(x, y),
                        callbacks=[callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10),
                                   callbacks.CSVLogger(str(csv))])
    assert len(history.history["loss"]) == 2  # no improvement of 10 after the first epoch
    assert csv.read_text().count("\n") == 3


def test_terminate_on_nan_stops_divergent_training(capsys):
    x, y = blobs(100)
    model = Sequential([layers.Input((4,)), layers.Dense(3)])
    model.compile(optimizer=optimizers.SGD(1e12), loss="mse")
    history = model.fit(x * 1e6, np.ones((100, 3)), epochs=5, batch_size=10, verbose=0,
                        callbacks=[callbacks.TerminateOnNaN()])
    assert len(history.history.get("loss", [])) <= 1
    assert "invalid loss" in capsys.readouterr().out


def test_set_backend_errors_name_the_alternatives():
    with pytest.raises(ValueError, match="unknown backend 'cuda'.*numpy"):
        minidl.set_backend("cuda")
    assert "numpy" in minidl.available_backends()


def test_validation_without_metrics():
    x, y = blobs(64)
    model = Sequential([layers.Input((4,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, epochs=2, verbose=0, validation_data=(x, y))
    assert len(history.history["val_loss"]) == 2


def test_saved_files_get_normal_permissions(tmp_path):
    import os
    model = small_cnn()
    model.save(tmp_path / "m.minidl")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "m.minidl").stat().st_mode & 0o777 == 0o666 & ~mask


def test_dropout_seed_argument_fixes_the_masks():
    x, y = images(32)

    def run(model_seed, dropout_seed):
        minidl.set_seed(model_seed)
        model = Sequential([layers.Input((8, 8, 2)), layers.Flatten(),
                            layers.Dropout(0.5, seed=dropout_seed), layers.Dense(3)])
        minidl.set_seed(0)
        model.set_weights([np.ones((128, 3)) * 0.01, np.zeros(3)])
        model.compile(optimizer="sgd", loss="mse")
        model.train_on_batch(x, np.ones((32, 3)))
        return model.get_weights()[0]

    np.testing.assert_array_equal(run(1, 7), run(2, 7))       # same Dropout seed, same masks
    assert not np.array_equal(run(1, None), run(2, None))     # else the model's seed decides
    with pytest.raises(ValueError, match="seed"):
        layers.Dropout(0.5, seed=-1)


@pytest.mark.parametrize("make, argument", [
    (lambda: callbacks.EarlyStopping(min_delta="x"), "min_delta"),
    (lambda: callbacks.ModelCheckpoint(5), "filepath"),
    (lambda: callbacks.CSVLogger(None), "filename"),
    (lambda: callbacks.ReduceLROnPlateau(factor=float("nan")), "factor"),
])
def test_callback_arguments_are_checked(make, argument):
    with pytest.raises((TypeError, ValueError), match=argument):
        make()


def test_fit_with_iterator_refuses_a_batch_size():
    from minidl.data import ArrayIterator
    x, y = images(32)
    model = small_cnn()
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="batch_size must be None"):
        model.fit(ArrayIterator(x, y, batch_size=8), batch_size=8, verbose=0)


def test_automatic_names_follow_keras_3():
    from minidl import naming
    saved = dict(naming._counters)
    naming._counters.clear()
    try:
        inp = layers.Input((4,))
        functional = [Model(inp, layers.Dense(2)(inp)) for _ in range(2)]
        stacks = [Sequential([layers.Input((4,)), layers.Dense(2)]) for _ in range(2)]
        assert [m.name for m in functional] == ["functional", "functional_1"]
        assert [m.name for m in stacks] == ["sequential", "sequential_1"]
        assert [l.name for m in functional + stacks for l in m.layers] == \
            ["input_layer", "dense", "input_layer", "dense_1", "dense_2", "dense_3"]
        assert inp.layer.name == "input_layer"
    finally:
        naming._counters.clear()
        naming._counters.update(saved)


def test_input_accepts_float32_and_integer_indices_only():
    assert layers.Input((3,), dtype=np.float32).shape == (None, 3)  # Keras 3: batch axis included
    assert layers.Input((3,), dtype=None).shape == (None, 3)
    assert layers.Input((3,), dtype="int32").dtype == "int32"   # indices for an Embedding
    for dtype in ("float64", "bogus"):
        with pytest.raises(TypeError, match=f"Input: dtype must be 'float32'.*{dtype}"):
            layers.Input((3,), dtype=dtype)


def test_models_rebuild_from_their_config():
    model = small_cnn()
    rebuilt = Sequential.from_config(model.get_config())
    assert [type(l) for l in rebuilt.layers] == [type(l) for l in model.layers]
    inp = layers.Input((4,))
    h = layers.Dense(3)(inp)
    functional = Model(inp, layers.Add()([h, layers.Dense(3)(h)]), name="res")
    again = Model.from_config(functional.get_config())
    assert again.name == "res" and again.get_config()["layers"] == functional.get_config()["layers"]
