"""Test-time augmentation for evaluate / predict: outputs averaged over transformed views.

    tta="flip"            the image and its left-right mirror, 1/2 each
    tta="flip_translate"  airbench's six views: weight 1/4 for the image and its mirror, 1/8
                          for each of the two images shifted by one pixel up-left and down-right
                          (reflect padding: the border row and column repeat their inner
                          neighbour) and their mirrors

Each view is one or two backend `take` ops on the input batch (row and column index lists,
the mirror folded into the column list), so nothing leaves the device. What is averaged is
the logits: a head whose loss is fused with a final softmax / sigmoid averages that layer's
pre-activation and applies the activation once to the average; any other output is averaged
as it is.
"""

import numpy as np
from .. import activations

MODES = ("flip", "flip_translate")


def _views(mode, height, width):
    """(row indices or None, column indices or None, weight) of each view."""
    def shifted(n, by):   # out[i] = in[reflect(i + by)], reflect(-1) = 1, reflect(n) = n - 2
        index = np.arange(n) + by
        index = np.where(index < 0, -index, index)
        return np.where(index >= n, 2 * (n - 1) - index, index)

    mirror = np.arange(width)[::-1]
    if mode == "flip":
        return [(None, None, 0.5), (None, mirror, 0.5)]
    views = [(None, None, 0.25), (None, mirror, 0.25)]
    for by in (-1, 1):
        rows, cols = shifted(height, by), shifted(width, by)
        views += [(rows, cols, 0.125), (rows, cols[::-1], 0.125)]
    return views


class TestTimeAugmentation:
    """The views of `mode` for `model`'s image inputs (each (N, H, W, C))."""

    def __init__(self, model, mode, owner):
        if mode not in MODES:
            raise ValueError(f"{owner}: tta must be None or one of {list(MODES)}, got {mode!r}")
        shapes = model.graph.input_shapes
        if not all(len(shape) == 3 for shape in shapes):
            raise ValueError(f"{owner}: tta={mode!r} needs image inputs (N, height, width, channels), "
                             f"got input shapes {[(None,) + tuple(s) for s in shapes]}")
        self.model, self.mode, self.owner = model, mode, owner
        self._views = {}   # (height, width) -> views, uploaded once per image size
        heads = model._heads if model.compiled else []
        self.fused = {h.index for h in heads if h.fused}

    def views(self, height, width):
        if (height, width) not in self._views:
            upload = self.model.backend.from_numpy
            self._views[(height, width)] = [
                (None if r is None else upload(np.ascontiguousarray(r, np.int32)),
                 None if c is None else upload(np.ascontiguousarray(c, np.int32)), w)
                for r, c, w in _views(self.mode, height, width)]
        return self._views[(height, width)]

    def forward(self, inputs):
        """Like graph.forward(inputs, training=False), the outputs averaged over the views."""
        model, graph, b = self.model, self.model.graph, self.model.backend
        sizes = {tuple(b.shape(x))[1:3] for x in inputs}
        if len(sizes) != 1:
            raise ValueError(f"{self.owner}: tta={self.mode!r} needs every input image of one size, "
                             f"got {sorted(sizes)}")
        get = model._buffers.get
        sums, outputs = None, None
        for v, (rows, cols, weight) in enumerate(self.views(*sizes.pop())):
            views = []
            for i, x in enumerate(inputs):
                shape = tuple(b.shape(x))
                if rows is not None:
                    shifted = get(("tta_rows", i), shape)
                    b.take(shifted, x, rows, 1)
                    x = shifted
                if cols is not None:
                    view = get(("tta_view", i), shape)
                    b.take(view, x, cols, 2)
                    x = view
                views.append(x)
            outputs = graph.forward(views, training=False, lend=True)
            values = [graph.preactivation(i) if i in self.fused else out for i, out in enumerate(outputs)]
            if sums is None:
                sums = [get(("tta_sum", i), tuple(b.shape(value))) for i, value in enumerate(values)]
            for total, value in zip(sums, values):
                b.axpby(total, weight, value, 1.0 if v else 0.0, total if v else value)
        for i, (total, out) in enumerate(zip(sums, outputs)):
            if i in self.fused:
                b.copy(graph.preactivation(i), total)
                b.activation_forward(out, total, activations.fused_name(graph.outputs[i].layer))
            else:
                b.copy(out, total)
        return outputs


def inference(model, inputs):
    """The forward pass of evaluate / predict: averaged over views while model._tta is set."""
    tta = getattr(model, "_tta", None)
    if tta is None:
        return model.graph.forward(inputs, training=False, lend=True)
    return tta.forward(inputs)
