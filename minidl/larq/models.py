"""larq.models.summary: per layer, the input precision, the output shape, the weight counts
by bit width, the memory they take, and the multiply-accumulates by precision; then the
model's totals, its size, its float-32 equivalent and the share of binarized MACs. The
counting rules are larq's (a weight's bit width is its quantizer's precision, else 32;
BatchNormalization's beta and gamma fold into the moving statistics; a MAC's precision is the
larger of the input's and the weight's)."""

import math

from ..layers.conv import Conv2D
from ..layers.conv1d import LiftedWeight
from ..layers.core import Dense, Flatten
from ..layers.depthwise import DepthwiseConv2D, SeparableConv2D
from ..layers.normalization import BatchNormalization
from ..layers.pooling import AveragePooling2D, MaxPooling2D

MAC_LAYERS = (Conv2D, Dense, DepthwiseConv2D, SeparableConv2D)   # their Quant* subclasses too
COUNTED_LAYERS = MAC_LAYERS + (Flatten, BatchNormalization, MaxPooling2D, AveragePooling2D)


def _weight_precision(layer, weight):
    for attribute, quantizer in (("kernel", "kernel_quantizer"), ("_depthwise_kernel", "depthwise_quantizer"),
                                 ("pointwise_kernel", "pointwise_quantizer")):
        held = getattr(layer, attribute, None)
        if isinstance(held, LiftedWeight):       # QuantConv1D's kernel, seen in 2-D
            held = held.weight
        if held is weight and getattr(layer, quantizer, None) is not None:
            return getattr(layer, quantizer).precision or 32
    return 32


class _LayerProfile:
    def __init__(self, layer):
        self.name = layer.name
        weights = list(layer.weights)
        if isinstance(layer, BatchNormalization):   # folded into the moving statistics
            names = [w.name for w in weights]
            for kept, folded in (("moving_mean", "beta"), ("moving_variance", "gamma")):
                if kept in names and folded in names:
                    weights = [w for w in weights if w.name != folded]
                    names = [w.name for w in weights]
        trainable = layer.trainable_weights
        # (count, bits, trainable, is_bias)
        self.weights = [(math.prod(w.shape), _weight_precision(layer, w), any(w is t for t in trainable),
                         "bias" in w.name) for w in weights]
        quantizer = getattr(layer, "input_quantizer", None)
        self.input_precision = quantizer.precision if quantizer is not None else None
        shape = layer.output_shape
        self.output_shape = (-1,) + tuple(-1 if d is None else d for d in shape) if isinstance(shape, tuple) else None
        self.counted = isinstance(layer, COUNTED_LAYERS) and self.output_shape is not None
        pixels = None
        if self.output_shape is not None:
            pixels = {4: lambda s: s[1] * s[2], 3: lambda s: s[1], 2: lambda s: 1}.get(
                len(self.output_shape), lambda s: None)(self.output_shape)
        self.macs = []    # (count, precision)
        if isinstance(layer, MAC_LAYERS) and pixels:
            self.macs = [(count * pixels, max(self.input_precision or 32, bits))
                         for count, bits, _, bias in self.weights if not bias]

    def weight_count(self, bits=None, trainable=None):
        return sum(c for c, b, t, _ in self.weights if (bits is None or b == bits)
                   and (trainable is None or t == trainable))

    @property
    def memory(self):
        return sum(c * b for c, b, _, _ in self.weights)

    @property
    def int8_memory(self):
        return sum(c * min(b, 8) if b > 8 else c * b for c, b, _, _ in self.weights)

    @property
    def fp_memory(self):
        return sum(32 * c for c, _, _, _ in self.weights)

    def mac_count(self, precision=None):
        if not self.counted:
            return None
        return sum(n for n, p in self.macs if precision is None or p == precision)


def _profiles(model):
    found = []
    for layer in model.layers:
        if hasattr(layer, "layers") and not hasattr(layer, "forward_param"):   # a nested model
            found.extend(_profiles(layer))
        else:
            found.append(_LayerProfile(layer))
    return found


def _readable_number(num):
    num = float(f"{num:.3g}")
    if num < 1000:
        return str(num).rstrip("0").rstrip(".")
    if num >= 1e15:
        return f"{num:.2E}"
    magnitude = 0
    while abs(num) >= 1000 and magnitude < 4:
        magnitude += 1
        num /= 1000.0
    return f"{num:.3g}".rstrip(".") + ["", " k", " M", " B", " T"][magnitude]


