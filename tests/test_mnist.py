"""minidl.datasets.mnist: Keras's mnist.npz read without unpickling, checked before it is read."""

import io
import os
import zipfile

import numpy as np
import pytest

from minidl import settings
from minidl.datasets import mnist
from minidl.datasets.cifar10 import CorruptDatasetError, DatasetNotFoundError


def write_npz(path, compressed=True, **arrays):
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    return path


def small_mnist(rng, n_train=12, n_test=5):
    return {"x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
            "y_train": rng.integers(0, 10, n_train).astype(np.uint8),
            "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
            "y_test": rng.integers(0, 10, n_test).astype(np.uint8)}


def test_shard_gives_each_rank_its_part(tmp_path):
    arrays = small_mnist(np.random.default_rng(1), n_train=12, n_test=5)
    path = write_npz(tmp_path / "mnist.npz", **arrays)
    (x, y), (xt, yt) = mnist.load_data(str(path), shard=(1, 2))
    np.testing.assert_array_equal(x, arrays["x_train"][1:12:2])
    np.testing.assert_array_equal(y, arrays["y_train"][1:12:2])
    np.testing.assert_array_equal(xt, arrays["x_test"][1:4:2])   # 5 samples: 2 each
    with pytest.raises(ValueError, match="shard must be"):
        mnist.load_data(str(path), shard=3)


@pytest.mark.parametrize("compressed", [True, False])
def test_reads_an_npz_in_keras_layout(tmp_path, compressed):
    arrays = small_mnist(np.random.default_rng(0))
    path = write_npz(tmp_path / "mnist.npz", compressed, **arrays)
    (x, y), (xt, yt) = mnist.load_data(str(path))
    for got, key in ((x, "x_train"), (y, "y_train"), (xt, "x_test"), (yt, "y_test")):
        np.testing.assert_array_equal(got, arrays[key])
        assert got.dtype == np.uint8 and got.flags.writeable


def test_a_file_name_is_found_in_minidl_data_dir(tmp_path, monkeypatch):
    write_npz(tmp_path / "mnist.npz", **small_mnist(np.random.default_rng(1)))
    monkeypatch.setenv("MINIDL_DATA_DIR", str(tmp_path))
    settings.reload()
    try:
        (x, _), _ = mnist.load_data()
    finally:
        monkeypatch.delenv("MINIDL_DATA_DIR")
        settings.reload()
    assert x.shape == (12, 28, 28)


def test_offline_error_says_where_to_put_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")     # refuses at once: offline
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    settings.reload()
    try:
        with pytest.raises(DatasetNotFoundError, match="Copy Keras's mnist.npz") as info:
            mnist.load_data()
    finally:
        monkeypatch.delenv("MINIDL_HOME")
        settings.reload()
    assert info.value.url == mnist.URL
    assert not os.listdir(tmp_path / "home" / "datasets")   # nothing half-written


@pytest.mark.parametrize("change", ["extra_member", "object_dtype", "float_images", "wrong_size",
                                    "too_many", "label_10", "missing"])
def test_malformed_files_are_refused(tmp_path, change):
    arrays = small_mnist(np.random.default_rng(2))
    if change == "extra_member":
        arrays["junk"] = np.zeros(3, np.uint8)
    elif change == "float_images":
        arrays["x_train"] = arrays["x_train"].astype(np.float32)
    elif change == "wrong_size":
        arrays["x_test"] = np.zeros((5, 32, 32), np.uint8)
    elif change == "too_many":
        arrays["y_test"] = np.zeros(10001, np.uint8)
        arrays["x_test"] = np.zeros((10001, 28, 28), np.uint8)
    elif change == "label_10":
        arrays["y_train"][3] = 10
    elif change == "missing":
        del arrays["y_test"]
    if change == "object_dtype":
        buffer = io.BytesIO()
        np.save(buffer, np.array([object()], dtype=object), allow_pickle=True)
        path = write_npz(tmp_path / "mnist.npz", **arrays)
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("y_extra.npy", buffer.getvalue())
    else:
        path = write_npz(tmp_path / "mnist.npz", **arrays)
    with pytest.raises(CorruptDatasetError, match="MNIST"):
        mnist.load_data(str(path))


def test_a_huge_file_is_refused_unread(tmp_path):
    path = tmp_path / "mnist.npz"
    with open(path, "wb") as f:
        f.truncate(mnist.MAX_FILE_BYTES + 1)
    with pytest.raises(CorruptDatasetError, match="not read"):
        mnist.load_data(str(path))


def test_a_missing_path_names_it(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="does not exist"):
        mnist.load_data(str(tmp_path / "nowhere" / "mnist.npz"))
