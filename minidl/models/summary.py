"""model.summary(): the Keras 2 table of layers, output shapes and parameter counts."""

import math

from ..layers.base import format_shape


def summary_lines(model):
    functional = type(model).__name__ != "Sequential"
    widths = [33, 26, 11] + ([30] if functional else [])
    total = sum(widths)
    headers = ["Layer (type)", "Output Shape", "Param #"] + (["Connected to"] if functional else [])

    def row(cells):
        return "".join(f" {c}".ljust(w) if len(c) < w - 1 else f" {c} " for c, w in zip(cells, widths)).rstrip()

    lines = [f'Model: "{model.name}"', "_" * total, row(headers), "=" * total]
    layers = model.graph.layers if functional else model.layers
    for i, layer in enumerate(layers):
        cells = [f"{layer.name} ({type(layer).__name__})", format_shape(layer.output_shape),
                 str(layer.count_params())]
        if functional:
            cells.append(", ".join(t.layer.name for t in layer.inbound) or "[]")
        lines.append(row(cells))
        lines.append(("=" if i == len(layers) - 1 else "_") * total if functional else "")
    if not functional:
        lines = [l for l in lines if l != ""]
        lines.append("=" * total)
    trainable = sum(math.prod(w.shape) for l in model.layers for w in l.trainable_weights)
    count = model.count_params()
    lines += [f"Total params: {count:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {count - trainable:,}", "_" * total]
    return lines

