"""Issue 21's API defects (items 5, 6, 9, 13-18), each with the case that failed before: quantized
files the int8 kernels would read differently per ISA path, dtype policies in model files,
ModelCheckpoint filepath templates, CI phases, the opencl set-up message, QuantizedModel's Keras
arguments, verbose output, backend switches and the test extra."""

import io
import json
import zipfile

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.models import Sequential
from minidl.models.saving import ModelFileError
from minidl.quantization import load_quantized_model, quantize


# ------------------------------------------------------------------ item 5: quantized files
def _small_quantized(tmp_path):
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((4, 4, 2)), layers.Conv2D(3, 2, name="conv"),
                        layers.Flatten(name="flat"), layers.Dense(2, name="head")])
    x = np.random.default_rng(0).random((8, 4, 4, 2)).astype(np.float32)
    path = tmp_path / "q.minidl"
    quantize(model, x).save(path)
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}, x


def _rewritten(tmp_path, members, header=None, arrays=None):
    """A copy of a quantized file's members with the header's steps or quantized.npz changed."""
    members = dict(members)
    if header is not None:
        h = json.loads(members["minidl_quantized.json"])
        header(h)
        members["minidl_quantized.json"] = json.dumps(h).encode()
    if arrays is not None:
        a = dict(np.load(io.BytesIO(members["quantized.npz"])))
        arrays(a)
        buf = io.BytesIO()
        np.savez(buf, **a)
        members["quantized.npz"] = buf.getvalue()
    path = tmp_path / "bad.minidl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


@pytest.mark.parametrize("value", [127, -128, 64])
def test_quantized_file_with_8bit_weights_is_refused(tmp_path, value):
    members, _ = _small_quantized(tmp_path)

    def eight_bit(a):
        a["0/w"][5] = value       # AVX2's vpmaddubsw saturates sums of such weights
    with pytest.raises(ModelFileError, match=r"layer 'conv' has int8 weights .*7-bit"):
        load_quantized_model(_rewritten(tmp_path, members, arrays=eight_bit))


@pytest.mark.parametrize("key", ["multiplier", "weight_scale"])
@pytest.mark.parametrize("value", [np.nan, np.inf, 0.0, -1.0])
def test_quantized_file_with_bad_multipliers_is_refused(tmp_path, key, value):
    members, _ = _small_quantized(tmp_path)

    def spoil(a):
        a[f"2/{key}"][1] = value
    with pytest.raises(ModelFileError, match=f"layer 'head' has {key} .* at column 1"):
        load_quantized_model(_rewritten(tmp_path, members, arrays=spoil))


def test_quantized_file_with_a_conv_step_on_flatten_is_refused(tmp_path):
    members, x = _small_quantized(tmp_path)

    def conv_on_flatten(h):
        h["steps"][1] = dict(h["steps"][0])
    with pytest.raises(ModelFileError, match="step 1 is 'conv', but layer 'flat' .Flatten."):
        load_quantized_model(_rewritten(tmp_path, members, header=conv_on_flatten))
    loaded = load_quantized_model(_rewritten(tmp_path, members))   # the untouched file loads
    assert loaded.predict(x).shape == (8, 2)


@pytest.mark.parametrize("fill", [np.nan, np.inf, -np.inf])
def test_quantize_refuses_calibration_data_without_a_finite_value(fill):
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((4,)), layers.Dense(3)])
    with pytest.raises(ValueError, match="calibration_data holds no finite value"):
        quantize(model, np.full((6, 4), fill, np.float32))
    mixed = np.random.default_rng(1).random((6, 4)).astype(np.float32)
    mixed[0] = fill                  # some non-finite values among finite ones still calibrate
    assert np.isfinite(quantize(model, mixed).predict(mixed[1:])).all()
