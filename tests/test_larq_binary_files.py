"""lq.save_converted / lq.load_converted: binary kernels stored as bits (1 per weight), the
loaded model predicting as the saved one on every backend, and the strict checks on crafted
files (bits past the channels, shapes, dtypes, member sizes, unknown members, object arrays)."""

import io
import json
import os
import zipfile

import numpy as np
import pytest

import minidl
import minidl.larq as lq
from minidl.models import ModelFileError

SIGNS = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", kernel_constraint="weight_clip")


def binary_model():
    return minidl.Sequential([
        minidl.layers.Input((8, 8, 3)),
        lq.layers.QuantConv2D(40, 3, kernel_quantizer="ste_sign", use_bias=False),   # float input
        minidl.layers.BatchNormalization(),
        lq.layers.QuantConv2D(33, 3, padding="same", pad_values=1.0, **SIGNS),
        minidl.layers.BatchNormalization(),
        lq.layers.QuantConv2D(16, 3, **SIGNS),
        minidl.layers.BatchNormalization(),
        minidl.layers.Reshape((16 * 16,)),
        lq.layers.QuantDense(10, **SIGNS),
        minidl.layers.Dense(3)])


def saved(tmp_path, name="model.lqb"):
    model = binary_model()
    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, minidl.layers.BatchNormalization):
            c = layer.moving_mean.shape[0]
            layer.set_weights([rng.standard_normal(c).astype(np.float32) for _ in range(3)]
                              + [(rng.random(c) * 20 + 1).astype(np.float32)])
    lq.convert(model)
    path = os.path.join(tmp_path, name)
    lq.save_converted(model, path)
    return model, path


