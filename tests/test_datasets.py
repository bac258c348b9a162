"""CIFAR-10 loader: official-format folders and tarballs written here, corrupt files, downloads."""

import hashlib
import io
import os
import pickle
import struct
import subprocess
import sys
import tarfile
from urllib.error import URLError

import numpy as np
import pytest

from minidl import settings
from minidl.datasets import _batch_pickle, cifar10

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PER_BATCH = 20
TEST_IMAGES = 10


def batch_dict(images, labels):
    """The dict of one official batch: images (n, 32, 32, 3) -> planar rows (n, 3072)."""
    data = np.ascontiguousarray(images.transpose(0, 3, 1, 2).reshape(len(images), -1))
    return {b"batch_label": b"test batch", b"labels": [int(v) for v in labels], b"data": data,
            b"filenames": [b"img%d.png" % i for i in range(len(images))]}


def make_images(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8), rng.integers(0, 10, size=n)


def write_official(root, per_batch=PER_BATCH, test=TEST_IMAGES, protocol=4):
    """root/cifar-10-batches-py/ in the official layout; returns the expected arrays."""
    folder = root / cifar10.FOLDER_NAME
    folder.mkdir(parents=True)
    xs, ys = [], []
    for b, name in enumerate(cifar10.TRAIN_FILES):
        images, labels = make_images(per_batch, seed=b)
        (folder / name).write_bytes(pickle.dumps(batch_dict(images, labels), protocol=protocol))
        xs.append(images)
        ys.append(labels)
    images, labels = make_images(test, seed=99)
    (folder / cifar10.TEST_FILE).write_bytes(pickle.dumps(batch_dict(images, labels),
                                                          protocol=protocol))
    (folder / "batches.meta").write_bytes(pickle.dumps({b"label_names": [b"airplane"]}, protocol=4))
    return (np.concatenate(xs), np.concatenate(ys)), (images, labels)


def write_tarball(root, target):
    """Pack root/cifar-10-batches-py into the tarball `target`; return its md5."""
    with tarfile.open(target, "w:gz") as tar:
        tar.add(root / cifar10.FOLDER_NAME, arcname=cifar10.FOLDER_NAME)
    return hashlib.md5(target.read_bytes()).hexdigest()


def check_loaded(loaded, expected):
    (x_train, y_train), (x_test, y_test) = loaded
    (ex_train, ey_train), (ex_test, ey_test) = expected
    assert x_train.shape == (5 * PER_BATCH, 32, 32, 3) and x_train.dtype == np.uint8
    assert x_test.shape == (TEST_IMAGES, 32, 32, 3) and x_test.dtype == np.uint8
    assert y_train.shape == (5 * PER_BATCH, 1) and y_train.dtype == np.uint8
    assert y_test.shape == (TEST_IMAGES, 1) and y_test.dtype == np.uint8
    assert x_train.flags.c_contiguous and x_test.flags.c_contiguous
    np.testing.assert_array_equal(x_train, ex_train)
    np.testing.assert_array_equal(x_test, ex_test)
    np.testing.assert_array_equal(y_train[:, 0], ey_train)
    np.testing.assert_array_equal(y_test[:, 0], ey_test)


