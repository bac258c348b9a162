"""BatchNormalization + sign folded into an integer threshold at lq.convert (larq compute
engine's trick).

Where a converted binary layer L (linear activation) feeds a BatchNormalization B, directly or
through MaxPooling2D layers, and B feeds a converted binary layer N (whose input quantizer is a
sign), directly or through a Flatten (when B's channels are a multiple of 32, so that the packed
words of the flattened tensor are the flattened words), N only needs the signs of B's output.
What reaches B are L's sums, integers z in [-K, K] (K: L's taps times input channels; a max
pool keeps them integers), plus L's bias; B is monotonic in z per channel (increasing for
gamma > 0, decreasing for gamma < 0, constant for gamma == 0), so each channel's sign is +1
exactly on an interval [lo, hi] of z. B then packs N's input bits straight from its input with
binary_pack_thresholds instead of normalizing, and N skips its packing: no float
BatchNormalization output, no float sign.

The bounds are found by running B's own inference op (batchnorm_forward_infer, on the
backend) on every integer z in [-K, K] plus L's bias as binary_conv2d_forward adds it, then
reading where the result is >= 0 (binary_pack_input's +1): the same float arithmetic as the
unfolded path, so the packed bits are identical, gamma's sign and gamma == 0 included. A table
that is not one interval (it cannot be, for a monotonic BN) leaves B unfolded. The bounds are
made on the first prediction and again after any training step through B.

Where what reaches B is any float tensor instead (a float layer's output: the first, float
convolution of a binary network, or a binary layer with an activation), B is folded the same
way with float bounds: B's float arithmetic is monotonic in its input per channel (each IEEE
operation is), so the inputs whose output is not < 0 are again one interval of the float line,
and its end is found by bisecting the float32 values in order, evaluating B's own inference op
on the backend at every step (float_threshold_bounds): again the very arithmetic of the
unfolded path. This saves B's float output and the sign packing of N's input, the two largest
costs after the convolutions in zoo.binarynet(). (The one difference: a NaN reaching B, or an
infinity reaching a channel with gamma 0, is -1 when folded where B's NaN output gives +1;
predict refuses non-finite inputs, and float layers of finite weights only make them by
overflowing.)

Only B's and the Flatten's forward are wrapped (instance attributes): in training, and when B
is called on its own (eagerly, outside the model), they run their class's forward unchanged.
"""

import math

import numpy as np

from ..layers.core import Flatten
from ..layers.normalization import BatchNormalization
from ..layers.pooling import MaxPooling2D
from .. import activations


def is_packed(x):
    """True for the int32 packed bits a folded BatchNormalization hands on (activations are
    float32)."""
    return np.dtype(getattr(x, "dtype", np.float32)) == np.int32