def test_round_trip_predicts_as_the_saved_model(active_backend, tmp_path):
    model, path = saved(tmp_path)
    x = np.random.default_rng(1).standard_normal((5, 8, 8, 3)).astype(np.float32)
    loaded = lq.load_converted(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.binary_layers == [layer.name for layer in loaded.layers if layer.name in loaded.binary_layers]
    # folded: the BatchNormalization after the float conv (float bounds) and the one after 40->33
    assert len(loaded.binary_layers) == 3 and len(loaded.folded_batchnorms) == 2
    kernel = loaded.layers[0].get_weights()[0]
    assert set(np.unique(kernel)) == {-1.0, 1.0}        # the signs, as the layer computes with them
    np.testing.assert_array_equal(kernel, np.where(model.layers[0].get_weights()[0] >= 0, 1, -1))
    with zipfile.ZipFile(path) as z:
        sizes = {info.filename: info.file_size for info in z.infolist()}
    # 32 channels to a word: conv 3->40 (1 word a tap), 40->33 and 33->16 (2), dense 256->10 (8)
    words = 9 * 40 * 1 + 9 * 33 * 2 + 9 * 16 * 2 + 8 * 10
    assert 4 * words < sizes["packed.npz"] < 4 * words + 2048
    float_kernels = 4 * (9 * 3 * 40 + 9 * 40 * 33 + 9 * 33 * 16 + 256 * 10)
    assert sizes["packed.npz"] < float_kernels / 10


def test_a_quant_conv1d_model_round_trips(tmp_path):
    minidl.set_backend("numpy")
    model = minidl.Sequential([minidl.layers.Input((12, 5)),
                               lq.layers.QuantConv1D(8, 3, padding="causal", **SIGNS),
                               lq.layers.QuantConv1D(4, 3, padding="same", pad_values=1.0, **SIGNS)])
    lq.convert(model)
    path = os.path.join(tmp_path, "conv1d.lqb")
    lq.save_converted(model, path)
    x = np.random.default_rng(2).standard_normal((3, 12, 5)).astype(np.float32)
    np.testing.assert_array_equal(lq.load_converted(path).predict(x, verbose=0), model.predict(x, verbose=0))


def rewrite(path, change):
    """The file at path with its members passed through change({name: bytes}) (in place)."""
    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    members = change(members)
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def npz_members(data):
    with np.load(io.BytesIO(data)) as npz:
        return {key: npz[key] for key in npz.files}


def npz_bytes(arrays, allow_pickle=False):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def edit_packed(edit):
    def change(members):
        arrays = npz_members(members["packed.npz"])
        edit(arrays)
        members["packed.npz"] = npz_bytes(arrays)
        return members
    return change


def set_padding_bit(arrays):
    key = sorted(arrays)[1]                  # 40 input channels: word 1 of a tap has 24 spare bits
    bits = arrays[key].copy()
    bits[1, 0] |= 1 << 20
    arrays[key] = bits


def edit_header(field, value):
    def change(members):
        header = json.loads(members["minidl_binary.json"])
        header[field] = value
        members["minidl_binary.json"] = json.dumps(header).encode()
        return members
    return change


CRAFTED = {
    "a bit past the channels": (edit_packed(set_padding_bit), "past the kernel"),
    "a packed kernel of another shape": (edit_packed(lambda a: a.update({sorted(a)[0]: a[sorted(a)[0]][:-1]})),
                                         "expected"),
    "a packed kernel of another dtype": (
        edit_packed(lambda a: a.update({sorted(a)[0]: a[sorted(a)[0]].astype(np.int64)})), "expected|larger"),
    "a packed kernel missing": (edit_packed(lambda a: a.pop(sorted(a)[0])), "packed.npz holds"),
    "a huge extra array": (edit_packed(lambda a: a.update(extra=np.zeros(1 << 20, np.int32))), "larger|bytes"),
    "an object array": (lambda m: dict(m, **{"packed.npz": npz_bytes({"0000/kernel_bits": np.array([{}], object)},
                                                                     allow_pickle=True)}), "object|dtype|pickle"),
    "an unknown member": (lambda m: dict(m, **{"run_me.py": b"print('hi')"}), "run_me.py"),
    "a wrong list of packed kernels": (edit_header("packed", ["0000/kernel_bits"]), "lists packed kernels"),
    "another format": (edit_header("format", "minidl-model"), "not a minidl-binary-model"),
    "a float kernel beside its bits": (lambda m: dict(m, **{"weights.npz": npz_bytes(dict(
        npz_members(m["weights.npz"]), **{"0000/quant_conv2d/kernel": np.ones((3, 3, 3, 40), np.float32)}))}),
        "weight"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_files_are_refused(tmp_path, name):
    minidl.set_backend("numpy")
    _, path = saved(tmp_path)
    change, message = CRAFTED[name]
    rewrite(path, change)
    with pytest.raises(ModelFileError, match=message):
        lq.load_converted(path)


def test_saving_needs_a_converted_model_and_respects_overwrite(tmp_path):
    minidl.set_backend("numpy")
    with pytest.raises(ValueError, match="lq.convert"):
        lq.save_converted(binary_model(), os.path.join(tmp_path, "x.lqb"))
    model, path = saved(tmp_path)
    with pytest.raises(FileExistsError):
        lq.save_converted(model, path, overwrite=False)
    assert os.listdir(tmp_path) == ["model.lqb"]                 # no temporary file left behind


def ternary_model(twn):
    tern = lq.quantizers.SteTern(threshold_value=0.05, ternary_weight_networks=twn)   # some of glorot's beyond
    return minidl.Sequential([
        minidl.layers.Input((6, 6, 40)),
        lq.layers.QuantConv2D(33, 3, padding="same", input_quantizer="ste_sign", kernel_quantizer=tern),
        minidl.layers.BatchNormalization(),
        minidl.layers.Flatten(),
        lq.layers.QuantDense(5, input_quantizer="ste_sign", kernel_quantizer="ste_sign"),
    ])


@pytest.mark.parametrize("twn", [False, True], ids=["threshold", "twn"])
def test_ternary_kernels_are_saved_as_two_bit_planes(active_backend, tmp_path, twn):
    """A ste_tern kernel is stored as its two bit-planes (2 bits a weight) and comes back as
    its ternary values: predictions equal, on every backend, for a fixed and a TWN threshold."""
    model = ternary_model(twn)
    lq.convert(model)
    path = os.path.join(tmp_path, "ternary.lqb")
    lq.save_converted(model, path)
    x = np.random.default_rng(3).standard_normal((4, 6, 6, 40)).astype(np.float32)
    loaded = lq.load_converted(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    kernel = loaded.layers[0].get_weights()[0]
    assert set(np.unique(kernel)) <= {-1.0, 0.0, 1.0} and 0.0 in kernel and 1.0 in kernel
    with zipfile.ZipFile(path) as z:
        packed = npz_members(z.read("packed.npz"))
    assert packed["0000/kernel_planes"].shape == (2, 9 * 2, 33)        # 40 channels: 2 words a tap
    assert "0000/quant_conv2d/kernel" not in npz_members(zipfile.ZipFile(path).read("weights.npz"))


def test_impossible_ternary_planes_are_refused(tmp_path):
    minidl.set_backend("numpy")
    model = ternary_model(False)
    lq.convert(model)
    path = os.path.join(tmp_path, "ternary.lqb")
    lq.save_converted(model, path)

    def flip(arrays):                        # a value -1 in plane a (0 as +1) but +1 in plane b
        planes = arrays["0000/kernel_planes"].copy()
        planes[0, 0, 0] |= 1
        planes[1, 0, 0] &= ~1
        arrays["0000/kernel_planes"] = planes
    rewrite(path, edit_packed(flip))
    with pytest.raises(ModelFileError, match="no ternary value gives"):
        lq.load_converted(path)
