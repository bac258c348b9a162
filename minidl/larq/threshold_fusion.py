"""BatchNormalization + sign folded into an integer threshold at lq.convert (larq compute
engine's trick).

Where a converted binary layer L (QuantConv2D or QuantDense, linear activation) feeds only a
BatchNormalization B, and B feeds only a converted binary layer N (whose input quantizer is a
sign), N only needs the signs of B's output. L's sums z are integers in [-K, K] (K: L's taps
times input channels), and B is monotonic in z per channel (increasing for gamma > 0,
decreasing for gamma < 0, constant for gamma == 0), so each channel's sign is +1 exactly on an
interval [lo, hi] of z. L then packs N's input bits straight from z with binary_pack_thresholds,
B passes the packed bits on untouched, and N skips its packing: no float BatchNormalization,
no float sign, no float activation tensor between them.

The bounds are found by running B's own inference op (batchnorm_forward_infer, on the
backend) on every integer z in [-K, K], plus L's bias as binary_conv2d_forward adds it, then
reading where the result is >= 0 (binary_pack_input's +1): the same float arithmetic as the
unfused path, so the packed bits are identical, gamma's sign and gamma == 0 included. A table
that is not one interval (it cannot be for a monotonic BN) leaves the pair unfused. The bounds
are computed on the first prediction and again after a training step (the state's invalidate).

Only B's forward is wrapped (an instance attribute): in training, and for any input that is
not packed bits, it runs BatchNormalization.forward unchanged.
"""

import numpy as np

from ..layers.conv1d import Lifted1D
from ..layers.normalization import BatchNormalization


def is_packed(x):
    """True for the int32 packed bits a fused layer hands on (activations are float32)."""
    return np.dtype(getattr(x, "dtype", np.float32)) == np.int32


class PackedPassThrough:
    """B.forward after fusion: packed bits go through unchanged, anything else is normalized."""

    def __init__(self, layer):
        self.layer = layer

    def __call__(self, call, x, training):
        if not training and is_packed(x):
            return x
        return BatchNormalization.forward(self.layer, call, x, training)


def _consumers(graph):
    """{id(symbolic tensor): [nodes reading it]} of a model's graph."""
    found = {}
    for node in graph.nodes:
        for tensor in node.inputs:
            found.setdefault(id(tensor), []).append(node)
    return found


def _single_node(layer, graph):
    nodes = [n for n in graph.nodes if n.layer is layer]
    return nodes[0] if len(nodes) == 1 else None


def _foldable_source(layer):
    return (getattr(layer, "_binary_state", None) is not None and not isinstance(layer, Lifted1D)
            and getattr(layer, "activation", None) == "linear")


def fuse(model):
    """Fold every L -> B -> N chain of `model`'s own graph (see the module docstring); returns
    [(L name, B name, N name)] of the chains folded."""
    graph = getattr(model, "graph", None)
    if graph is None:
        return []
    consumers = _consumers(graph)
    outputs = {id(t) for t in graph.outputs}
    fused = []
    for node in graph.nodes:
        source = node.layer
        if not _foldable_source(source) or _single_node(source, graph) is not node:
            continue
        out = node.outputs[0]
        readers = consumers.get(id(out), [])
        if len(node.outputs) != 1 or id(out) in outputs or len(readers) != 1:
            continue
        bn_node = readers[0]
        bn = bn_node.layer
        if type(bn) is not BatchNormalization or _single_node(bn, graph) is not bn_node:
            continue
        bn_out = bn_node.outputs[0]
        next_readers = consumers.get(id(bn_out), [])
        if id(bn_out) in outputs or len(next_readers) != 1:
            continue
        target = next_readers[0].layer
        if getattr(target, "_binary_state", None) is None or isinstance(target, Lifted1D) \
                or _single_node(target, graph) is not next_readers[0]:
            continue
        source._binary_state.fold = bn
        if not isinstance(bn.forward, PackedPassThrough):
            bn.forward = PackedPassThrough(bn)
        fused.append((source.name, bn.name, target.name))
    return fused


def threshold_bounds(layer, taps_times_channels):
    """(2, F) backend tensor of [lo, hi] per output channel of `layer` (its state's folded
    BatchNormalization B), or None when a channel's +1 set is not one interval."""
    b = layer.backend
    bn = layer._binary_state.fold
    k = int(taps_times_channels)
    f = layer.kernel.shape[-1]
    z = np.repeat(np.arange(-k, k + 1, dtype=np.float32)[:, None], f, axis=1)
    if layer.use_bias:                  # as binary_conv2d_forward adds it: one float32 add
        z = z + b.to_numpy(layer.bias.value).astype(np.float32)
    table = b.from_numpy(np.ascontiguousarray(z, dtype=np.float32))
    out = b.empty((2 * k + 1, f))
    gamma, beta = bn._affine
    b.batchnorm_forward_infer(out, table, gamma, beta, bn.moving_mean.value, bn.moving_variance.value, bn.epsilon)
    positive = ~(b.to_numpy(out) < 0)       # binary_pack_input: x < 0 is -1, anything else +1
    lo = np.full(f, np.inf, np.float32)
    hi = np.full(f, -np.inf, np.float32)
    for channel in range(f):
        where = np.flatnonzero(positive[:, channel])
        if where.size == 0:
            continue                         # -1 everywhere: lo > hi
        first, last = where[0], where[-1]
        if last - first + 1 != where.size:
            return None                      # not one interval: leave the pair unfused
        lo[channel] = -np.inf if first == 0 else first - k
        hi[channel] = np.inf if last == 2 * k else last - k
    return b.from_numpy(np.stack([lo, hi]))
