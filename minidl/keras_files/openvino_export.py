"""model.export(path, format="openvino"): an OpenVINO IR (path.xml and the weights beside it,
path.bin), as Keras 3 writes it. minidl goes through its ONNX export (onnx_export.py, every
layer ONNX can express; a dynamic batch axis), which OpenVINO's converter reads; the IR keeps
float32 weights (no fp16 compression), so OpenVINO's f32 inference equals ONNX Runtime's.

The two files are written into a temporary folder beside the target and renamed into place:
an export that fails leaves any earlier files as they were."""

import os
import tempfile

from .onnx_export import export_onnx


def _openvino():
    try:
        import openvino
    except ImportError:
        raise ImportError('model.export(format="openvino") needs the openvino package: '
                          'pip install "minidl[openvino]"') from None
    return openvino


def export_openvino(model, filepath, opset, verbose=True):
    filepath = os.fspath(filepath)
    if not filepath.endswith(".xml"):
        raise ValueError("The OpenVINO export requires the filepath to end with '.xml'. "
                         f"Got: filepath={filepath}")
    ov = _openvino()
    folder = os.path.dirname(os.path.abspath(filepath))
    weights = filepath[:-len(".xml")] + ".bin"
    with tempfile.TemporaryDirectory(dir=folder, prefix=".minidl-openvino-") as tmp:
        onnx_path = os.path.join(tmp, "model.onnx")
        export_onnx(model, onnx_path, opset)
        ov_model = ov.convert_model(onnx_path)
        xml_tmp = os.path.join(tmp, "model.xml")
        ov.save_model(ov_model, xml_tmp, compress_to_fp16=False)
        os.replace(os.path.join(tmp, "model.bin"), weights)
        os.replace(xml_tmp, filepath)
    if verbose:
        print(f"Saved OpenVINO IR at '{filepath}'.")
