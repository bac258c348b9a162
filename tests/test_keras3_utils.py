"""keras.utils names on minidl, with the values and messages Keras 3.15.1 gives for the same
calls; PyDataset / Sequence / generators through fit, evaluate and predict on every backend."""

import math
import threading
import time

import numpy as np
import pytest

import minidl
from minidl import layers, utils


def test_pack_and_unpack_x_y_sample_weight():
    assert utils.pack_x_y_sample_weight(1) == 1
    assert utils.pack_x_y_sample_weight(1, 2) == (1, 2)
    assert utils.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    assert utils.pack_x_y_sample_weight((1, 2)) == ((1, 2),)
    assert utils.unpack_x_y_sample_weight(1) == (1, None, None)
    assert utils.unpack_x_y_sample_weight((1,)) == (1, None, None)
    assert utils.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    assert utils.unpack_x_y_sample_weight((1, 2, 3)) == (1, 2, 3)
    assert utils.unpack_x_y_sample_weight([1, 2]) == (1, 2, None)
    with pytest.raises(ValueError, match=r"Data is expected to be in format `x`, `\(x,\)`"):
        utils.unpack_x_y_sample_weight((1, 2, 3, 4))


@pytest.mark.parametrize("dtype, name", [("int", "int32"), ("float64", "float64"),
                                         (np.float32, "float32"), ("bool", "bool"),
                                         (None, "float32"), ("string", "string"),
                                         (np.dtype("int64"), "int64"), (int, "int32"),
                                         (float, "float32"), ("uint32", "uint32")])
def test_standardize_dtype(dtype, name):
    assert utils.standardize_dtype(dtype) == name
    assert minidl.backend.standardize_dtype(dtype) == name


@pytest.mark.parametrize("dtype", ["float", "double", "half", "str"])
def test_standardize_dtype_refuses_what_keras_refuses(dtype):
    with pytest.raises(ValueError, match=f"Invalid dtype: {dtype}"):
        utils.standardize_dtype(dtype)


def test_backend_dtype_questions():
    K = minidl.backend
    assert [K.is_float_dtype(d) for d in ("float16", "bfloat16", "uint8", "bool", "int")] == \
        [True, True, False, False, False]
    assert [K.is_int_dtype(d) for d in ("float16", "uint8", "int8", "bool", "int")] == \
        [False, True, True, False, True]
    assert K.result_type("int32", "float32") == "float32"
    assert K.result_type("int8", "uint8") == "int16"
    assert K.result_type("float16", "bfloat16") == "float32"
    assert K.result_type("int64", "float16") == "float16"
    assert K.result_type("bool", "int8") == "int8"
    assert K.result_type() == "float32"
    first = K.get_uid("utils_test")
    assert K.get_uid("utils_test") == first + 1


def test_config():
    c = utils.Config(a=1, b=2)
    c.c = 3
    assert repr(c) == "<Config {'a': 1, 'b': 2, 'c': 3}>"
    assert c["a"] == 1 and c.b == 2 and len(c) == 3 and list(c.keys()) == ["a", "b", "c"]
    assert c.as_dict() == {"a": 1, "b": 2, "c": 3} and c.to_json() == '{"a": 1, "b": 2, "c": 3}'
    c.freeze()
    assert c.frozen
    with pytest.raises(ValueError, match="Cannot mutate attribute"):
        c.d = 4
    with pytest.raises(ValueError, match="Cannot mutate attribute"):
        c["a"] = 4
    c.unfreeze()
    c["d"] = 4
    assert c.d == 4
    with pytest.raises(AttributeError):
        c.missing


def test_interactive_logging_switch(capsys):
    assert utils.is_interactive_logging_enabled()
    utils.disable_interactive_logging()
    try:
        assert not utils.is_interactive_logging_enabled()
        bar = utils.Progbar(3)
        bar.update(3, [("loss", 1.0)])
        assert capsys.readouterr().out == ""
    finally:
        utils.enable_interactive_logging()
    assert utils.is_interactive_logging_enabled()


