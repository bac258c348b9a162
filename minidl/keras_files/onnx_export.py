"""model.export(path, format="onnx"): the inference graph as an ONNX model (opset 17).

Each layer call becomes a few ONNX nodes with the layer's weights as initializers; nested
models are inlined. minidl computes channels-last (N, H, W, C) and ONNX's Conv and pooling
are channels-first, so each of those runs between two Transposes (ONNX Runtime's transpose
optimizer cancels the pairs between consecutive convolutions). BatchNormalization becomes
the per-channel scale and shift it is at inference; Dropout, noise and random augmentation
layers are the identity, as in Keras's export. The batch axis is dynamic ("batch").
A layer ONNX cannot express (a Lambda, a layer class of your own, ...) is refused, naming it.
"""

import os

import numpy as np

from ..io import atomic_write
from ..layers import LAYER_CLASSES
from .. import activations
from . import require

OPSET = 17
# layers that are the identity at inference
_IDENTITY = {"Dropout", "SpatialDropout2D", "GaussianNoise", "RandomBrightness",
             "RandomContrast", "RandomFlip", "RandomRotation", "RandomTranslation",
             "RandomZoom"}   # (RandomCrop center-crops at inference: not exported)
_MERGE_OPS = {"Add": "Sum", "Maximum": "Max", "Minimum": "Min", "Average": "Mean"}


class _Builder:
    """ONNX nodes and initializers, with unique tensor names."""

    def __init__(self, onnx):
        self.onnx, self.h = onnx, onnx.helper
        self.nodes, self.initializers, self._count = [], [], 0

    def name(self, hint):
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint, value, dtype=np.float32):
        name = self.name(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(
            np.ascontiguousarray(value, dtype=dtype), name))
        return name

    def op(self, op_type, inputs, hint, **attrs):
        out = self.name(hint)
        self.nodes.append(self.h.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out


def _activation(b, x, name, alpha, hint):
    if name == "linear":
        return x
    simple = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softplus": "Softplus",
              "softsign": "Softsign", "selu": "Selu", "exponential": "Exp"}
    if name in simple:
        return b.op(simple[name], [x], hint)
    if name == "softmax":
        return b.op("Softmax", [x], hint, axis=-1)
    if name == "leaky_relu":
        return b.op("LeakyRelu", [x], hint, alpha=float(alpha))
    if name == "elu":
        return b.op("Elu", [x], hint, alpha=float(alpha))
    if name == "relu6":
        return b.op("Clip", [x, b.const("zero", 0.0), b.const("six", 6.0)], hint)
    if name == "hard_sigmoid":     # Keras 3: relu6(x + 3) / 6
        return b.op("HardSigmoid", [x], hint, alpha=1.0 / 6.0, beta=0.5)
    if name == "hard_silu":
        return b.op("Mul", [x, b.op("HardSigmoid", [x], hint, alpha=1.0 / 6.0, beta=0.5)], hint)
    if name == "silu":
        return b.op("Mul", [x, b.op("Sigmoid", [x], hint)], hint)
    if name == "mish":
        return b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x], hint)], hint)], hint)
    if name == "gelu":             # 0.5 x (1 + erf(x / sqrt 2))
        erf = b.op("Erf", [b.op("Mul", [x, b.const("rsqrt2", 1 / np.sqrt(2))], hint)], hint)
        one = b.op("Add", [erf, b.const("one", 1.0)], hint)
        return b.op("Mul", [b.op("Mul", [x, one], hint), b.const("half", 0.5)], hint)
    if name == "gelu_approximate":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.op("Mul", [b.op("Mul", [x, x], hint), x], hint)
        inner = b.op("Add", [x, b.op("Mul", [cube, b.const("c", 0.044715)], hint)], hint)
        t = b.op("Tanh", [b.op("Mul", [inner, b.const("k", np.sqrt(2 / np.pi))], hint)], hint)
        one = b.op("Add", [t, b.const("one", 1.0)], hint)
        return b.op("Mul", [b.op("Mul", [x, one], hint), b.const("half", 0.5)], hint)
    raise ValueError(f"activation {name!r} has no ONNX form here")


def _nchw(b, x, hint):
    return b.op("Transpose", [x], hint + "_nchw", perm=[0, 3, 1, 2])


def _nhwc(b, x, hint):
    return b.op("Transpose", [x], hint + "_nhwc", perm=[0, 2, 3, 1])