def _readable_memory(bits):
    size = bits / 8
    for i, suffix in enumerate(["B", "KiB", "MiB", "GiB"]):
        rounded = size / 1024 ** i
        if rounded < 1024:
            break
    return f"{rounded:,.2f} {suffix}"


def _entry(value, units=1):
    if value is None:
        return "?"
    if isinstance(value, str) or value == 0 or units == 1:
        return value
    return value / units


def _text(value):
    return f"{value:.2f}" if type(value) is float else str(value)


def _table(rows, title, heading, footing, align_right):
    """An ASCII table in terminaltables' style (larq prints with AsciiTable): cells may hold
    several lines; the title sits in the top border."""
    rows = [[_text(v).split("\n") for v in row] for row in rows]
    widths = [max(len(line) for row in rows for line in row[i]) for i in range(len(rows[0]))]
    inner = sum(widths) + 2 * len(widths)
    border = "+" + "-" * inner + "+"
    top = "+" + (title + "-" * inner)[:inner] + "+" if title and len(title) <= inner else border
    out = [top]
    for r, row in enumerate(rows):
        for k in range(max(len(cell) for cell in row)):
            cells = []
            for i, cell in enumerate(row):
                line = cell[k] if k < len(cell) else ""
                cells.append(" " + (line.rjust(widths[i]) if align_right and i else line.ljust(widths[i])) + " ")
            out.append("|" + "".join(cells) + "|")
        if (heading and r == 0) or (footing and r == len(rows) - 2):
            out.append(border)
    out.append(border)
    return "\n".join(out)


def summary(model, print_fn=None, include_macs=True):
    """Print larq's two tables for `model` ("<name> stats" per layer, "<name> summary")."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`model.build()` or calling `model.fit()` with some data, or specify an "
                         "`input_shape` argument in the first layer(s) for automatic build.")
    print_fn = print_fn or print
    profiles = _profiles(model)
    bit_widths = sorted({b for p in profiles for _, b, _, _ in p.weights})
    precisions = sorted({q for p in profiles for _, q in p.macs}) if include_macs else []
    header = (["Layer", "Input prec.\n(bit)", "Outputs"] + [f"# {b}-bit\nx 1" for b in bit_widths]
              + ["Memory\n(kB)"] + [f"{q}-bit MACs" for q in precisions])
    rows = [header]
    for p in profiles:
        rows.append([p.name, p.input_precision or "-", str(p.output_shape or "multiple")]
                    + [_entry(p.weight_count(b)) for b in bit_widths] + [_entry(p.memory, 8 * 1024)]
                    + [_entry(p.mac_count(q)) for q in precisions])
    total_memory = sum(p.memory for p in profiles)
    rows.append(["Total", "", ""] + [_entry(sum(p.weight_count(b) for p in profiles)) for b in bit_widths]
                + [_entry(total_memory, 8 * 1024)]
                + [_entry(sum(p.mac_count(q) or 0 for p in profiles)) for q in precisions])
    print_fn(_table(rows, f"{model.name} stats", True, True, True))

    fp_memory = sum(p.fp_memory for p in profiles)
    lines = [["Total params", _readable_number(sum(p.weight_count() for p in profiles))],
             ["Trainable params", _readable_number(sum(p.weight_count(trainable=True) for p in profiles))],
             ["Non-trainable params", _readable_number(sum(p.weight_count(trainable=False) for p in profiles))],
             ["Model size", _readable_memory(total_memory)],
             ["Model size (8-bit FP weights)", _readable_memory(sum(p.int8_memory for p in profiles))],
             ["Float-32 Equivalent", _readable_memory(fp_memory)],
             ["Compression Ratio of Memory", total_memory / max(1e-8, fp_memory)]]
    if include_macs:
        macs = sum(p.mac_count() or 0 for p in profiles)
        binarized = sum(p.mac_count(1) or 0 for p in profiles) / max(1, macs)
        ternarized = sum(p.mac_count(2) or 0 for p in profiles) / max(1, macs)
        lines.append(["Number of MACs", _readable_number(macs)])
        if binarized > 0:
            lines.append(["Ratio of MACs that are binarized", f"{binarized:.4f}"])
        if ternarized > 0:
            lines.append(["Ratio of MACs that are ternarized", f"{ternarized:.4f}"])
    print_fn(_table(lines, f"{model.name} summary", False, False, False))


__all__ = ["summary"]
