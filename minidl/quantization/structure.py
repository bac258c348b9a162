"""Which layers of a float model run in int8, and what folds into them.

Each node of the model's graph gets a kind:
  conv, dense   int8 x int8 -> int32, requantized (or dequantized) in the epilogue
  add           Add of two tensors, in int64 fixed point on uint8 (a ReLU after it fused)
  maxpool       on uint8 when its input is uint8 (max commutes with the monotone quantization)
  reshape       Flatten / Reshape: a view, of either form
  identity      layers that do nothing at inference (Dropout and the noise layers)
  alias         a BatchNormalization folded into the preceding conv, or a ReLU fused into it
  float         everything else, run by the float layer itself on dequantized values
"""

import numpy as np

from .. import layers as L

IDENTITY_LAYERS = ("Dropout", "SpatialDropout2D", "GaussianNoise", "GaussianDropout", "AlphaDropout")
UINT8_CONSUMERS = ("conv", "dense", "add", "maxpool", "reshape", "identity")


def _is_relu(layer):
    return type(layer) in (L.Activation, L.ReLU) and layer._activation == "relu"


def _foldable_bn(layer):
    return type(layer) is L.BatchNormalization and layer.axis in (-1, 3)


def _plain_conv(layer):
    """A Conv2D the int8 kernels run: no dilation, one group (others run in float)."""
    return tuple(getattr(layer, "dilation_rate", (1, 1))) == (1, 1) and getattr(layer, "groups", 1) == 1


def plan_kinds(graph):
    """[{kind, fused_output (tensor), relu, float_activation, bn (node index or None)}] per
    node of graph.nodes, and the consumers of each tensor {id: [node index]}."""
    nodes = graph.nodes
    seen = set()
    consumers = {}
    for i, node in enumerate(nodes):
        if id(node.layer) in seen:
            raise ValueError(f"minidl.quantization: {node.layer.describe()} is called more than "
                             "once in the model; shared layers are not supported")
        seen.add(id(node.layer))
        for t in node.inputs:
            consumers.setdefault(id(t), []).append(i)
    outputs = {id(t) for t in graph.outputs}

    def only_consumer(tensor):
        users = consumers.get(id(tensor), [])
        return users[0] if len(users) == 1 and id(tensor) not in outputs else None

    kinds = [None] * len(nodes)
    for i, node in enumerate(nodes):
        if kinds[i] is not None:
            continue
        layer = node.layer
        name = type(layer).__name__
        entry = {"kind": "float", "fused_output": node.outputs[0], "relu": False,
                 "float_activation": None, "bn": None}
        if type(layer) is L.Dense or (type(layer) is L.Conv2D and _plain_conv(layer)):
            entry["kind"] = "conv" if type(layer) is L.Conv2D else "dense"
            act = layer._activation
            entry["relu"] = act == "relu"
            entry["float_activation"] = None if act in ("linear", "relu") else act
            out = node.outputs[0]
            j = only_consumer(out)
            if act == "linear" and entry["kind"] == "conv" and j is not None \
                    and _foldable_bn(nodes[j].layer):
                entry["bn"] = j
                kinds[j] = {"kind": "alias"}
                out = nodes[j].outputs[0]
                j = only_consumer(out)
            if act == "linear" and j is not None and _is_relu(nodes[j].layer):
                entry["relu"] = True
                kinds[j] = {"kind": "alias"}
                out = nodes[j].outputs[0]
            entry["fused_output"] = out
        elif type(layer) is L.Add and len(node.inputs) == 2:
            entry["kind"] = "add"
            j = only_consumer(node.outputs[0])
            if j is not None and _is_relu(nodes[j].layer):
                entry["relu"] = True
                kinds[j] = {"kind": "alias"}
                entry["fused_output"] = nodes[j].outputs[0]
        elif type(layer) is L.MaxPooling2D:
            entry["kind"] = "maxpool"
        elif type(layer) in (L.Flatten, L.Reshape):
            entry["kind"] = "reshape"
        elif name in IDENTITY_LAYERS:
            entry["kind"] = "identity"
        kinds[i] = entry
    return kinds, consumers


def _host(layer, weight):
    return np.asarray(layer.backend.to_numpy(weight.value), np.float64)


def folded_matrix(node, kind, nodes):
    """The float (k, n) weight matrix and bias (or None) of a conv / dense node, with the
    BatchNormalization that follows it folded in."""
    layer = node.layer
    kernel = _host(layer, layer.kernel)
    matrix = kernel.reshape(-1, kernel.shape[-1])
    bias = _host(layer, layer.bias) if layer.use_bias else None
    if kind["bn"] is not None:
        bn = nodes[kind["bn"]].layer
        c = matrix.shape[1]
        gamma = _host(bn, bn.gamma) if bn.gamma is not None else np.ones(c)
        beta = _host(bn, bn.beta) if bn.beta is not None else np.zeros(c)
        mean, var = _host(bn, bn.moving_mean), _host(bn, bn.moving_variance)
        factor = gamma / np.sqrt(var + bn.epsilon)
        matrix = matrix * factor
        bias = ((bias if bias is not None else 0.0) - mean) * factor + beta
    return matrix, bias
