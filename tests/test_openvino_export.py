"""model.export(path, format="openvino") (Keras 3's API): an OpenVINO IR that OpenVINO's runtime
runs within 1e-5 of minidl's predict at f32 precision (OpenVINO defaults to bf16 on CPUs that
have it, INFERENCE_PRECISION_HINT f32 compares exactly), for Sequential, functional (two inputs)
and nested models, exported from every backend."""

import os

import numpy as np
import pytest

import minidl
from minidl import layers

ov = pytest.importorskip("openvino", reason="the openvino package (pip install 'minidl[openvino]')")


def _models():
    seq = minidl.Sequential([layers.Input((12, 12, 3)), layers.Conv2D(8, 3, padding="same", activation="relu"),
                             layers.BatchNormalization(), layers.MaxPooling2D(), layers.Flatten(),
                             layers.Dense(5, activation="softmax")])
    a, b = layers.Input((6,)), layers.Input((4,))
    inner = minidl.Sequential([layers.Input((10,)), layers.Dense(7, activation="gelu")])
    functional = minidl.Model([a, b], layers.Dense(3)(inner(layers.Concatenate()([a, b]))))
    return [(seq, [np.random.default_rng(0).random((5, 12, 12, 3), np.float32)]),
            (functional, [np.random.default_rng(1).random((5, 6), np.float32),
                          np.random.default_rng(2).random((5, 4), np.float32)])]


def test_openvino_ir_predicts_as_minidl(backend, tmp_path):
    core = ov.Core()
    for index, (model, xs) in enumerate(_models()):
        path = str(tmp_path / f"m{index}.xml")
        model.export(path, format="openvino", verbose=False)
        assert os.path.exists(path) and os.path.exists(path[:-len(".xml")] + ".bin")
        compiled = core.compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got = compiled(xs)[0]
        want = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        # a dynamic batch axis
        more = [np.concatenate([x, x]) for x in xs]
        assert compiled(more)[0].shape[0] == 2 * len(xs[0])
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".minidl-openvino-")]


def test_openvino_export_errors(tmp_path):
    model = minidl.Sequential([layers.Input((3,)), layers.Dense(2)])
    with pytest.raises(ValueError, match="requires the filepath to end with '.xml'"):
        model.export(str(tmp_path / "m.bin"), format="openvino")
    with pytest.raises(ValueError, match="format='onnx' or 'openvino'"):
        model.export(str(tmp_path / "m"), format="tf_saved_model")