def _window(layer, window, dilations=(1, 1)):
    """Conv / pool attributes: strides and pads. Keras's "same" pads the odd row and column
    at the end (ONNX's SAME_UPPER); explicit pads when the input's size is known (ONNX
    Runtime takes no SAME_UPPER with dilation), SAME_UPPER otherwise."""
    attrs = {"strides": list(layer.strides)}
    if layer.padding != "same":
        attrs["pads"] = [0, 0, 0, 0]
        return attrs
    size = layer.input_shape[:2]
    if None in size:
        if tuple(dilations) != (1, 1):
            raise ValueError("dilated 'same' convolution needs a known input size")
        attrs["auto_pad"] = "SAME_UPPER"
        return attrs
    begin, end = [], []
    for n, k, s, d in zip(size, window, layer.strides, dilations):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    attrs["pads"] = begin + end
    return attrs


def _conv(b, x, layer, kernel, bias, group=1, dilations=(1, 1)):
    """Conv of NHWC x with a Keras (kh, kw, in / group, out) kernel."""
    w = b.const(layer.name + "_kernel", np.transpose(kernel, (3, 2, 0, 1)))
    inputs = [_nchw(b, x, layer.name), w]
    if bias is not None:
        inputs.append(b.const(layer.name + "_bias", bias))
    y = b.op("Conv", inputs, layer.name, group=group, dilations=list(dilations),
             kernel_shape=list(kernel.shape[:2]),
             **_window(layer, kernel.shape[:2], dilations))
    return _nhwc(b, y, layer.name)