def test_is_keras_tensor_and_get_source_inputs():
    x = minidl.Input((3,))
    x2 = minidl.Input((2,))
    y = layers.Dense(2)(x)
    z = layers.Concatenate()([layers.Dense(1)(y), x2])
    assert utils.is_keras_tensor(x) and not utils.is_keras_tensor(np.ones(2))
    assert minidl.backend.is_keras_tensor(y)
    sources = utils.get_source_inputs(z)
    assert len(sources) == 2 and sources[0] is x and sources[1] is x2
    assert utils.get_source_inputs(x)[0] is x


def test_split_dataset():
    left, right = utils.split_dataset(np.arange(10), left_size=0.8)
    np.testing.assert_array_equal(left, np.arange(8))
    np.testing.assert_array_equal(right, [8, 9])
    (lx, ly), (rx, ry) = utils.split_dataset((np.arange(10), np.arange(10) * 2), left_size=3,
                                             shuffle=True, seed=1)
    assert len(lx) == 3 and len(rx) == 7
    np.testing.assert_array_equal(ly, lx * 2)
    assert sorted(np.concatenate([lx, rx]).tolist()) == list(range(10))
    left, right = utils.split_dataset({"a": np.arange(4)}, right_size=1)
    assert len(left["a"]) == 3 and len(right["a"]) == 1
    with pytest.raises(ValueError, match="left_size"):
        utils.split_dataset(np.arange(4), left_size=1.5)


def test_progbar_averages_stateless_metrics_and_shows_stateful_ones(capsys):
    # Keras: the final update shows the values given; the others average stateless metrics
    bar = utils.Progbar(4, stateful_metrics=["acc"], verbose=2)
    bar.update(1, [("loss", 4.0), ("acc", 0.1)])
    bar.update(4, [("loss", 0.0), ("acc", 0.9)])
    out = capsys.readouterr().out
    assert out.startswith("4/4 - 0s - ") and out.endswith(" - loss: 0.0000e+00 - acc: 0.9000\n")
    bar = utils.Progbar(4, stateful_metrics=["acc"], interval=0)
    bar.update(1, [("loss", 4.0), ("acc", 0.1)])
    bar.update(3, [("loss", 1.0), ("acc", 0.5)])   # loss: (4 * 1 + 1 * 2) / 3 steps
    out = capsys.readouterr().out
    assert "\x1b[1m3/4\x1b[0m" in out and out.endswith(" - loss: 2.0000 - acc: 0.5000")
    bar = utils.Progbar(None)
    bar.add(2, [("loss", 0.5)])
    assert "      2/Unknown" in capsys.readouterr().out
    with pytest.raises(ValueError, match="Only one of `stateful_metrics` or `stateless_metrics`"):
        utils.Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


class _Batches(utils.PyDataset):
    """Batches of a regression problem; records which thread or process read each one."""

    def __init__(self, x, y, batch_size, delay=0.0, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.batch_size, self.delay = x, y, batch_size, delay
        self.epochs_begun = self.epochs_ended = 0
        self.readers = set()

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, idx):
        if self.delay:
            time.sleep(self.delay)
        self.readers.add(threading.get_ident())
        s = slice(idx * self.batch_size, (idx + 1) * self.batch_size)
        return self.x[s], self.y[s]

    def on_epoch_begin(self):
        self.epochs_begun += 1

    def on_epoch_end(self):
        self.epochs_ended += 1


def _data():
    rng = np.random.default_rng(0)
    x = rng.random((40, 4)).astype(np.float32)
    return x, x @ np.arange(1, 5, dtype=np.float32)[:, None]


def _model():
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