def set_env(monkeypatch, name, value):
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    settings.reload()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Keep every test away from the real ~/.minidl and from the network."""
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path / "home"))
    set_env(monkeypatch, "MINIDL_DATA_DIR", None)

    def no_network(*args, **kwargs):
        raise URLError("network disabled in tests")

    monkeypatch.setattr(cifar10, "urlopen", no_network)
    yield
    monkeypatch.undo()
    settings.reload()


def test_planar_rows_become_height_width_channels(tmp_path):
    image = np.zeros((1, 32, 32, 3), dtype=np.uint8)
    image[0, 1, 2] = (10, 20, 30)  # one pixel at row 1, column 2
    row = batch_dict(image, [3])[b"data"][0]
    assert (row[1 * 32 + 2], row[1024 + 32 + 2], row[2048 + 32 + 2]) == (10, 20, 30)
    images, labels = cifar10._parse_batch(pickle.dumps(batch_dict(image, [3])), "x")
    np.testing.assert_array_equal(images, image)
    assert labels.tolist() == [3]


def test_loads_folder_from_path_data_dir_and_cache(tmp_path, monkeypatch):
    expected = write_official(tmp_path / "data")
    check_loaded(cifar10.load_data(tmp_path / "data"), expected)
    check_loaded(cifar10.load_data(tmp_path / "data" / cifar10.FOLDER_NAME), expected)
    set_env(monkeypatch, "MINIDL_DATA_DIR", str(tmp_path / "data"))
    check_loaded(cifar10.load_data(), expected)
    set_env(monkeypatch, "MINIDL_DATA_DIR", None)
    cache_expected = write_official(tmp_path / "home" / "datasets")
    check_loaded(cifar10.load_data(), cache_expected)


def test_loads_python2_era_pickles(tmp_path):
    """The official batches were written by Python 2: protocol 2, str as BINSTRING, numpy.core names."""

    class Python2Pickler(pickle._Pickler):
        dispatch = pickle._Pickler.dispatch.copy()

        def save_py2_str(self, obj):
            if len(obj) < 256:
                self.write(pickle.SHORT_BINSTRING + bytes([len(obj)]) + obj)
            else:
                self.write(pickle.BINSTRING + struct.pack("<i", len(obj)) + obj)
            self.memoize(obj)

        dispatch[bytes] = save_py2_str

    images, labels = make_images(4, seed=5)
    buffer = io.BytesIO()
    Python2Pickler(buffer, protocol=2).dump(batch_dict(images, labels))
    raw = buffer.getvalue().replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")
    assert b"cnumpy.core.multiarray\n_reconstruct" in raw and b"_codecs" not in raw
    got_images, got_labels = cifar10._parse_batch(raw, "py2 batch")
    np.testing.assert_array_equal(got_images, images)
    np.testing.assert_array_equal(got_labels, labels)


def test_tarball_with_matching_md5(tmp_path, monkeypatch):
    expected = write_official(tmp_path / "src")
    tarball = tmp_path / "data" / cifar10.TARBALL_NAME
    tarball.parent.mkdir()
    monkeypatch.setattr(cifar10, "TARBALL_MD5", write_tarball(tmp_path / "src", tarball))
    check_loaded(cifar10.load_data(tarball), expected)
    check_loaded(cifar10.load_data(tmp_path / "data"), expected)


def test_tarball_md5_mismatch_names_the_file(tmp_path):
    write_official(tmp_path / "src")
    tarball = tmp_path / cifar10.TARBALL_NAME
    write_tarball(tmp_path / "src", tarball)
    with pytest.raises(cifar10.CorruptDatasetError, match=f"{tarball}.*md5"):
        cifar10.load_data(tarball)


def test_truncated_tarball(tmp_path, monkeypatch):
    write_official(tmp_path / "src")
    tarball = tmp_path / cifar10.TARBALL_NAME
    write_tarball(tmp_path / "src", tarball)
    tarball.write_bytes(tarball.read_bytes()[:2000])
    monkeypatch.setattr(cifar10, "TARBALL_MD5", hashlib.md5(tarball.read_bytes()).hexdigest())
    with pytest.raises(cifar10.CorruptDatasetError, match=str(tarball)):
        cifar10.load_data(tarball)


def test_truncated_batch_names_the_file(tmp_path):
    write_official(tmp_path)
    path = tmp_path / cifar10.FOLDER_NAME / "data_batch_3"
    path.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(cifar10.CorruptDatasetError, match="data_batch_3.*truncated"):
        cifar10.load_data(tmp_path)


def test_missing_batch_names_the_file(tmp_path):
    write_official(tmp_path)
    (tmp_path / cifar10.FOLDER_NAME / "test_batch").unlink()
    (tmp_path / cifar10.FOLDER_NAME / "data_batch_5").unlink()
    with pytest.raises(cifar10.CorruptDatasetError, match="data_batch_5 is missing"):
        cifar10.load_data(tmp_path)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update({b"data": d[b"data"][:, :3000]}), r"shape \(n, 3072\).*\(20, 3000\)"),
    (lambda d: d.update({b"data": d[b"data"].astype(np.float32)}), "uint8"),
    (lambda d: d.update({b"labels": d[b"labels"][:-1]}), "20 ints"),
    (lambda d: d.update({b"labels": [10] + d[b"labels"][1:]}), r"0\.\.9, found \[10\]"),
    (lambda d: d.update({b"labels": [-1] + d[b"labels"][1:]}), r"0\.\.9, found \[-1\]"),
    (lambda d: d.pop(b"labels"), "lacks"),
])
def test_malformed_batch_names_the_file(tmp_path, change, message):
    write_official(tmp_path)
    path = tmp_path / cifar10.FOLDER_NAME / "data_batch_2"
    batch = pickle.loads(path.read_bytes())
    change(batch)
    path.write_bytes(pickle.dumps(batch, protocol=4))
    with pytest.raises(cifar10.CorruptDatasetError, match=f"data_batch_2.*{message}"):
        cifar10.load_data(tmp_path)


class RunsCode:
    """Unpickling this calls os.system, which would create the marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_malicious_pickle_runs_nothing(tmp_path):
    marker = tmp_path / "marker"
    evil = pickle.dumps({b"pad": bytes(4000), b"data": RunsCode(marker), b"labels": [1]}, protocol=4)
    # the check itself: plain pickle would run the command
    write_official(tmp_path / "data")
    (tmp_path / "data" / cifar10.FOLDER_NAME / "data_batch_1").write_bytes(evil)
    with pytest.raises(cifar10.CorruptDatasetError, match="data_batch_1.*refusing.*(posix|os).system"):
        cifar10.load_data(tmp_path / "data")
    assert not marker.exists()
    pickle.loads(evil)
    assert marker.exists()