def _layer(b, layer, xs):
    """The ONNX output name of one call of `layer` on inputs named xs."""
    kind, name = type(layer).__name__, layer.name
    w = {k: layer.backend.to_numpy(v.value) for k, v in layer.weights_by_name.items()}
    x = xs[0]
    act = activations.fused_name(layer)
    alpha = layer._activation_alpha() if hasattr(layer, "_activation_alpha") else None
    if kind in _IDENTITY:
        return x
    if kind == "Dense":
        y = b.op("MatMul", [x, b.const(name + "_kernel", w["kernel"])], name)
        if "bias" in w:
            y = b.op("Add", [y, b.const(name + "_bias", w["bias"])], name)
        return _activation(b, y, act, alpha, name)
    if kind == "Conv2D":
        y = _conv(b, x, layer, w["kernel"], w.get("bias"), layer.groups, layer.dilation_rate)
        return _activation(b, y, act, alpha, name)
    if kind == "DepthwiseConv2D":
        k = w["kernel"]                                 # (kh, kw, C, M) -> (kh, kw, 1, C*M)
        kernel = k.reshape(k.shape[0], k.shape[1], 1, k.shape[2] * k.shape[3])
        y = _conv(b, x, layer, kernel, w.get("bias"), k.shape[2])
        return _activation(b, y, act, alpha, name)
    if kind == "SeparableConv2D":
        k = w["depthwise_kernel"]
        kernel = k.reshape(k.shape[0], k.shape[1], 1, k.shape[2] * k.shape[3])
        mid = _conv(b, x, layer, kernel, None, k.shape[2])
        pw = b.const(name + "_pointwise", np.transpose(w["pointwise_kernel"], (3, 2, 0, 1)))
        inputs = [_nchw(b, mid, name), pw] + ([b.const(name + "_bias", w["bias"])]
                                             if "bias" in w else [])
        y = _nhwc(b, b.op("Conv", inputs, name, kernel_shape=[1, 1]), name)
        return _activation(b, y, act, alpha, name)
    if kind == "Conv2DTranspose":
        if layer.output_padding is not None or tuple(layer.dilation_rate) != (1, 1):
            raise ValueError("output_padding / dilation_rate are not exported")
        kernel = w["kernel"]                            # (kh, kw, out, in) -> (in, out, kh, kw)
        inputs = [_nchw(b, x, name), b.const(name + "_kernel", np.transpose(kernel, (3, 2, 0, 1)))]
        if "bias" in w:
            inputs.append(b.const(name + "_bias", w["bias"]))
        in_hw, out_hw = layer.input_shape[:2], layer.output_shape[:2]
        if None in in_hw or None in out_hw:
            raise ValueError("needs known input height and width")
        # out = s (in - 1) + output_padding + k - pads: the surplus is cropped as Keras's
        # "same" does (the odd row at the end), a shortfall (k < s) is output_padding
        begin, end, extra = [], [], []
        for i, o, k, st in zip(in_hw, out_hw, kernel.shape[:2], layer.strides):
            total = st * (i - 1) + k - o
            begin.append(max(total, 0) // 2)
            end.append(max(total, 0) - max(total, 0) // 2)
            extra.append(max(-total, 0))
        y = _nhwc(b, b.op("ConvTranspose", inputs, name, strides=list(layer.strides),
                          kernel_shape=list(kernel.shape[:2]), pads=begin + end,
                          output_padding=extra), name)
        return _activation(b, y, act, alpha, name)
    if kind in ("MaxPooling2D", "AveragePooling2D"):
        op = "MaxPool" if kind == "MaxPooling2D" else "AveragePool"
        y = b.op(op, [_nchw(b, x, name)], name, kernel_shape=list(layer.pool_size),
                 **_window(layer, layer.pool_size))
        return _nhwc(b, y, name)
    if kind in ("GlobalAveragePooling2D", "GlobalMaxPooling2D"):
        op = "ReduceMean" if kind == "GlobalAveragePooling2D" else "ReduceMax"
        return b.op(op, [x], name, axes=[1, 2], keepdims=int(getattr(layer, "keepdims", False)))
    if kind == "BatchNormalization":
        if layer.axis not in (-1, len(layer.input_shape)):
            raise ValueError(f"axis {layer.axis} (only the last axis is exported)")
        c = w["moving_mean"].shape[0]
        scale = w.get("gamma", np.ones(c, np.float32)) / np.sqrt(w["moving_variance"]
                                                                 + layer.epsilon)
        shift = w.get("beta", np.zeros(c, np.float32)) - w["moving_mean"] * scale
        y = b.op("Mul", [x, b.const(name + "_scale", scale)], name)
        return b.op("Add", [y, b.const(name + "_shift", shift)], name)
    if kind == "LayerNormalization":
        rank = len(layer.input_shape) + 1
        axes = sorted(a % rank for a in (layer.axis if isinstance(layer.axis, (list, tuple))
                                         else [layer.axis]))
        if axes != list(range(axes[0], rank)) or layer.rms_scaling:
            raise ValueError("only trailing axes without rms_scaling are exported")
        shape = tuple(layer.input_shape[a - 1] for a in axes)
        gamma = w.get("gamma", np.ones(shape, np.float32)).reshape(shape)
        beta = w.get("beta", np.zeros(shape, np.float32)).reshape(shape)
        return b.op("LayerNormalization", [x, b.const(name + "_gamma", gamma),
                                           b.const(name + "_beta", beta)], name,
                    axis=axes[0], epsilon=float(layer.epsilon))
    if kind in ("Activation", "ReLU", "LeakyReLU", "ELU"):
        return _activation(b, x, act, alpha, name)
    if kind == "Softmax":
        return b.op("Softmax", [x], name, axis=int(layer.axis))
    if kind == "PReLU":
        return b.op("PRelu", [x, b.const(name + "_alpha", w["alpha"])], name)
    if kind == "Flatten":
        return b.op("Flatten", [x], name, axis=1)
    if kind == "Reshape":
        shape = b.const(name + "_shape", [0] + list(layer.target_shape), np.int64)
        return b.op("Reshape", [x, shape], name)
    if kind == "Permute":
        return b.op("Transpose", [x], name, perm=[0] + list(layer.dims))
    if kind == "RepeatVector":
        y = b.op("Unsqueeze", [x, b.const(name + "_axis", [1], np.int64)], name)
        return b.op("Tile", [y, b.const(name + "_repeats", [1, layer.n, 1], np.int64)], name)
    if kind in _MERGE_OPS:
        return b.op(_MERGE_OPS[kind], xs, name)
    if kind == "Subtract":
        return b.op("Sub", xs, name)
    if kind == "Multiply":
        y = xs[0]
        for other in xs[1:]:
            y = b.op("Mul", [y, other], name)
        return y
    if kind == "Concatenate":
        return b.op("Concat", xs, name, axis=int(layer.axis))
    if kind in ("ZeroPadding2D", "Cropping2D"):
        (top, bottom), (left, right) = layer.padding
        if kind == "ZeroPadding2D":
            pads = b.const(name + "_pads", [0, top, left, 0, 0, bottom, right, 0], np.int64)
            return b.op("Pad", [x, pads], name)
        h, w_ = layer.input_shape[:2]
        starts = b.const(name + "_starts", [top, left], np.int64)
        ends = b.const(name + "_ends", [h - bottom, w_ - right], np.int64)
        return b.op("Slice", [x, starts, ends, b.const(name + "_axes", [1, 2], np.int64)], name)
    if kind == "UpSampling2D":
        if layer.interpolation != "nearest":
            raise ValueError(f"interpolation {layer.interpolation!r} (nearest is exported)")
        scales = b.const(name + "_scales", [1, 1] + list(layer.size))
        y = b.op("Resize", [_nchw(b, x, name), "", scales], name, mode="nearest",
                 nearest_mode="floor", coordinate_transformation_mode="asymmetric")
        return _nhwc(b, y, name)
    if kind == "Rescaling":
        y = b.op("Mul", [x, b.const(name + "_scale", layer.scale)], name)
        return b.op("Add", [y, b.const(name + "_offset", layer.offset)], name)
    if kind == "Normalization":    # the per-channel x * scale + shift the layer runs
        scale, shift = layer._vectors()
        y = b.op("Mul", [x, b.const(name + "_scale", scale)], name)
        return b.op("Add", [y, b.const(name + "_shift", shift)], name)
    raise ValueError("no ONNX form")


def _emit(b, graph, names):
    """Add the nodes of a model graph; `names` maps id(KerasTensor) -> ONNX name and is
    extended with every tensor the graph makes."""
    for entry in graph.entries:
        inputs = [names[id(t)] for t in entry.inputs]
        if hasattr(entry, "model"):      # a nested model: its graph, inlined
            inner = entry.model.graph
            scope = {id(t): n for t, n in zip(inner.inputs, inputs)}
            _emit(b, inner, scope)
            for t, inner_t in zip(entry.outputs, inner.outputs):
                names[id(t)] = scope[id(inner_t)]
            continue
        layer = entry.layer
        if LAYER_CLASSES.get(type(layer).__name__) is not type(layer) or \
                type(layer).__name__ == "Lambda":
            raise ValueError(f"export: {layer.describe()} cannot be exported to ONNX: its "
                             "computation is Python code (a Lambda, a layer of your own or a "
                             "subclassed model's call), which export does not trace")
        try:
            out = _layer(b, layer, inputs)
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise ValueError(f"export: {layer.describe()} cannot be exported to ONNX "
                             f"({exc})") from None
        names[id(entry.outputs[0])] = out


def to_onnx(model, opset=OPSET, emit=None):
    """The model's inference graph as an onnx.ModelProto; emit(builder, graph, names) adds
    the nodes (default: every layer in float, _emit)."""
    onnx = require("onnx", "onnx")
    b = _Builder(onnx)
    g = model.graph
    names, inputs = {}, []
    for t in g.inputs:
        names[id(t)] = t.layer.name
        dims = ["batch"] + [d if d is not None else f"{t.layer.name}_dim{i}"
                            for i, d in enumerate(t.sample_shape)]
        inputs.append(b.h.make_tensor_value_info(t.layer.name, onnx.TensorProto.FLOAT, dims))
    (emit or _emit)(b, g, names)
    outputs = []
    for i, t in enumerate(g.outputs):
        final = f"output_{i}"
        b.nodes.append(b.h.make_node("Identity", [names[id(t)]], [final], name=final))
        dims = ["batch"] + [d if d is not None else f"output_{i}_dim{j}"
                            for j, d in enumerate(t.sample_shape)]
        outputs.append(b.h.make_tensor_value_info(final, onnx.TensorProto.FLOAT, dims))
    graph = b.h.make_graph(b.nodes, model.name, inputs, outputs, b.initializers)
    proto = b.h.make_model(graph, opset_imports=[b.h.make_opsetid("", opset)],
                           producer_name="minidl")
    proto.ir_version = min(proto.ir_version, 9)   # readable by ONNX Runtime >= 1.16
    onnx.checker.check_model(proto, full_check=True)
    return proto


def export_onnx(model, filepath, opset=OPSET, emit=None):
    if not isinstance(opset, int) or opset < OPSET:
        raise ValueError(f"export: opset_version must be an int >= {OPSET}, got {opset!r}")
    model._require_built("export")
    proto = to_onnx(model, opset, emit)
    with atomic_write(os.fspath(filepath), "wb") as f:
        f.write(proto.SerializeToString())
    return proto
