"""Model files under attack: memory bombs, wrong exception types, half-applied loads, and the
hygiene of the atomic writer (permissions kept, errors that name the file, stale temporaries)."""

import ast
import errno
import io
import json
import os
import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

import minidl
from minidl import io as minidl_io, layers as L, optimizers as O
from minidl.models import Model, ModelFileError, Sequential, load_model


@pytest.fixture(autouse=True)
def numpy_backend():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


def small_model(compiled=True):
    model = Sequential([L.Input((4,)), L.Dense(3, activation="relu"), L.Dense(2), L.Dense(2),
                        L.Dense(2)])
    if compiled:
        model.compile(optimizer=O.Adam(0.01), loss="mse")
        x = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
        model.fit(x, x[:, :2], epochs=1, batch_size=4, verbose=0)
    return model


@pytest.fixture
def saved(tmp_path):
    model = small_model()
    path = tmp_path / "good.minidl"
    model.save(path)
    return model, path


def members(path):
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def write_zip(path, files, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def npz_bytes(arrays, compressed=False):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def npz_arrays(data):
    with np.load(io.BytesIO(data)) as npz:
        return {k: npz[k] for k in npz.files}


def peak_bytes(call):
    """(what call() raised or returned, the peak bytes Python and numpy allocated meanwhile)."""
    tracemalloc.start()
    try:
        try:
            result = call()
        except Exception as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def patch_member_headers(data, name, flag=None, method=None):
    """The zip `data` with the general-purpose flag or compression method of member `name`
    changed in both its local header and its central directory entry."""
    data = bytearray(data)
    encoded = name.encode()
    for signature, flag_at, method_at, name_at in ((b"PK\x03\x04", 6, 8, 30),
                                                   (b"PK\x01\x02", 8, 10, 46)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_at:start + name_at + len(encoded)] == encoded:
                if flag is not None:
                    data[start + flag_at:start + flag_at + 2] = struct.pack("<H", flag)
                if method is not None:
                    data[start + method_at:start + method_at + 2] = struct.pack("<H", method)
            start += 4
    return bytes(data)


# ------------------------------------------------------------ item 5: memory bombs
def test_unknown_member_is_refused_unread(saved, tmp_path):
    _, path = saved
    files = members(path)
    files["junk.bin"] = bytes(64 << 20)  # deflates to 64 KB
    bomb = write_zip(tmp_path / "junk.minidl", files, zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 1 << 20
    result, peak = peak_bytes(lambda: load_model(bomb))
    assert isinstance(result, ModelFileError) and "unknown member 'junk.bin'" in str(result)
    assert peak < 8 << 20, f"{peak} bytes allocated"


def test_oversized_weight_is_refused_before_it_is_read(saved, tmp_path):
    _, path = saved
    files = members(path)
    weights = npz_arrays(files["weights.npz"])
    kernel = sorted(weights)[0]
    weights[kernel] = np.zeros((4, 16 << 20), dtype=np.float32)  # 256 MiB, deflated to ~256 KB
    files["weights.npz"] = npz_bytes(weights, compressed=True)
    del weights
    bomb = write_zip(tmp_path / "big_kernel.minidl", files)
    result, peak = peak_bytes(lambda: load_model(bomb))
    assert isinstance(result, ModelFileError) and "weights.npz" in str(result), result
    assert peak < 16 << 20, f"{peak} bytes allocated"


def test_architecture_larger_than_its_weights_allocates_nothing(saved, tmp_path):
    _, path = saved
    files = members(path)
    header = json.loads(files["minidl_model.json"])
    header["model"]["layers"][-1]["config"]["units"] = 1 << 26  # 512 MiB of float64 kernel
    files["minidl_model.json"] = json.dumps(header).encode()
    bomb = write_zip(tmp_path / "wide.minidl", files)
    result, peak = peak_bytes(lambda: load_model(bomb))
    assert isinstance(result, ModelFileError), result
    assert "declares" in str(result) and "parameters" in str(result)
    assert peak < 16 << 20, f"{peak} bytes allocated"


# ------------------------------------------------- item 9: ModelFileError, always
def _crafted_files():
    """name -> function(files, header) returning the replaced members of a crafted file."""
    def raw_npy(files, header):
        buf = io.BytesIO()
        np.save(buf, np.zeros(3))
        return {"weights.npz": buf.getvalue()}

    def rebuilt_npz(files, change):
        """weights.npz rewritten member by member, change(key, npy bytes) -> npy bytes."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for key, value in sorted(npz_arrays(files["weights.npz"]).items()):
                npy = io.BytesIO()
                np.save(npy, value)
                z.writestr(key + ".npy", change(key, npy.getvalue()))
        return buf.getvalue()

    def text_member(files, header):
        data = rebuilt_npz(files, lambda key, npy: npy)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            entries = {name: z.read(name) for name in z.namelist()}
        entries["readme.txt"] = b"hello"
        buf = io.BytesIO()
        write_zip(buf, entries)
        return {"weights.npz": buf.getvalue()}

    def huge_npy_header(files, header):
        def declare_4tb(key, npy):  # a version 1.0 header: magic, version, length, dict
            length = struct.unpack("<H", npy[8:10])[0]
            head = ast.literal_eval(npy[10:10 + length].decode())
            head["shape"] = (1 << 40,)
            text = repr(head).ljust(length - 1) + "\n"
            assert len(text) == length
            return npy[:10] + text.encode() + npy[10 + length:]
        first = sorted(npz_arrays(files["weights.npz"]))[0]
        return {"weights.npz": rebuilt_npz(
            files, lambda key, npy: declare_4tb(key, npy) if key == first else npy)}

    def no_inbound(files, header):
        # the Sequential as a functional config whose third layer is fed by nothing
        layers_ = [dict(s, inbound_nodes=[]) for s in header["model"]["layers"]]
        names = [s["config"]["name"] for s in layers_]
        for i, spec in enumerate(layers_[1:], start=1):
            spec["inbound_nodes"] = [] if i == 2 else [{"args": [[names[i - 1], 0, 0]]}]
        model = dict(header["model"], class_name="Model", layers=layers_,
                     input_layers=[[names[0], 0, 0]], output_layers=[[names[-1], 0, 0]])
        return {"minidl_model.json": json.dumps(dict(header, model=model)).encode()}

    def deep_json(files, header):
        return {"minidl_model.json": b"[" * 100_000 + b"]" * 100_000}

    return {"raw .npy for the npz": (raw_npy, "not a zip"),
            "non-.npy member": (text_member, "'readme.txt' is not an .npy"),
            "npy header of 4 TB": (huge_npy_header, "declares shape"),
            "inbound []": (no_inbound, "no inbound layers"),
            "JSON nested 100k deep": (deep_json, "RecursionError")}


@pytest.mark.parametrize("case", sorted(_crafted_files()))
def test_crafted_member_raises_model_file_error(saved, tmp_path, case):
    _, path = saved
    craft, message = _crafted_files()[case]
    files = members(path)
    files.update(craft(files, json.loads(files["minidl_model.json"])))
    bad = write_zip(tmp_path / "crafted.minidl", files)
    with pytest.raises(ModelFileError, match=f"crafted.minidl.*{message}"):
        load_model(bad)


@pytest.mark.parametrize("flag, method, message", [(0x1, None, "encrypted"),
                                                   (None, 9, "compression method 9")])
def test_zip_flags_and_methods_raise_model_file_error(saved, tmp_path, flag, method, message):
    _, path = saved
    bad = tmp_path / "flags.minidl"
    bad.write_bytes(patch_member_headers(path.read_bytes(), "weights.npz", flag, method))
    with pytest.raises(ModelFileError, match=f"flags.minidl.*'weights.npz'.*{message}"):
        load_model(bad)


# ------------------------------------------ item 7: all checked, then all assigned
def _assert_unchanged(model, before):
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad_value", [np.nan, 1e300])
def test_failed_load_weights_changes_nothing(saved, tmp_path, bad_value):
    model, path = saved
    files = members(path)
    weights = npz_arrays(files["weights.npz"])
    last = sorted(weights)[-1]
    weights[last] = np.full(weights[last].shape, bad_value, dtype=np.float64)
    files["weights.npz"] = npz_bytes(weights)
    bad = write_zip(tmp_path / "bad_weights.minidl", files)
    other = small_model(compiled=False)
    before = other.get_weights()
    with pytest.raises(ModelFileError, match="not finite in float32"):
        other.load_weights(bad)
    _assert_unchanged(other, before)


def test_failed_set_weights_changes_nothing():
    model = small_model(compiled=False)
    before = model.get_weights()
    values = [np.ones_like(w) for w in before]
    values[-1] = np.full(values[-1].shape, 1e300)
    with pytest.raises(ValueError, match="not finite in float32"):
        model.set_weights(values)
    _assert_unchanged(model, before)


@pytest.mark.parametrize("value, message", [(np.nan, "not finite"), (-1.0, "cannot be negative"),
                                            (1e300, "not finite")])
def test_optimizer_state_is_checked_like_weights(saved, tmp_path, value, message):
    _, path = saved
    files = members(path)
    state = npz_arrays(files["optimizer.npz"])
    velocity = sorted(k for k in state if k.startswith("velocity/"))[0]
    state[velocity] = np.full(state[velocity].shape, value, dtype=np.float64)
    files["optimizer.npz"] = npz_bytes(state)
    bad = write_zip(tmp_path / "bad_state.minidl", files)
    with pytest.raises(ModelFileError, match=f"{velocity}.*{message}"):
        load_model(bad)


def test_good_file_still_round_trips(saved):
    model, path = saved
    loaded = load_model(path)
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    state, expected = loaded.optimizer.get_state(loaded.backend), model.optimizer.get_state(model.backend)
    assert state.keys() == expected.keys()
    for key in state:
        np.testing.assert_array_equal(state[key], expected[key])
    functional_in = L.Input((4,))
    functional = Model(functional_in, L.Dense(2)(L.Dense(3)(functional_in)))
    functional.save(path.parent / "functional.minidl")
    again = load_model(path.parent / "functional.minidl")
    for a, b in zip(again.get_weights(), functional.get_weights()):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------- item 11: checkpoint hygiene
def test_resave_keeps_the_file_mode(saved):
    model, path = saved
    os.chmod(path, 0o600)
    model.save(path)
    assert path.stat().st_mode & 0o777 == 0o600


def test_full_disk_error_names_the_file(saved, monkeypatch):
    model, path = saved

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(minidl_io.os, "fsync", full)
    before = path.read_bytes()
    with pytest.raises(OSError, match="No space left on device") as info:
        model.save(path)
    assert info.value.errno == errno.ENOSPC and str(path) in str(info.value)
    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == [path.name]


def test_stale_temporaries_of_killed_writes_are_removed(saved):
    model, path = saved
    folder = path.parent
    dead = folder / f".{path.name}.999999999.abc123.tmp"    # no such process
    alive = folder / f".{path.name}.{os.getppid()}.def456.tmp"  # a live writer
    other = folder / ".other.minidl.999999999.abc123.tmp"   # another target's
    for stale in (dead, alive, other):
        stale.write_bytes(b"x" * 1000)
        os.utime(stale, (time.time() - 3600, time.time() - 3600))
    model.save(path)
    assert not dead.exists() and alive.exists() and other.exists()


def test_a_custom_layer_with_two_weighted_sublayers_saves_and_loads(tmp_path):
    """Both sublayers name their weights "kernel" / "bias": the file keeps them apart."""
    import minidl
    from minidl import layers
    from minidl.models import Sequential, load_model

    @minidl.saving.register_keras_serializable(package="test_saving")
    class TwoDense(layers.Layer):
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.first, self.second = layers.Dense(units), layers.Dense(units, activation="relu")

        def call(self, x):
            return self.second(self.first(x))

        def get_config(self):
            return dict(super().get_config(), units=self.units)

    minidl.set_seed(3)
    model = Sequential([layers.Input((3,)), TwoDense(4), layers.Dense(2)])
    model.compile("adam", "mse")
    x = np.random.default_rng(0).random((5, 3), dtype=np.float32)
    model.save(tmp_path / "m.minidl")
    loaded = load_model(tmp_path / "m.minidl")
    np.testing.assert_array_equal(model.predict(x, verbose=0), loaded.predict(x, verbose=0))