@pytest.mark.parametrize("payload", [
    pickle.dumps({b"f": eval}, protocol=4),
    pickle.dumps({b"f": np.load}, protocol=2),
    pickle.dumps({b"f": list}, protocol=5),
    b"\x80\x02cbuiltins\neval\n(S'1+1'\ntR.",
    b"\x80\x02cos\nsystem\n(S'true'\ntR.",
])
def test_batch_reader_refuses_other_globals(payload):
    with pytest.raises(_batch_pickle.PickleFormatError, match="refusing"):
        _batch_pickle.loads(payload)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_batch_reader_loads_arrays_and_plain_values(protocol):
    value = {b"a": np.arange(6, dtype=np.uint8).reshape(2, 3), "b": [1, 2.5, "s", b"t", None, True],
             "c": np.array([1, -2], dtype=">i4"), "d": np.arange(4, dtype=np.int64).reshape(2, 2).T,
             b"e": b"", b"f": 2 ** 40, b"g": b"\xff\x00" * 300}
    got = _batch_pickle.loads(pickle.dumps(value, protocol=protocol))
    assert got.keys() == value.keys()
    for key in (b"a", "c", "d"):
        assert got[key].dtype.kind == value[key].dtype.kind and got[key].shape == value[key].shape
        np.testing.assert_array_equal(got[key], value[key])
    assert [got[k] for k in ("b", b"e", b"f", b"g")] == [value[k] for k in ("b", b"e", b"f", b"g")]


def test_loads_python3_protocol2_batches(tmp_path):
    """Python 3's protocol 2 writes bytes as _codecs.encode(text, 'latin1') calls."""
    expected = write_official(tmp_path, protocol=2)
    assert b"_codecs\nencode" in (tmp_path / cifar10.FOLDER_NAME / "test_batch").read_bytes()
    check_loaded(cifar10.load_data(tmp_path), expected)


# Hand-written pickles of the shapes attacks take, built from opcodes.
def _text(value):
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def _raw(data):
    return b"B" + struct.pack("<I", len(data)) + data


def _int(value):
    return b"J" + struct.pack("<i", value)


def _global(module, name):
    return f"c{module}\n{name}\n".encode()


def _dtype(name, state_flags=0, elsize=-1):
    return (_global("numpy", "dtype") + _text(name) + b"\x89\x88\x87R(" + _int(3) + _text("|")
            + b"NNN" + _int(elsize) + _int(-1) + _int(state_flags) + b"tb")


def _array(shape, code=b"b", state=None):
    """_reconstruct(ndarray, shape, code), then BUILD with `state` (opcodes) when given."""
    head = (_global("numpy.core.multiarray", "_reconstruct") + _global("numpy", "ndarray")
            + b"(" + b"".join(_int(d) for d in shape) + b"t" + _raw(code) + b"\x87R")
    return head + (b"(" + state + b"tb" if state is not None else b"")


def _batch(*entries, pad=4000):
    """A pickled dict with bytes keys, padded past the loader's minimum batch size."""
    items = b"".join(_raw(key) + value for key, value in entries)
    return b"\x80\x02}(" + _raw(b"pad") + _raw(bytes(pad)) + items + b"u."


OBJECT_POINTERS = _array((0,), state=_int(1) + _int(1) + b"\x85" + _dtype("O8") + b"\x89"
                         + _raw(b"A" * 8))