@pytest.mark.parametrize("workers, use_multiprocessing", [(1, False), (3, False), (2, True)])
def test_pydataset_through_fit_evaluate_predict(active_backend, workers, use_multiprocessing):
    x, y = _data()
    data = _Batches(x, y, 8, workers=workers, use_multiprocessing=use_multiprocessing)
    model = _model()
    history = model.fit(data, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert data.epochs_begun == 2 and data.epochs_ended == 2
    loss = model.evaluate(data, verbose=0)
    np.testing.assert_allclose(loss, model.evaluate(x, y, batch_size=8, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(model.predict(data, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5)


def test_pydataset_workers_read_in_parallel():
    x, y = _data()
    data = _Batches(x, y, 4, delay=0.05, workers=4)
    start = time.perf_counter()
    batches = list(data)
    elapsed = time.perf_counter() - start
    assert len(batches) == 10 and len(data.readers) > 1
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), x)  # in order
    assert elapsed < 10 * 0.05   # serial reading would take 0.5 s


def test_fit_shuffles_a_pydataset_s_batch_order():
    x, y = _data()
    seen = []

    class Recorder(_Batches):
        def __getitem__(self, idx):
            seen.append(idx)
            return super().__getitem__(idx)

    model = _model()
    model.fit(Recorder(x, y, 4), epochs=1, verbose=0, shuffle=True)
    assert sorted(seen) == list(range(10)) and seen != list(range(10))
    seen.clear()
    model.fit(Recorder(x, y, 4), epochs=1, verbose=0, shuffle=False)
    assert seen == list(range(10))


def test_sequence_is_pydataset_and_checks_its_arguments():
    assert utils.Sequence is utils.PyDataset
    with pytest.raises(ValueError, match="workers must be an int >= 0"):
        _Batches(*_data(), 4, workers=-1)
    with pytest.raises(ValueError, match="max_queue_size"):
        _Batches(*_data(), 4, max_queue_size=0)
    assert _Batches(*_data(), 8).num_batches == 5


def test_generators_of_x_y_sample_weight(active_backend):
    x, y = _data()

    def batches():
        while True:
            for i in range(0, 40, 10):
                yield x[i:i + 10], y[i:i + 10], np.ones(10, np.float32)

    model = _model()
    history = model.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert np.isfinite(model.evaluate(batches(), steps=4, verbose=0))
    assert model.predict((b[0] for b in batches()), steps=2, verbose=0).shape == (20, 1)
    with pytest.raises(ValueError, match="pass steps_per_epoch"):
        model.fit(batches(), epochs=1, verbose=0)


def test_clear_session_restarts_the_automatic_names():
    utils.clear_session()
    assert layers.Dense(1).name == "dense"
    assert minidl.backend.clear_session is utils.clear_session


def test_pad_sequences_as_keras():
    s = [[1], [2, 3], [4, 5, 6]]
    padded = utils.pad_sequences(s)
    assert padded.tolist() == [[0, 0, 1], [0, 2, 3], [4, 5, 6]] and padded.dtype == np.int32
    assert utils.pad_sequences(s, maxlen=2).tolist() == [[0, 1], [2, 3], [5, 6]]
    assert utils.pad_sequences(s, maxlen=2, truncating="post").tolist() == [[0, 1], [2, 3], [4, 5]]
    assert utils.pad_sequences(s, padding="post", value=-1).tolist() == \
        [[1, -1, -1], [2, 3, -1], [4, 5, 6]]
    assert utils.pad_sequences([[1.5, 2.5], [1]], dtype="float32").tolist() == [[1.5, 2.5], [0.0, 1.0]]
    assert utils.pad_sequences([[[1, 2]], [[3, 4], [5, 6]]]).shape == (2, 2, 2)
    assert utils.pad_sequences([[], [1]]).tolist() == [[0], [1]]
    assert utils.pad_sequences([], maxlen=3).shape == (0, 3)
    assert utils.pad_sequences([["a", "b"], ["c"]], dtype=object, value="").tolist() == \
        [["a", "b"], ["", "c"]]
    with pytest.raises(ValueError, match='Padding type "mid" not understood'):
        utils.pad_sequences(s, padding="mid")
    with pytest.raises(ValueError, match="`sequences` must be iterable."):
        utils.pad_sequences(3)
    with pytest.raises(ValueError, match=r"Shape of sample \(2,\) of sequence at position 1"):
        utils.pad_sequences([[1], [[1, 2]]])


def test_timeseries_dataset_from_array(active_backend):
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    targets = np.arange(10) * 10
    batches = list(utils.timeseries_dataset_from_array(data, targets, sequence_length=3,
                                                       sampling_rate=2, sequence_stride=2,
                                                       batch_size=2))
    assert [b[0].tolist() for b in batches] == [
        [[[0, 1], [4, 5], [8, 9]], [[4, 5], [8, 9], [12, 13]]], [[[8, 9], [12, 13], [16, 17]]]]
    assert [b[1].tolist() for b in batches] == [[0, 20], [40]]
    (x, y), = utils.timeseries_dataset_from_array(data, targets, 2, start_index=2, end_index=8,
                                                  batch_size=None)
    assert x[0].tolist() == [[4, 5], [6, 7]] and y.tolist() == [20, 30, 40, 50, 60]
    assert minidl.preprocessing.timeseries_dataset_from_array is utils.timeseries_dataset_from_array
    with pytest.raises(ValueError, match="`sampling_rate` must be higher than 0"):
        utils.timeseries_dataset_from_array(data, None, 2, sampling_rate=0)
    # a model trains on it directly
    model = minidl.Sequential([layers.Input((3, 2)), layers.Flatten(), layers.Dense(1)])
    model.compile("sgd", "mse")
    series = utils.timeseries_dataset_from_array(data / 20, targets[:, None] / 100.0, 3,
                                                 batch_size=4, shuffle=True, seed=1)
    assert np.isfinite(model.fit(series, epochs=1, verbose=0).history["loss"][0])


def test_a_pydataset_may_give_num_batches_instead_of_len():
    x, y = _data()

    class ByCount(utils.PyDataset):
        @property
        def num_batches(self):
            return 4

        def __getitem__(self, idx):
            return x[idx * 10:(idx + 1) * 10], y[idx * 10:(idx + 1) * 10]

    assert len(ByCount()) == 4
    assert len(_model().fit(ByCount(), epochs=2, verbose=0).history["loss"]) == 2


def _text_tree(root):
    for label, texts in (("neg", ["bad", "awful film"]), ("pos", ["good", "great", "fine"])):
        (root / label).mkdir()
        for i, text in enumerate(texts):
            (root / label / f"{i}.txt").write_text(text)
    (root / "pos" / "notes.md").write_text("not a .txt file")


def test_text_dataset_from_directory(tmp_path, capsys):
    _text_tree(tmp_path)
    data = utils.text_dataset_from_directory(tmp_path, batch_size=2, shuffle=False)
    assert capsys.readouterr().out == "Found 5 files belonging to 2 classes.\n"
    assert data.class_names == ["neg", "pos"] and len(data) == 3
    batches = list(data)
    assert [b[0].tolist() for b in batches] == [["bad", "awful film"], ["good", "great"], ["fine"]]
    assert [b[1].tolist() for b in batches] == [[0, 0], [1, 1], [1]]
    cut = utils.text_dataset_from_directory(tmp_path, batch_size=None, max_length=3,
                                            label_mode="categorical", shuffle=False, verbose=False)
    text, label = cut[1]
    assert text == "awf" and label.tolist() == [1.0, 0.0]
    train, val = utils.text_dataset_from_directory(tmp_path, validation_split=0.4, subset="both",
                                                   seed=3, verbose=False)
    assert len(train.file_paths) == 3 and len(val.file_paths) == 2
    assert not set(train.file_paths) & set(val.file_paths)
    assert minidl.preprocessing.text_dataset_from_directory is utils.text_dataset_from_directory
    with pytest.raises(ValueError, match='`label_mode` argument must be one of'):
        utils.text_dataset_from_directory(tmp_path, label_mode="sparse")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="No text files found in directory"):
        utils.text_dataset_from_directory(tmp_path / "empty", verbose=False)
