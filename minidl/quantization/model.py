"""QuantizedModel: a float model's graph run with int8 Conv2D and Dense layers.

Values flow between nodes as float32 or uint8 tensors of the backend; a uint8 value carries
its (scale, zero point). Conv2D and Dense read uint8 (quantizing a float input with the
calibrated parameters of that tensor) and write uint8 requantized to their output's calibrated
parameters when every consumer reads uint8, else float32 (dequantized in the epilogue).
MaxPooling2D, Flatten, Reshape and Dropout keep uint8 as uint8; any other layer is run by the
float model's own layer on dequantized values. See structure.py for what folds where.
"""

import numpy as np

from ..backends.base import make_window
from ..layers.calls import LayerCall, run_forward
from .keras_methods import KerasMethods
from .structure import UINT8_CONSUMERS, plan_kinds


class _Value:
    __slots__ = ("f", "q", "qp")

    def __init__(self, f=None, q=None, qp=None):
        self.f, self.q, self.qp = f, q, qp


class QuantizedModel(KerasMethods):
    """Made by minidl.quantization.quantize(model, calibration_data); predict, evaluate
    (with the float model's loss and metrics, or compile's) and summary as Keras's
    (keras_methods.py).

    `steps` holds per graph node its kind and quantization parameters (JSON-able, saved as
    they are); `arrays` the int8 packed weights and epilogue arrays of conv and dense nodes,
    keyed "<node>/w", "<node>/column_offset", "<node>/multiplier", "<node>/weight_scale"."""

    def __init__(self, float_model, steps, arrays, method):
        self.float_model = float_model
        self.method = method
        self.kinds, _ = plan_kinds(float_model.graph)
        if len(steps) != len(self.kinds) or any(
                s["kind"] != k["kind"] for s, k in zip(steps, self.kinds)):
            raise ValueError("the quantization steps do not match the model's layers")
        self.steps, self.arrays = steps, arrays
        self._bind(float_model.backend)

    def _bind(self, backend):
        # the int8 ops are the backend's contract section "quantized" (backends/contract/quantized.py)
        self.backend = self.ops = backend
        self._float_calls = {}   # node index -> LayerCall of a layer that runs in float
        self._tensors = {key: self.ops.quantized_upload(a) for key, a in self.arrays.items()
                         if not key.endswith("/weight_scale")}
        self._buffers, self._batch = {}, None

    @property
    def name(self):
        return self.float_model.name

    def info(self):
        """Which int8 inner loop runs (cpu: "amx", "vnni", "avx2" or "generic"), and the layers in int8."""
        path = self.ops.quantized_path()
        quantized = [self.float_model.graph.nodes[i].layer.name for i, s in enumerate(self.steps)
                     if s["kind"] in ("conv", "dense")]
        return {"backend": self.backend.name, "kernel": path, "method": self.method,
                "int8_layers": quantized}

    # ------------------------------------------------------------------ running
    def _buffer(self, key, shape, uint8):
        buf = self._buffers.get(key)
        if buf is None:
            buf = self.ops.empty_u8(shape) if uint8 else self.backend.empty(shape)
            self._buffers[key] = buf
        return buf

    def _as_u8(self, key, value, qp):
        if value.q is not None and tuple(value.qp) == tuple(qp):
            return value.q
        f = self._as_float(key, value)
        q = self._buffer(("q", key), self.backend.shape(f), True)
        self.ops.quantize_u8(q, f, qp[0], qp[1])
        return q

    def _as_float(self, key, value):
        if value.f is None:
            f = self._buffer(("f", key), self.backend.shape(value.q), False)
            self.ops.dequantize_u8(f, value.q, value.qp[0], value.qp[1])
            value.f = f
        return value.f

    def _forward(self, x):
        """The model's output tensor (float32, on the backend) for the input tensor x."""
        graph, b = self.float_model.graph, self.backend
        values = {id(graph.inputs[0]): _Value(f=x)}
        n = b.shape(x)[0]
        for i, (node, kind, step) in enumerate(zip(graph.nodes, self.kinds, self.steps)):
            k = kind["kind"]
            if k == "alias":
                continue
            inputs = [values[id(t)] for t in node.inputs]
            key = id(node.inputs[0])
            layer = node.layer
            if k in ("conv", "dense"):
                out = self._int8_layer(i, layer, step, self._as_u8(key, inputs[0], step["input"]), n)
                values[id(kind["fused_output"])] = out
                continue
            if k == "add":
                (qa, qb), (za, zb) = [self._as_u8(id(t), v, qp) for t, v, qp in
                                      zip(node.inputs, inputs, step["inputs"])], [q[1] for q in step["inputs"]]
                out = self._buffer(("add", i), b.shape(qa), True)
                self.ops.add_u8(out, qa, qb, za, zb, *step["multipliers"], step["output"][1], step["relu"])
                values[id(kind["fused_output"])] = _Value(q=out, qp=tuple(step["output"]))
                continue
            v = inputs[0]
            if k == "identity":
                result = v
            elif k == "maxpool" and v.q is not None:
                plan = make_window(b.shape(v.q), layer.pool_size, layer.strides, layer.padding, None)
                q = self._buffer(("pool", i), (n,) + tuple(layer.output_shape), True)
                self.ops.max_pool2d_u8(q, v.q, plan)
                result = _Value(q=q, qp=v.qp)
            elif k == "reshape" and v.q is not None:
                result = _Value(q=b.reshape(v.q, (n,) + tuple(layer.output_shape)), qp=v.qp)
            else:
                xs = [self._as_float(id(t), values[id(t)]) for t in node.inputs]
                call = self._float_calls.get(i)
                if call is None:   # a float layer's context, kept from batch to batch
                    call = self._float_calls[i] = LayerCall(layer, b)
                result = _Value(f=run_forward(layer, call, xs if node.structured else xs[0], False))
            values[id(node.outputs[0])] = result
        out = values[id(graph.outputs[0])]
        return self._as_float(id(graph.outputs[0]), out)

    def _int8_layer(self, i, layer, step, q, n):
        b, t = self.backend, self._tensors
        w, offset, mult = t[f"{i}/w"], t[f"{i}/column_offset"], t[f"{i}/multiplier"]
        uint8 = step["output"] is not None
        zp = step["output"][1] if uint8 else 0
        if step["kind"] == "conv":
            plan = make_window(b.shape(q), layer.kernel_size, layer.strides, layer.padding, layer.filters)
            out = self._buffer(("out", i), (n, plan.oh, plan.ow, plan.oc), uint8)
            self.ops.qconv2d_forward(out, q, w, offset, mult, zp, step["relu"], step["input"][1], plan)
        else:
            shape = b.shape(q)
            rows = int(np.prod(shape[:-1]))
            out = self._buffer(("out", i), (rows, layer.units), uint8)
            self.ops.qgemm_forward(out, b.reshape(q, (rows, shape[-1])), w, offset, mult, zp, step["relu"])
            out = b.reshape(out, tuple(shape[:-1]) + (layer.units,))
        if uint8:
            return _Value(q=out, qp=tuple(step["output"]))
        act = step["float_activation"]
        if act is not None:
            y = self._buffer(("act", i), b.shape(out), False)
            b.activation_forward(y, out, act, _alpha(layer))
            out = y
        return _Value(f=out)

    def _predict_chunk(self, chunk):
        """The outputs (host) of one batch of inputs (host, shape already checked)."""
        chunk = np.ascontiguousarray(chunk, np.float32)
        if len(chunk) != self._batch:
            self._buffers, self._batch = {}, len(chunk)
            self._input = self.backend.empty(chunk.shape)
        self.backend.copy_from_host(self._input, chunk)
        return self.backend.to_numpy(self._forward(self._input))

    def export(self, filepath, format="onnx", verbose=True, opset_version=17):
        """An ONNX QDQ model (int8 weights, uint8 activations where minidl has them; see
        minidl/keras_files/onnx_qdq.py)."""
        if format != "onnx":
            raise ValueError(f"export: a QuantizedModel exports format='onnx', got {format!r}")
        from ..keras_files.onnx_qdq import export_quantized
        export_quantized(self, filepath, opset_version)
        if verbose:
            print(f"Saved an ONNX QDQ model to {filepath}")

    def save(self, filepath, overwrite=True):
        from .quantized_files import save_quantized
        save_quantized(self, filepath, overwrite)


