"""imdb, reuters, fashion_mnist, cifar100, boston_housing and california_housing against Keras 3.15.1.

tests/fixtures/keras_datasets/files holds small files in Keras's formats and expected.json what
Keras's own loaders returned for them (make_fixtures.py wrote both). Here minidl reads the same
files, found through MINIDL_DATA_DIR, and must return the same arrays.
"""

import hashlib
import io
import json
import os
import pickle
import shutil
import zipfile

import numpy as np
import pytest

from minidl import settings
from minidl.datasets import (boston_housing, california_housing, cifar100, fashion_mnist, imdb,
                             reuters)
from minidl.datasets.cifar10 import CorruptDatasetError, DatasetNotFoundError

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_datasets")
FILES = os.path.join(HERE, "files")
with open(os.path.join(HERE, "expected.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)
MODULES = dict(imdb=imdb, reuters=reuters, boston_housing=boston_housing,
               california_housing=california_housing, cifar100=cifar100, fashion_mnist=fashion_mnist)


@pytest.fixture
def env(monkeypatch, tmp_path):
    """set(**variables): change the environment (offline, empty caches by default) and re-read
    minidl's settings; the old environment and settings come back after the test."""
    def set_env(**variables):
        for name, value in variables.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, str(value))
        settings.reload()

    set_env(MINIDL_DATA_DIR=None, MINIDL_HOME=tmp_path / "home", KERAS_HOME=tmp_path / "keras",
            https_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")  # refused: offline
    yield set_env
    monkeypatch.undo()
    settings.reload()


@pytest.fixture
def data_dir(env):
    """MINIDL_DATA_DIR at the fixture files."""
    env(MINIDL_DATA_DIR=FILES)
    return FILES


def assert_like_keras(ours, expected, where):
    if isinstance(expected, dict):
        assert isinstance(ours, np.ndarray), where
        assert str(ours.dtype) == expected["dtype"], where
        assert list(ours.shape) == expected["shape"], where
        if "sha256" in expected:
            digest = hashlib.sha256(np.ascontiguousarray(ours).tobytes()).hexdigest()
            assert digest == expected["sha256"], where
        elif ours.dtype == object:
            assert [list(map(int, x)) for x in ours.tolist()] == expected["values"], where
            assert all(type(w) is int for x in ours.tolist() for w in x), where
        else:
            np.testing.assert_array_equal(ours, np.array(expected["values"], dtype=ours.dtype)
                                          .reshape(expected["shape"]),
                                          err_msg=where)
    else:
        assert len(ours) == len(expected), where
        for i, (o, e) in enumerate(zip(ours, expected)):
            assert_like_keras(o, e, f"{where}[{i}]")


CASES = [(name, case) for name in MODULES for case in EXPECTED[name]]


@pytest.mark.parametrize("name,case", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_same_arrays_as_keras(data_dir, name, case):
    entry = EXPECTED[name][case]
    ours = MODULES[name].load_data(**entry["kwargs"])
    assert_like_keras(ours, entry["result"], f"{name}.load_data(**{entry['kwargs']})")


def test_word_indices_and_label_names(data_dir):
    assert imdb.get_word_index() == EXPECTED["imdb_word_index"]
    assert reuters.get_word_index() == EXPECTED["reuters_word_index"]
    assert list(reuters.get_label_names()) == EXPECTED["reuters_label_names"]


def test_found_in_the_keras_cache(env, tmp_path):
    shutil.copytree(FILES, tmp_path / "keras" / "datasets")
    (x, _), _ = imdb.load_data()
    assert len(x) == EXPECTED["imdb"]["defaults"]["result"][0][0]["shape"][0]
    (x, y), _ = fashion_mnist.load_data()
    assert x.shape[1:] == (28, 28)


def test_cifar100_found_as_keras3_extracts_it_and_as_a_tarball(env, tmp_path):
    import tarfile
    nested = tmp_path / "nested"
    shutil.copytree(os.path.join(FILES, "cifar-100-python"),
                    nested / "cifar-100-python-target" / "cifar-100-python")
    env(MINIDL_DATA_DIR=nested)
    expected = cifar100.load_data()
    tar_dir = tmp_path / "tar"
    tar_dir.mkdir()
    with tarfile.open(tar_dir / "cifar-100-python.tar.gz", "w:gz") as archive:
        archive.add(os.path.join(FILES, "cifar-100-python"), arcname="cifar-100-python")
    env(MINIDL_DATA_DIR=tar_dir)
    got = cifar100.load_data()
    for a, b in zip(np.concatenate([np.ravel(v) for s in expected for v in s]),
                    np.concatenate([np.ravel(v) for s in got for v in s])):
        assert a == b


def test_offline_error_says_where_to_put_the_file(env, tmp_path):
    with pytest.raises(DatasetNotFoundError, match="imdb.npz.*MINIDL_DATA_DIR") as info:
        imdb.load_data()
    assert str(tmp_path / "keras" / "datasets" / "imdb.npz") in info.value.searched
    with pytest.raises(DatasetNotFoundError, match="train-labels-idx1-ubyte.gz"):
        fashion_mnist.load_data()


def test_argument_errors_name_the_argument(data_dir):
    with pytest.raises(ValueError, match="label_mode"):
        cifar100.load_data(label_mode="medium")
    with pytest.raises(ValueError, match="test_split"):
        boston_housing.load_data(test_split=1.0)
    with pytest.raises(ValueError, match="version"):
        california_housing.load_data(version="tiny")
    with pytest.raises(ValueError, match="num_words"):
        imdb.load_data(num_words=-1)
    with pytest.raises(ValueError, match="maxlen"):
        imdb.load_data(maxlen=1)    # every review is at least 2 words long with its start_char


class Boom:
    """Unpickling this would run os.system."""
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def _npz(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name + ".npy", data)


def _npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _object_npy_with_pickle(payload, n=1):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|O", "fortran_order": False, "shape": (n,)})
    return header.getvalue() + payload


def _objects(*lists):
    out = np.empty(len(lists), dtype=object)
    out[:] = list(lists)
    return out


def test_a_pickle_that_runs_code_is_refused(tmp_path):
    path = tmp_path / "reuters.npz"
    _npz(path, {"x": _object_npy_with_pickle(pickle.dumps(Boom(), protocol=2)),
                "y": _npy(np.array([1]))})
    with pytest.raises(CorruptDatasetError, match="refusing the global 'posix.system'|refusing"):
        reuters.load_data(path=str(path))


@pytest.mark.parametrize("items", [
    [[1, 2], "a word"],          # a str among the ints
    [[1.5, 2]],                  # a float
    [[[1, 2]]],                  # lists nested too deep
], ids=["str", "float", "nested"])
def test_object_arrays_of_anything_but_int_lists_are_refused(tmp_path, items):
    path = tmp_path / "reuters.npz"
    _npz(path, {"x": _npy(_objects(*items)), "y": _npy(np.zeros(len(items), dtype=np.int64))})
    with pytest.raises(CorruptDatasetError):
        reuters.load_data(path=str(path))


def test_a_list_repeated_through_the_memo_is_refused(tmp_path):
    shared = [1, 2, 3]
    path = tmp_path / "reuters.npz"
    _npz(path, {"x": _npy(_objects(shared, shared)), "y": _npy(np.zeros(2, dtype=np.int64))})
    with pytest.raises(CorruptDatasetError, match="memo"):
        reuters.load_data(path=str(path))


def test_a_member_larger_than_allowed_is_refused_unread(tmp_path, monkeypatch):
    from minidl.datasets import reuters as module
    path = tmp_path / "reuters.npz"
    _npz(path, {"x": _npy(_objects([1, 2], [3])), "y": _npy(np.zeros(2, dtype=np.int64))})
    monkeypatch.setattr(module, "MAX_MEMBER_BYTES", 64)
    with pytest.raises(CorruptDatasetError, match="more than"):
        module.load_data(path=str(path))


def test_counts_and_shapes_are_checked(tmp_path):
    path = tmp_path / "imdb.npz"
    _npz(path, {"x_train": _npy(_objects([1, 2], [3])), "y_train": _npy(np.zeros(3, dtype=np.int64)),
                "x_test": _npy(_objects([1])), "y_test": _npy(np.zeros(1, dtype=np.int64))})
    with pytest.raises(CorruptDatasetError, match="2 sequences but y_train 3"):
        imdb.load_data(path=str(path))
    path = tmp_path / "boston.npz"
    np.savez(path, x=np.zeros((3, 12)), y=np.zeros(3))
    with pytest.raises(CorruptDatasetError, match=r"expected \(n, 13\)"):
        boston_housing.load_data(path=str(path))


def test_a_fashion_file_that_lies_about_its_count_is_refused(env, tmp_path):
    import gzip
    import struct
    folder = tmp_path / "fashion-mnist"
    shutil.copytree(os.path.join(FILES, "fashion-mnist"), folder)
    with gzip.open(folder / "train-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, 10**9, 28, 28) + bytes(784))
    env(MINIDL_DATA_DIR=tmp_path)
    with pytest.raises(CorruptDatasetError, match="at most 60000"):
        fashion_mnist.load_data()
