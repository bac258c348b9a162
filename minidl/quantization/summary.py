"""QuantizedModel.summary(): the float model's layers, each with how it runs in the int8 model."""

from ..layers.base import format_shape


def _runs_as(qmodel):
    """Per graph node the text of the "Runs as" column."""
    nodes = qmodel.float_model.graph.nodes
    uint8 = set()    # ids of the tensors that flow as uint8
    texts = [None] * len(nodes)
    for i, (node, kind, step) in enumerate(zip(nodes, qmodel.kinds, qmodel.steps)):
        k = kind["kind"]
        if k in ("conv", "dense"):
            parts = ["int8"]
            if kind["bn"] is not None:
                parts.append(f"+ {nodes[kind['bn']].layer.name} folded")
                texts[kind["bn"]] = f"folded into {node.layer.name}"
            if step["relu"]:
                parts.append("+ relu")
            out = kind["fused_output"]
            for j in range(i + 1, len(nodes)):   # the fused ReLU layer, if any
                if nodes[j].outputs[0] is out and texts[j] is None:
                    texts[j] = f"fused into {node.layer.name}"
            parts.append("-> uint8" if step["output"] is not None else "-> float32")
            if step["output"] is not None:
                uint8.add(id(out))
            texts[i] = " ".join(parts)
        elif k == "add":
            texts[i] = "uint8 add" + (" + relu" if step["relu"] else "")
            uint8.add(id(kind["fused_output"]))
            if kind["fused_output"] is not node.outputs[0]:
                for j in range(i + 1, len(nodes)):
                    if nodes[j].outputs[0] is kind["fused_output"]:
                        texts[j] = f"fused into {node.layer.name}"
        elif k in ("maxpool", "reshape", "identity") and id(node.inputs[0]) in uint8:
            uint8.add(id(node.outputs[0]))
            texts[i] = "uint8" if k != "identity" else "uint8 (no-op)"
        elif k == "identity":
            texts[i] = "float32 (no-op)"
        elif texts[i] is None:
            texts[i] = "float32"
    return texts


def summary_lines(qmodel, line_length=None):
    widths = [33, 26, 11, 30]
    if line_length is not None:   # Keras's line_length: the columns scaled to it
        scale = max(int(line_length), 40) / sum(widths)
        widths = [max(8, int(w * scale)) for w in widths]
    total = sum(widths)

    def row(cells):
        return "".join(f" {c}".ljust(w) if len(c) < w - 1 else f" {c} "
                       for c, w in zip(cells, widths)).rstrip()

    info = qmodel.info()
    lines = [f'QuantizedModel: "{qmodel.name}" ({info["method"]} calibration, int8 kernel '
             f'{info["kernel"]} on {info["backend"]})', "_" * total,
             row(["Layer (type)", "Output Shape", "Param #", "Runs as"]), "=" * total]
    graph = qmodel.float_model.graph
    params = 0
    for node, text in zip(graph.nodes, _runs_as(qmodel)):
        layer = node.layer
        count = sum(w.size for w in layer.get_weights()) if layer.built else 0
        params += count
        lines.append(row([f"{layer.name} ({type(layer).__name__})", format_shape(layer.output_shape),
                          f"{count:,}", text]))
    int8 = sum(a.size for key, a in qmodel.arrays.items() if key.endswith("/w"))
    lines += ["=" * total, f"Float parameters: {params:,}",
              f"int8 layers: {len(info['int8_layers'])} ({int8:,} packed int8 weights)",
              "_" * total]
    return lines
