"""One model output's loss, loss weight, metrics, buffers and running counters (a head).

compile() makes one head per output from a loss (or a list / dict of losses), loss_weights
and metrics (a list for every output, a list of lists, or a dict), as Keras. The total
loss is the sum of loss_weight * mean loss over the heads; logs name a head's values
"<output>_loss" and "<output>_<metric>" when the model has several outputs, as Keras 3.
"""

import copy
import math
from collections.abc import Mapping

from .. import losses as losses_mod
from .. import metrics as metrics_mod
from ..layers.base import format_shape
from .. import activations


def _per_output(value, names, argument, owner, default=None):
    """`value` for each output: a dict by output name, a list in order, or one value for
    all outputs (None: `default`)."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"{owner}: {argument} has keys {unknown} that are not output names "
                             f"{names}")
        return [value.get(n, default) for n in names]
    if isinstance(value, (list, tuple)) and len(names) > 1:
        if len(value) != len(names):
            raise ValueError(f"{owner}: {argument} has {len(value)} entries for "
                             f"{len(names)} outputs {names}")
        return list(value)
    return [value] * len(names)


def _metric_lists(metrics, names, owner, argument="metrics"):
    if metrics is None:
        return [[] for _ in names]
    if isinstance(metrics, str) or not isinstance(metrics, (list, tuple, Mapping)):
        raise TypeError(f"{owner}: {argument} must be a list of names (a list of lists or a "
                        f"dict by output name for several outputs), got {metrics!r}")
    if isinstance(metrics, Mapping):
        per = _per_output(metrics, names, argument, owner, default=[])
    elif len(names) > 1 and metrics and all(isinstance(m, (list, tuple)) or m is None
                                             for m in metrics):
        per = _per_output(list(metrics), names, argument, owner)
    else:
        per = [list(metrics)] * len(names)
    return [[m] if isinstance(m, str) else list(m or []) for m in per]


class Head:
    """Loss and metrics of output `index` of a compiled model."""

    def __init__(self, graph, index, name, loss, weight, metrics, prefix):
        self.index, self.name, self.loss, self.weight = index, name, loss, weight
        self.shape = graph.output_shapes[index]
        layer = graph.outputs[index].layer
        self.fused = loss.configure(activations.fused_name(layer))
        if self.fused and not graph.fusable(index):
            # the output also feeds another layer: the loss reads the activated values
            self.fused = loss.configure("linear")
        self.metrics = metrics
        self.prefix = prefix                   # "" for a single-output model, else "<name>_"
        # an output with unknown (None) dims takes each batch's concrete shape (resolve)
        self.declared_shape, self.unknown = self.shape, None in self.shape
        # targets shaped otherwise than the output (a loss of your own reads them as given,
        # as Keras hands y_true over): their sample shape, set by the data (take_targets)
        self.free_targets = None
        # loss rows per sample: one per position, or one for a loss of the whole sample (CTC)
        self.positions = 1 if (self.unknown or loss.per_sample) else math.prod(self.shape[:-1])
        self.loss_name = prefix + "loss"
        self.metric_names = [prefix + m.name for m in metrics]

    def resolve(self, shape):
        """Take a batch's concrete output shape (an output with unknown dims)."""
        self.shape = tuple(shape)
        self.positions = 1 if self.whole_samples else math.prod(shape[:-1])

    @property
    def whole_samples(self):
        """Whether the loss reads whole samples (the (n, ...) output and its targets as they
        are) rather than rows of one position each."""
        return self.loss.per_sample or self.free_targets is not None

    def take_targets(self, sample_shape, output_shape, argument):
        """Note the sample shape of the targets the data gives (after prepare_targets) for an
        output of `output_shape`; True when that changes the buffers' shapes. Only a loss of
        your own accepts targets of another shape than the output's (Loss.prepare_targets)."""
        wanted = tuple(self.loss.target_shape(1, output_shape)[1:])
        free = None if tuple(sample_shape) == wanted else tuple(sample_shape)
        if free == self.free_targets:
            return False
        if free is not None and self.metrics:
            raise ValueError(f"{argument}: the targets of shape (None, {', '.join(map(str, free))}) "
                             f"are not shaped like output {self.name!r} {format_shape(output_shape)}: "
                             f"loss {self.loss.name!r} reads them as they are, but the metrics "
                             f"{[m.name for m in self.metrics]} compare them with the output")
        self.free_targets = free
        self.positions = 1 if (self.unknown or self.whole_samples) else math.prod(output_shape[:-1])
        return True


    def buffers(self, get, b, n):
        shape = (n,) + self.shape
        rows = n * self.positions
        tag = self.index
        target_shape = (self.loss.target_shape(n, self.shape) if self.free_targets is None
                        else (n,) + self.free_targets)
        bufs = {"y": get(("y", tag), target_shape, self.loss.target_dtype),
                "loss": get(("loss", tag), (rows,)), "probs": get(("probs", tag), shape),
                "dpred": get(("dpred", tag), shape)}
        if self.whole_samples:   # the loss reads the whole (n, ...) output and its targets
            bufs.update(y_rows=bufs["y"], probs_rows=bufs["probs"], dpred_rows=bufs["dpred"])
            return bufs
        bufs["y_rows"] = b.reshape(bufs["y"], self.loss.target_shape(rows, shape[-1:]))
        bufs["probs_rows"] = b.reshape(bufs["probs"], (rows, shape[-1]))
        bufs["dpred_rows"] = b.reshape(bufs["dpred"], (rows, shape[-1]))
        return bufs


