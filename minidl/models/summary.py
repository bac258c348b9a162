"""model.summary(): the Keras 2 table of layers, output shapes and parameter counts.

A functional model lists its inputs, then each layer or nested model once with what feeds
each of its calls ("Connected to", Keras's name[node][tensor]); show_trainable adds
Keras's Trainable column (Y, N, or - for a layer without weights)."""

import math

from ..layers.base import format_shape, several_shapes


def _output_shape(item):
    if not item.built:    # a subclassed model's layer before its first call, as Keras 3
        return "?"
    shape = item.output_shape
    if isinstance(shape, list):   # a nested model with several outputs
        return "[" + ", ".join(str(tuple(s)) for s in shape) + "]"
    if getattr(item, "graph", None) is not None:   # a nested model's shape has the batch axis
        return str(tuple(shape)).replace(",)", ")")
    if several_shapes(shape):   # a layer's call of several outputs (return_state)
        return "[" + ", ".join(format_shape(s) for s in shape) + "]"
    return format_shape(shape)


def _connections(model):
    """{id(layer or model): ["name[node][index]", ...]} over the graph's calls."""
    g = model.graph
    node_index, names = {}, {}
    for t in g.inputs:
        node_index[id(t)] = f"{t.layer.name}[0][0]"
    counts = {}
    for entry in g.entries:
        item = entry.model if hasattr(entry, "model") else entry.layer
        k = counts.get(id(item), 0)
        counts[id(item)] = k + 1
        names.setdefault(id(item), []).extend(node_index.get(id(t), "?") for t in entry.inputs)
        for j, t in enumerate(entry.outputs):
            node_index[id(t)] = f"{item.name}[{k}][{j}]"
    return names


def summary_lines(model, show_trainable=False):
    # a subclassed model lists its tracked layers, as a Sequential does (Keras 3)
    functional = type(model).__name__ != "Sequential" and not hasattr(model, "tracked_layers")
    widths = [33, 26, 11] + ([30] if functional else []) + ([10] if show_trainable else [])
    total = sum(widths)
    headers = ["Layer (type)", "Output Shape", "Param #"] + (["Connected to"] if functional else [])
    headers += ["Trainable"] if show_trainable else []

    def row(cells):
        return "".join(f" {c}".ljust(w) if len(c) < w - 1 else f" {c} " for c, w in zip(cells, widths)).rstrip()

    lines = [f'Model: "{model.name}"', "_" * total, row(headers), "=" * total]
    items = model.layers
    connected = {}
    if functional:
        items = model.graph.layers
        connected = _connections(model)
    for i, item in enumerate(items):
        # an op's node (layers/op_nodes.py) shows the op's Keras class name, as Keras's does
        kind = getattr(item, "summary_type", None) or type(item).__name__
        kind = "Functional" if kind == "Model" else kind   # Keras 3's name for Model(...)
        cells = [f"{item.name} ({kind})", _output_shape(item),
                 str(item.count_params()) if item.built else "0 (unbuilt)"]
        if functional:
            cells.append(", ".join(connected.get(id(item), [])) or "-")
        if show_trainable:
            cells.append(("Y" if item.trainable else "N") if item.weights else "-")
        lines.append(row(cells))
        lines.append(("=" if i == len(items) - 1 else "_") * total if functional else "")
    if not functional:
        lines = [l for l in lines if l != ""]
        lines.append("=" * total)
    trainable = sum(math.prod(w.shape) for w in model.trainable_weights)
    count = model.count_params()
    lines += [f"Total params: {count:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {count - trainable:,}", "_" * total]
    return lines