ATTACKS = {
    # an object dtype whose flags the state clears: its 8 raw bytes become a PyObject pointer
    # (numpy reads them when it converts the labels list)
    "object_pointers": _batch((b"data", _array((0,), state=_int(1) + _int(1) + _int(3072)
                                                         + b"\x86" + _dtype("u1") + b"\x89"
                                                         + _raw(bytes(3072)))),
                                        (b"labels", b"](" + OBJECT_POINTERS + b"e")),
    # 60M-element object array (480 MB of None pointers) from a few bytes
    "object_array": _batch((b"data", _array((60_000_000,), b"O")), (b"labels", b"]")),
    # 8 GiB asked for by the shape alone
    "huge_shape": _batch((b"data", _array((1 << 16, 1 << 17))), (b"labels", b"]")),
    # a dict key nested a million deep: hashing it overflows the C stack
    "deep_key": _batch((b"labels", b"]")).replace(b"u.", b")" + b"\x85" * 1_000_000 + _raw(b"v") + b"u."),
}


def run_bounded(code, extra_mb=300):
    """Run `code` in a child allowed `extra_mb` MiB of address space more than it has after
    importing minidl, so that a crash or a runaway read fails the test, not the test run.
    The child prints the peak of what numpy and Python allocated (tracemalloc sees even the
    untouched pages of a calloc'd array) as 'peak: <bytes>'."""
    prelude = ("import atexit, resource, sys, tracemalloc\n"
               "from minidl.datasets import cifar10\n"
               "vm = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
               f"resource.setrlimit(resource.RLIMIT_AS, (vm + {extra_mb} << 20, vm + {extra_mb} << 20))\n"
               "tracemalloc.start()\n"
               "atexit.register(lambda: print('peak:', tracemalloc.get_traced_memory()[1]))\n")
    env = dict(os.environ, PYTHONPATH=REPO, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_crafted_batch_is_refused_without_crash_or_allocation(tmp_path, attack):
    write_official(tmp_path)
    (tmp_path / cifar10.FOLDER_NAME / "data_batch_1").write_bytes(ATTACKS[attack])
    done = run_bounded("try:\n"
                       f"    cifar10.load_data({str(tmp_path)!r})\n"
                       "except cifar10.CorruptDatasetError as exc:\n"
                       "    print('refused:', exc)\n")
    assert done.returncode == 0, f"child died with {done.returncode}: {done.stderr[-800:]}"
    assert "refused:" in done.stdout and "data_batch_1" in done.stdout, done.stdout + done.stderr
    assert "MemoryError" not in done.stdout
    peak = int(done.stdout.rsplit("peak:", 1)[1])
    assert peak < 2 * len(ATTACKS[attack]) + (4 << 20), f"the loader allocated {peak} bytes"


@pytest.mark.parametrize("kind", ["symlink to /dev/zero", "named pipe"])
def test_batch_that_is_a_device_is_refused_unread(tmp_path, kind):
    write_official(tmp_path)
    path = tmp_path / cifar10.FOLDER_NAME / "data_batch_4"
    path.unlink()
    if kind == "named pipe":
        os.mkfifo(path)  # opening it without O_NONBLOCK would wait for a writer forever
    else:
        path.symlink_to("/dev/zero")
    done = run_bounded("try:\n"
                       f"    cifar10.load_data({str(tmp_path)!r})\n"
                       "except cifar10.CorruptDatasetError as exc:\n"
                       "    print('refused:', exc)\n")
    assert done.returncode == 0, done.stderr[-800:]
    assert "data_batch_4 is not a regular file" in done.stdout, done.stdout


@pytest.mark.parametrize("size", [10, cifar10.MAX_BATCH_BYTES + 1])
def test_batch_of_impossible_size_is_refused_before_parsing(tmp_path, monkeypatch, size):
    write_official(tmp_path)
    path = tmp_path / cifar10.FOLDER_NAME / "data_batch_1"  # the first one read
    with open(path, "r+b") as f:
        f.truncate(size)  # sparse: the big file costs no disk

    def must_not_parse(raw):
        raise AssertionError("parsed a file of impossible size")

    monkeypatch.setattr(_batch_pickle, "loads", must_not_parse)
    with pytest.raises(cifar10.CorruptDatasetError, match=f"data_batch_1 has {size} bytes"):
        cifar10.load_data(tmp_path)


@pytest.mark.parametrize("payload, message", [
    (b"\x80\x02}" + b"(" * 9, "MARKs nested"),
    (b"\x80\x02" + b"N0" * (_batch_pickle.MAX_OPCODES // 2 + 1), "opcodes"),
    (b"\x80\x02]]a.", "a list may hold only plain values"),
    (b"\x80\x02}" + _raw(b"k") + b"}s.", "may not hold a dict"),
    (b"\x80\x02N.", "not a dict"),
    (b"\x80\x02}.junk", "STOP"),
    (b"\x80\x02}h\x07.", "memo entry 7"),
    (b"\x80\x02" + _global("numpy", "dtype") + b")R.", "refusing the call"),
    (b"\x80\x02" + _dtype("u1", elsize=0) + b".", "refusing the state"),  # dtype state from the file
    (b"\x80\x02" + _dtype("u1", state_flags=63) + b".", "refusing the state"),
    (b"\x80\x02" + OBJECT_POINTERS + b".", "dtype 'O8'"),
    (b"\x80\x02}" + _raw(b"d") + _array((0,), state=_int(1) + _int(3) + b"\x85" + _dtype("u1")
                                          + b"\x89" + _raw(b"ab")) + b"s.", "needs 3 bytes"),
])
def test_batch_reader_refuses_malformed_structure(payload, message):
    with pytest.raises(_batch_pickle.PickleFormatError, match=message):
        _batch_pickle.loads(payload)


class FakeResponse:
    """Stands in for urlopen's response: serves `payload`, optionally failing after `fail_after` bytes."""

    def __init__(self, payload, length=None, fail_after=None):
        self.payload = payload
        self.position = 0
        self.fail_after = fail_after
        self.headers = {"Content-Length": str(len(payload) if length is None else length)}

    def read(self, size):
        if self.fail_after is not None and self.position >= self.fail_after:
            raise ConnectionResetError("connection reset by peer")
        chunk = self.payload[self.position:self.position + min(size, 4096)]
        self.position += len(chunk)
        return chunk

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def tarball_bytes(tmp_path, monkeypatch):
    expected = write_official(tmp_path / "src")
    tarball = tmp_path / "src.tar.gz"
    monkeypatch.setattr(cifar10, "TARBALL_MD5", write_tarball(tmp_path / "src", tarball))
    return tarball.read_bytes(), expected


def test_download_success(tmp_path, monkeypatch, tarball_bytes):
    payload, expected = tarball_bytes
    requested = []

    def fake_urlopen(url, timeout=None):
        requested.append(url)
        return FakeResponse(payload)

    monkeypatch.setattr(cifar10, "urlopen", fake_urlopen)
    check_loaded(cifar10.load_data(), expected)
    assert requested == [cifar10.URL]
    cache = tmp_path / "home" / "datasets"
    assert sorted(os.listdir(cache)) == [cifar10.TARBALL_NAME]
    check_loaded(cifar10.load_data(), expected)  # second time from the cache
    assert requested == [cifar10.URL]


@pytest.mark.parametrize("response, message", [
    (lambda p: FakeResponse(p, fail_after=len(p) // 2), "failed after .* bytes.*ConnectionResetError"),
    (lambda p: FakeResponse(p[: len(p) // 2], length=len(p)), "stopped after .* of .* bytes"),
    (lambda p: FakeResponse(p[:-1] + bytes([p[-1] ^ 1])), "md5"),
])
def test_failed_download_leaves_nothing_behind(tmp_path, monkeypatch, tarball_bytes, response, message):
    payload, _ = tarball_bytes
    monkeypatch.setattr(cifar10, "urlopen", lambda url, timeout=None: response(payload))
    with pytest.raises(cifar10.DownloadError, match=message) as info:
        cifar10.load_data()
    assert "nothing was saved" in str(info.value)
    cache = tmp_path / "home" / "datasets"
    assert os.listdir(cache) == []


def test_no_network_says_where_to_put_the_files(tmp_path):
    with pytest.raises(cifar10.DatasetNotFoundError) as info:
        cifar10.load_data()
    message = str(info.value)
    cache = str(tmp_path / "home" / "datasets")
    assert os.path.join(cache, cifar10.FOLDER_NAME) in message
    assert os.path.join(cache, cifar10.TARBALL_NAME) in message
    assert "MINIDL_DATA_DIR" in message and "to_official.py" not in message
    assert "network disabled in tests" in message
    assert info.value.searched == [cache] and info.value.download_folder == cache
    assert info.value.url == cifar10.URL and "network disabled" in info.value.reason
