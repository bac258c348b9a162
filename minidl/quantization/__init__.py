"""int8 inference: quantize(model, calibration_data) -> a QuantizedModel.

Conv2D and Dense run uint8 activations x int8 weights -> int32 sums, with per-output-channel
weight scales (7-bit symmetric, packing.py says why) and per-tensor activation scales and zero
points measured on the calibration batches (calibration.py: "minmax" or "percentile"); bias and
ReLU are fused into the requantizing epilogue, a BatchNormalization right after a Conv2D is
folded into its weights, and MaxPooling2D / Flatten / Dropout stay in uint8 (structure.py).
Other layers run in float on dequantized values. The kernels (csrc/qgemm*.c on cpu, kernels/
qgemm.cl on opencl, numpy's reference) are exact integer arithmetic, equal on every backend.
"""

import numpy as np

from ..arguments import number
from ..layers.calls import LayerCall, run_forward
from .calibration import METHODS, RangeObserver, qparams
from .model import QuantizedModel, output_forms
from .packing import add_multiplier, epilogue_arrays, pack, quantize_kernel, weight_scales
from .structure import folded_matrix, plan_kinds


def _batches(calibration_data, batch_size, expected, owner):
    if isinstance(calibration_data, np.ndarray):
        data = [calibration_data[i:i + batch_size] for i in range(0, len(calibration_data), batch_size)]
    elif isinstance(calibration_data, (list, tuple)):
        data = list(calibration_data)
    else:
        raise TypeError(f"{owner}: calibration_data must be a numpy array of samples or a list "
                        f"of batches, got {type(calibration_data).__name__}")
    batches = []
    for i, batch in enumerate(data):
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        if batch.ndim != len(expected) + 1 or tuple(batch.shape[1:]) != expected:
            raise ValueError(f"{owner}: calibration batch {i} has shape {batch.shape}, the model "
                             f"takes (None, {', '.join(map(str, expected))})")
        if len(batch):
            batches.append(batch)
    if not batches:
        raise ValueError(f"{owner}: calibration_data holds no samples")
    if not any(np.isfinite(batch).any() for batch in batches):
        raise ValueError(f"{owner}: calibration_data holds no finite value (all NaN or inf): "
                         f"activation ranges cannot be measured")
    return batches


def _calibrate(model, kinds, batches, method, percentile):
    """{tensor id: (scale, zero point)} of every tensor a conv or dense reads or writes."""
    graph, b = model.graph, model.backend
    watched = set()
    for node, kind in zip(graph.nodes, kinds):
        if kind["kind"] in ("conv", "dense", "add"):
            watched.update([id(t) for t in node.inputs] + [id(kind["fused_output"])])
    observers = {t: RangeObserver(method, percentile) for t in watched}
    # the float layers run on contexts of their own (their buffers kept between batches)
    calls = [LayerCall(node.layer, b) for node in graph.nodes]
    for batch in batches:
        values = {id(graph.inputs[0]): b.from_numpy(batch)}
        for t in (id(graph.inputs[0]),):
            if t in observers:
                observers[t].observe(batch)
        for node, call in zip(graph.nodes, calls):
            xs = [values[id(t)] for t in node.inputs]
            out = run_forward(node.layer, call, xs if node.structured else xs[0], False)
            values[id(node.outputs[0])] = out
            if id(node.outputs[0]) in observers:
                observers[id(node.outputs[0])].observe(b.to_numpy(out))
    producers = {id(node.outputs[0]): node.layer for node in graph.nodes}
    for t, observer in observers.items():
        if observer.low > observer.high:
            where = producers[t].describe() if t in producers else "the model's input"
            raise ValueError(f"minidl.quantization.quantize: the output of {where} was never "
                             f"finite on the calibration data: its range cannot be measured")
    return {t: qparams(*o.range()) for t, o in observers.items()}


def quantize(model, calibration_data, method="minmax", percentile=99.99, batch_size=32):
    """A QuantizedModel of the built float `model` (one input, one output), with activation
    ranges from `calibration_data` (an array of samples, cut into batches of batch_size, or a
    list of batches): method "minmax" or "percentile" (the percentile-th and
    (100 - percentile)-th percentiles). The model runs on its backend; the float model is kept
    (QuantizedModel.float_model) and must not be changed while the quantized one is used."""
    owner = "minidl.quantization.quantize"
    if method not in METHODS:
        raise ValueError(f"{owner}: method must be one of {', '.join(METHODS)}, got {method!r}")
    percentile = number(percentile, "percentile", owner, low=50, high=100, high_inclusive=True)
    if not (isinstance(batch_size, int) and not isinstance(batch_size, bool) and batch_size > 0):
        raise ValueError(f"{owner}: batch_size must be a positive int, got {batch_size!r}")
    graph = getattr(model, "graph", None)
    if graph is None:
        raise ValueError(f"{owner}: the model must be built (it has no layer graph yet)")
    if len(graph.inputs) != 1 or len(graph.outputs) != 1:
        raise ValueError(f"{owner}: {model.describe()} has {len(graph.inputs)} inputs and "
                         f"{len(graph.outputs)} outputs; only one of each is supported")
    kinds, consumers = plan_kinds(graph)
    batches = _batches(calibration_data, batch_size, tuple(graph.inputs[0].sample_shape), owner)
    ranges = _calibrate(model, kinds, batches, method, percentile)
    forms = output_forms(graph, kinds, consumers, ranges)
    steps, arrays = [], {}
    for i, (node, kind, (qin, qout)) in enumerate(zip(graph.nodes, kinds, forms)):
        step = {"kind": kind["kind"]}
        if kind["kind"] in ("conv", "dense"):
            matrix, bias = folded_matrix(node, kind, graph.nodes)
            scales = weight_scales(matrix)
            q = quantize_kernel(matrix, scales)
            offset, multiplier = epilogue_arrays(q, scales, bias, qin[0], qin[1],
                                                 None if qout is None else qout[0])
            arrays.update({f"{i}/w": pack(q), f"{i}/column_offset": offset,
                           f"{i}/multiplier": multiplier, f"{i}/weight_scale": scales})
            step.update(relu=bool(kind["relu"]), float_activation=kind["float_activation"],
                        input=list(qin), output=None if qout is None else list(qout))
        elif kind["kind"] == "add":   # qin: the two inputs' parameters
            step.update(relu=bool(kind["relu"]), inputs=[list(q) for q in qin], output=list(qout),
                        multipliers=[add_multiplier(q[0], qout[0]) for q in qin])
        steps.append(step)
    return QuantizedModel(model, steps, arrays, method)


def load_quantized_model(filepath):
    """The QuantizedModel that QuantizedModel.save wrote to filepath, on the active backend;
    a bad file raises ModelFileError naming it (nothing in it is run, allocations are bounded)."""
    from .quantized_files import load_quantized
    return load_quantized(filepath, QuantizedModel)


__all__ = ["METHODS", "QuantizedModel", "load_quantized_model", "quantize"]
