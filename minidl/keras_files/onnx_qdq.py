"""A QuantizedModel as an ONNX QDQ model: QuantizeLinear / DequantizeLinear pairs where minidl
holds uint8 activations, int8 weights with per-output-channel scales, int32 biases.

The quantization is minidl's own (minidl/quantization): the calibrated uint8 scale and zero
point of each conv / dense input, of each uint8 output and of each Add; the folded
BatchNormalization and the 7-bit weights with their scales; the bias rounded to the int32
sums' scale, as the kernels' epilogue does. ONNX Runtime fuses the QDQ patterns into its
integer kernels; the other layers run in float on dequantized values, as in minidl.
"""

import numpy as np

from ..quantization.structure import folded_matrix
from ..quantization.packing import quantize_kernel, weight_scales
from .onnx_export import _activation, _layer, _nchw, _nhwc, _window, export_onnx


def _qdq(b, x, qp, hint):
    """x quantized to uint8 with (scale, zero point) qp and dequantized again."""
    scale = b.const(hint + "_scale", np.float32(qp[0]))
    zero = b.const(hint + "_zero", np.uint8(qp[1]), np.uint8)
    q = b.op("QuantizeLinear", [x, scale, zero], hint + "_q")
    return b.op("DequantizeLinear", [q, scale, zero], hint + "_dq")


def _int8_layer(b, node, kind, step, nodes, x):
    layer, name = node.layer, node.layer.name
    x = _qdq(b, x, step["input"], name + "_in")
    matrix, bias = folded_matrix(node, kind, nodes)            # (k, n), BatchNormalization folded
    scales = weight_scales(matrix)
    q = quantize_kernel(matrix, scales)
    n = q.shape[1]
    zeros = b.const(name + "_wzero", np.zeros(n, np.int8), np.int8)
    if step["kind"] == "conv":
        kh, kw = layer.kernel_size
        q = np.transpose(q.reshape(kh, kw, -1, n), (3, 2, 0, 1))   # (n, c, kh, kw)
    w = b.op("DequantizeLinear", [b.const(name + "_wq", q, np.int8),
                                  b.const(name + "_wscale", scales), zeros], name + "_w",
             axis=0 if step["kind"] == "conv" else 1)
    inputs = [w]
    if bias is not None:       # int32 at the sums' scale (input scale x weight scale)
        acc = np.float64(step["input"][0]) * scales.astype(np.float64)
        bias_q = np.clip(np.rint(bias / acc), -2 ** 30, 2 ** 30).astype(np.int32)
        inputs.append(b.op("DequantizeLinear", [
            b.const(name + "_bq", bias_q, np.int32), b.const(name + "_bscale", acc),
            b.const(name + "_bzero", np.zeros(n, np.int32), np.int32)], name + "_b", axis=0))
    if step["kind"] == "conv":
        y = b.op("Conv", [_nchw(b, x, name)] + inputs, name, kernel_shape=[kh, kw],
                 **_window(layer, (kh, kw)))
        y = _nhwc(b, y, name)
    else:
        y = b.op("MatMul", [x, w], name)
        if bias is not None:
            y = b.op("Add", [y, inputs[1]], name)
    if step["relu"]:
        y = b.op("Relu", [y], name + "_relu")
    if step.get("float_activation"):
        y = _activation(b, y, step["float_activation"], layer._activation_alpha(), name)
    if step["output"] is not None:
        y = _qdq(b, y, step["output"], name + "_out")
    return y


def qdq_emitter(qmodel):
    """emit(builder, graph, names) of onnx_export.to_onnx for a QuantizedModel."""
    def emit(b, graph, names):
        for node, kind, step in zip(graph.nodes, qmodel.kinds, qmodel.steps):
            k = kind["kind"]
            if k == "alias":
                continue
            xs = [names[id(t)] for t in node.inputs]
            if k in ("conv", "dense"):
                names[id(kind["fused_output"])] = _int8_layer(b, node, kind, step,
                                                              graph.nodes, xs[0])
            elif k == "add":
                a, c = (_qdq(b, x, qp, f"{node.layer.name}_in{j}")
                        for j, (x, qp) in enumerate(zip(xs, step["inputs"])))
                y = b.op("Add", [a, c], node.layer.name)
                if step["relu"]:
                    y = b.op("Relu", [y], node.layer.name + "_relu")
                names[id(kind["fused_output"])] = _qdq(b, y, step["output"],
                                                       node.layer.name + "_out")
            else:
                try:
                    names[id(node.outputs[0])] = _layer(b, node.layer, xs)
                except (ValueError, KeyError, AttributeError, TypeError) as exc:
                    raise ValueError(f"export: {node.layer.describe()} cannot be exported "
                                     f"to ONNX ({exc})") from None
    return emit


def export_quantized(qmodel, filepath, opset):
    return export_onnx(qmodel.float_model, filepath, opset, emit=qdq_emitter(qmodel))