def make_heads(graph, loss, loss_weights, metrics, owner, weighted_metrics=None):
    """The heads of a model compiled with these arguments, everything checked first.
    weighted_metrics join each head's metrics, named "weighted_<name>" when metrics holds
    the same name (Keras 3); they count each hit with its sample's weight and divide by the
    sum of the weights (Head.weighted says which heads have some)."""
    names = graph.output_names
    # a loss or loss_weights nested as the outputs are: flat, in output order
    loss = graph.per_output(loss, "loss")
    if loss_weights is not None:
        loss_weights = graph.per_output(loss_weights, "loss_weights")
    losses = _per_output(loss, names, "loss", owner)
    missing = [n for n, l in zip(names, losses) if l is None]
    if missing:
        raise ValueError(f"{owner}: no loss for outputs {missing}; minidl trains every output "
                         "(give each output a loss)")
    weights = _per_output(1.0 if loss_weights is None else loss_weights, names,
                          "loss_weights", owner, default=1.0)
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
            raise ValueError(f"{owner}: loss_weights must be finite numbers, got {w!r}")
    metric_lists = _metric_lists(metrics, names, owner)
    weighted_lists = _metric_lists(weighted_metrics, names, owner, "weighted_metrics")
    heads, used = [], set()
    prefix_needed = len(names) > 1
    for i, (name, l, w, ms, wms) in enumerate(zip(names, losses, weights, metric_lists,
                                                   weighted_lists)):
        l = losses_mod.get(l)
        if id(l) in used:   # one Loss object given for several outputs: each gets its own
            l = copy.copy(l)
        used.add(id(l))
        shape = graph.output_shapes[i]
        if shape[-1] is None:
            raise ValueError(f"{owner}: output {name!r} has shape {format_shape(shape)}; a loss "
                             "needs its last (class or feature) dimension known")
        if l.sparse and shape[-1] < 2:
            raise ValueError(f"{owner}: loss {l.name!r} needs at least 2 output classes, "
                             f"output {name!r} is {format_shape(shape)}")
        if l.per_sample and (ms or wms):
            raise ValueError(f"{owner}: loss {l.name!r} scores whole samples (targets of another shape "
                             f"than output {name!r} {format_shape(shape)}); compile it without metrics")
        plain = [metrics_mod.for_model(m, l, shape) for m in ms]
        weighted = [metrics_mod.for_model(m, l, shape) for m in wms]
        taken = {m.name for m in plain}
        for m in weighted:
            m.weighted = True
            if m.name in taken:
                m.name = "weighted_" + m.name
        head = Head(graph, i, name, l, float(w), plain + weighted,
                    f"{name}_" if prefix_needed else "")
        head.weighted = bool(weighted)
        # as given (a metric object or function by its name), for the saved compile
        head.compiled_metrics = ([metrics_mod.saved_name(m) for m in ms],
                                 [metrics_mod.saved_name(m) for m in wms])
        heads.append(head)
    return heads


def metric_names(heads):
    """Keras 3's order: loss, each output's loss (several outputs), then the metrics."""
    names = ["loss"]
    if len(heads) > 1:
        names += [h.loss_name for h in heads]
    for h in heads:
        names += h.metric_names
    return names