class FoldedBatchNorm:
    """B.forward after folding: in inference, the packed signs of B(x) from thresholds on x."""

    def __init__(self, layer, source, consumer):
        self.layer, self.source = layer, source     # source None: float inputs (float_threshold_bounds)
        self.consumer = consumer    # the binary layer reading the packed bits
        self.bounds = None          # (backend, (2, C) tensor), or (backend, None): not one interval

    def __call__(self, call, x, training):
        layer = self.layer
        if training:
            self.bounds = None      # the statistics and the source's bias are about to change
            return BatchNormalization.forward(layer, call, x, training)
        if any(call is eager for eager in layer._eager_calls) or not _binary(self.consumer):
            # bn(x) on its own, or a consumer switched back to its float path: normalize
            return BatchNormalization.forward(layer, call, x, training)
        b = layer.backend
        if self.bounds is None or self.bounds[0] is not b:
            self.bounds = (b, threshold_bounds(self.source, layer) if self.source is not None
                           else float_threshold_bounds(layer))
        if self.bounds[1] is None:
            return BatchNormalization.forward(layer, call, x, training)
        shape = b.shape(x)
        bits = call.buffer("folded_bits", shape[:-1] + (-(-shape[-1] // 32),), "int32")
        b.binary_pack_thresholds(bits, x, self.bounds[1])
        return bits


class PackedFlatten:
    """Flatten.forward after folding: packed bits flatten as bits (their channels are whole
    words), anything else as before."""

    def __init__(self, layer):
        self.layer = layer

    def __call__(self, call, x, training):
        if not is_packed(x):
            return Flatten.forward(self.layer, call, x, training)
        b = self.layer.backend
        shape = b.shape(x)
        return b.reshape(x, (shape[0], math.prod(shape[1:])))


def _consumers(graph):
    """{id(symbolic tensor): [nodes reading it]} of a model's graph."""
    found = {}
    for node in graph.nodes:
        for tensor in node.inputs:
            found.setdefault(id(tensor), []).append(node)
    return found


def _nodes_of(graph):
    counts = {}
    for node in graph.nodes:
        counts[id(node.layer)] = counts.get(id(node.layer), 0) + 1
    return counts


def _binary(layer):
    return getattr(layer, "_binary_state", None) is not None


def graph_readers(model):
    """(graph, only_reader, counts) of `model`'s own graph, or None without one: only_reader(node)
    is the one node reading node's one output (not a model output), else None; counts[id(layer)]
    how many nodes call the layer."""
    graph = getattr(model, "graph", None)
    if graph is None:
        return None
    consumers, counts = _consumers(graph), _nodes_of(graph)
    outputs = {id(t) for t in graph.outputs}

    def only_reader(node):
        if len(node.outputs) != 1 or id(node.outputs[0]) in outputs:
            return None
        readers = consumers.get(id(node.outputs[0]), [])
        return readers[0] if len(readers) == 1 and counts[id(readers[0].layer)] == 1 else None

    return graph, only_reader, counts


def fuse(model):
    """Fold every L -> [MaxPooling2D ...] -> B -> [Flatten] -> N chain of `model`'s own graph
    (see the module docstring); returns [(L name, B name, N name)] of the chains folded."""
    readers = graph_readers(model)
    if readers is None:
        return []
    graph, only_reader, counts = readers
    fused = []
    fused_bns = set()
    for node in graph.nodes:
        source = node.layer
        if not _binary(source) or counts[id(source)] != 1 or activations.fused_name(source, None) != "linear":
            continue
        step = only_reader(node)
        while step is not None and type(step.layer) is MaxPooling2D:
            step = only_reader(step)
        if step is None or type(step.layer) is not BatchNormalization:
            continue
        bn = step.layer
        consumer = _fold(step, source, only_reader)
        if consumer is not None:
            fused.append((source.name, bn.name, consumer.name))
            fused_bns.add(id(bn))
    return fused + _fuse_float_inputs(graph, only_reader, counts, fused_bns)


def _fold(bn_node, source, only_reader):
    """Fold the BatchNormalization of bn_node into thresholds (source: the binary layer whose
    integer sums reach it, None for float inputs) if it feeds a converted binary layer N,
    directly or through a Flatten of whole words; returns N's layer, or None (nothing done)."""
    bn = bn_node.layer
    after = only_reader(bn_node)
    flatten = None
    if after is not None and type(after.layer) is Flatten and bn.moving_mean.shape[0] % 32 == 0:
        flatten, after = after.layer, only_reader(after)
    if after is None or not _binary(after.layer):
        return None
    bn.forward = FoldedBatchNorm(bn, source, after.layer)
    if flatten is not None:
        flatten.forward = PackedFlatten(flatten)
    return after.layer


def _fuse_float_inputs(graph, only_reader, counts, fused_bns):
    """Fold each B -> [Flatten] -> N chain not folded above whose B reads a float tensor: from
    any layer but a BatchNormalization or Flatten (which may hand on packed bits)."""
    producers = {id(t): node for node in graph.nodes for t in node.outputs}
    fused = []
    for node in graph.nodes:
        bn = node.layer
        if type(bn) is not BatchNormalization or id(bn) in fused_bns or counts[id(bn)] != 1 \
                or len(node.inputs) != 1:
            continue
        producer = producers.get(id(node.inputs[0]))
        if producer is None or isinstance(producer.layer, (BatchNormalization, Flatten)):
            continue
        consumer = _fold(node, None, only_reader)
        if consumer is not None:
            fused.append((producer.layer.name, bn.name, consumer.name))
    return fused


def unfold(model):
    """Undo fuse(): every wrapped forward back to its class's."""
    for layer in getattr(model, "layers", []):
        if isinstance(layer.forward, (FoldedBatchNorm, PackedFlatten)):
            del layer.forward


def threshold_bounds(source, bn):
    """(2, C) backend tensor of [lo, hi] per channel, in the units of bn's input (the integer
    sums z plus source's bias): where bn's inference output is not < 0; None when a channel's
    set is not one interval."""
    b = bn.backend
    kernel_shape = next(w.shape for w in source.weights if w.name == "kernel")
    k = math.prod(kernel_shape[:-1])
    f = kernel_shape[-1]
    z = np.repeat(np.arange(-k, k + 1, dtype=np.float32)[:, None], f, axis=1)
    if source.use_bias:                 # as binary_conv2d_forward adds it: one float32 add
        z = z + b.to_numpy(source.bias.value).astype(np.float32)
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
            return None                      # not one interval: leave B unfolded
        # in the units of B's input: z + bias as it arrives (float32(z + bias) is monotonic in z)
        lo[channel] = -np.inf if first == 0 else z[first, channel]
        hi[channel] = np.inf if last == 2 * k else z[last, channel]
    return b.from_numpy(np.stack([lo, hi]))


def _ordered(values):
    """float32 values -> int64 keys in the same order (-0.0 and 0.0 both 0)."""
    bits = np.asarray(values, np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _from_ordered(keys):
    bits = np.where(keys < 0, (-keys) | 0x80000000, keys).astype(np.uint32)
    return bits.view(np.float32)


def float_threshold_bounds(bn):
    """(2, C) backend tensor of [lo, hi] per channel: the float inputs x whose inference output
    bn(x) is not < 0 (binary_pack_input's +1), found by bisecting the finite float32 values in
    order with bn's own op (module docstring); +-inf bounds where a side is unbounded."""
    b = bn.backend
    c = bn.moving_mean.shape[0]
    gamma, beta = bn._affine
    table, out = b.empty((1, c)), b.empty((1, c))

    def positive(keys):
        b.copy_from_host(table, _from_ordered(keys)[None, :])
        with np.errstate(over="ignore"):           # +-FLT_MAX may normalize to +-inf (numpy)
            b.batchnorm_forward_infer(out, table, gamma, beta, bn.moving_mean.value,
                                      bn.moving_variance.value, bn.epsilon)
        return ~(b.to_numpy(out)[0] < 0)

    biggest = np.finfo(np.float32).max
    low, high = _ordered(np.full(c, -biggest)), _ordered(np.full(c, biggest))
    at_low, at_high = positive(low), positive(high)
    moving = at_low != at_high         # constant channels (gamma == 0) keep their side
    while np.any(moving & (high - low > 1)):
        middle = (low + high) // 2
        at_middle = positive(middle)
        like_low = at_middle == at_low  # keep positive(low) == at_low, positive(high) == at_high
        low = np.where(moving & like_low, middle, low)
        high = np.where(moving & ~like_low, middle, high)
    lo = np.where(at_low, -np.inf, np.where(at_high, _from_ordered(high), np.inf)).astype(np.float32)
    hi = np.where(at_high, np.inf, np.where(at_low, _from_ordered(low), -np.inf)).astype(np.float32)
    return b.from_numpy(np.stack([lo, hi]))