def _alpha(layer):
    from .. import activations
    return activations.default_alpha(layer._activation) if layer.alpha is None else layer.alpha


def output_forms(graph, kinds, consumers, ranges):
    """Per node the (input, output) quantization parameters of conv and dense nodes (their
    output is uint8 when every consumer of their fused output reads uint8), and of add nodes
    ([both inputs'], output)."""
    static = {}   # tensor id -> qp of the uint8 form it has, for the tensors that have one
    forms = []
    for node, kind in zip(graph.nodes, kinds):
        k = kind["kind"]
        if k in ("conv", "dense"):
            src = id(node.inputs[0])
            qin = static.get(src) or ranges[src]
            out = kind["fused_output"]
            users = consumers.get(id(out), [])
            is_output = any(out is t for t in graph.outputs)
            uint8 = bool(users) and not is_output and kind["float_activation"] is None and all(
                kinds[j]["kind"] in UINT8_CONSUMERS for j in users)
            qout = ranges[id(out)] if uint8 else None
            if qout is not None:
                static[id(out)] = qout
            forms.append((qin, qout))
            continue
        if k == "add":   # always uint8 out: its consumers dequantize if they must
            out = id(kind["fused_output"])
            static[out] = ranges[out]
            forms.append(([static.get(id(t)) or ranges[id(t)] for t in node.inputs], ranges[out]))
            continue
        if k in ("maxpool", "reshape", "identity") and id(node.inputs[0]) in static:
            static[id(node.outputs[0])] = static[id(node.inputs[0])]
        forms.append((None, None))
    return forms
