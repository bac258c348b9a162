"""The layer graph of a model: call nodes in topological order, forward and backward passes.

A model maps one or more input tensors to one or more output tensors through call nodes
(layers/base.py Node). A layer called several times (a shared layer, or the layers of a
model used twice as a layer) has one node per call: in this graph each of its nodes runs
on its own activation buffers and saved inputs (swapped in and out of the layer, see
_NodeState), while all of them share the layer's weights, and the weight gradients of its
nodes are summed. A tensor used by several nodes gets its gradients summed in a buffer
that the graph owns. A graph of layers called once (every Sequential) swaps nothing.

A layer with an activity regularizer adds its penalty once per call node (as Keras adds it
at every call): forward keeps each such node's output (activity_outputs) for the model's
loss, and backward adds the penalty's gradient to that node's dL/doutput.
"""

from collections import Counter

from ..backends import get_backend
from ..layers.base import InputLayer, compatible, format_shape
from ..layers.buffers import BufferSet
from ..random import mix_seed
from . import structure

# The graph whose input_grad_needed flags the layers hold now: a layer in several graphs
# (a nested model, a sub-model) gets this graph's flags before this graph runs.
_flags_holder = [None]


class _NodeState:
    """The per-call attributes of a shared layer (its buffers, saved inputs, pre-activation)
    for one node: loaded into the layer before the node runs, saved back after."""

    __slots__ = ("values", "ordinal")

    def __init__(self, backend, ordinal):
        buffers = BufferSet()
        buffers.reset(backend)
        self.values = {"_buffers": buffers}
        self.ordinal = ordinal   # which call of the layer in this graph: 0, 1, ...

    def forward(self, layer, x, mode):
        self.load(layer)
        if layer.needs_step_seed and self.ordinal:
            # each call of a shared Dropout draws its own mask, still a function of the step
            seed = layer.step_seed
            layer.step_seed = mix_seed(seed, self.ordinal) >> 2
            out = layer.forward(x, mode)
            layer.step_seed = seed
        else:
            out = layer.forward(x, mode)
        self.save(layer)
        return out

    def load(self, layer):
        layer.__dict__.update(self.values)

    def save(self, layer):
        self.values = {k: v for k, v in layer.__dict__.items()
                       if (k[0] == "_" and k != "_inbound_nodes") or k == "preactivation"}


def input_mask(masks, ins, structured):
    """The mask a node's layer gets: its input's (None: none), or for a layer of several
    inputs a list with one entry per input (None when no input has one)."""
    if not structured:
        return masks.get(ins)
    found = [masks.get(i) for i in ins]
    return found if any(m is not None for m in found) else None


class Graph:
    output_masks = ()

    def __init__(self, inputs, outputs, owner):
        self.owner = owner
        self.inputs, self.input_keys = structure.flatten_tensors(inputs, "inputs", owner)
        self.outputs, self.output_keys = structure.flatten_tensors(outputs, "outputs", owner)
        self.input_structure = structure.kind(inputs)
        self.output_structure = structure.kind(outputs)
        for t in self.inputs:
            if not isinstance(t.layer, InputLayer):
                raise ValueError(f"{owner}: inputs must come from Input(), got the output of "
                                 f"{t.layer.describe()}")
        if len({id(t) for t in self.inputs}) != len(self.inputs):
            raise ValueError(f"{owner}: the same Input is given twice in inputs")
        self.nodes = self._topological_order()
        self._check_inputs()
        # inputs with unknown (None) dims: each batch's shapes are checked through the layers
        self.unknown_dims = any(None in t.sample_shape for t in self.inputs)
        self.entries = self._entries()
        # the input layers, then what Model.layers lists: layers and nested models, once each
        self.layers = [t.layer for t in self.inputs]
        for entry in self.entries:
            item = entry.model if hasattr(entry, "model") else entry.layer
            if not any(item is other for other in self.layers):
                self.layers.append(item)
        self.primitive_layers = []  # every layer that computes, once each (weights live here)
        for node in self.nodes:
            if not any(node.layer is other for other in self.primitive_layers):
                self.primitive_layers.append(node.layer)
        names = [l.name for l in self.layers]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"{owner}: layer names must be unique, repeated: {sorted(dup)}")
        self.input_names = self.input_keys or [t.layer.name for t in self.inputs]
        self.output_names = self.output_keys or structure.unique_names(
            [self._producer_name(t) for t in self.outputs])
        self.backend = None
        self._grad_buffers = BufferSet()   # summed gradients of tensors used twice
        self._steps = None
        self._activity = {}                # output id -> activity regularizer of its node
        self._activity_values = {}         # output id -> that node's output, after forward

    # ---------------------------------------------------------- structure
    def _topological_order(self):
        """The non-input nodes the outputs depend on, each after the nodes it reads."""
        order, seen = [], set()
        stack = [(t.node, False) for t in reversed(self.outputs)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for t in reversed(node.inputs):
                if id(t.node) not in seen:
                    stack.append((t.node, False))
        return order

    def _check_inputs(self):
        given = {id(t.node) for t in self.inputs}
        reached = [n for n in self.nodes if isinstance(n.layer, InputLayer)]
        for node in reached:
            if id(node) not in given:
                raise ValueError(f"{self.owner}: the outputs depend on Input "
                                 f"{node.layer.name!r}, which is not among the model's inputs")
        reached_ids = {id(n) for n in reached}
        for t in self.inputs:
            if id(t.node) not in reached_ids:
                raise ValueError(f"{self.owner}: the outputs do not depend on the input "
                                 f"{t.layer.name!r}")
        self.nodes = [n for n in self.nodes if not isinstance(n.layer, InputLayer)]

    def _entries(self):
        """The graph's calls as its model sees them: a node of a layer, or one call of a
        nested model (standing for all the nodes its replay made), in execution order."""
        entries, seen = [], set()
        for node in self.nodes:
            entry = node.parent if node.parent is not None else node
            if id(entry) not in seen:
                seen.add(id(entry))
                entries.append(entry)
        return entries

    @staticmethod
    def _producer_name(tensor):
        return tensor.producer.name

    def producer_names(self, entry):
        """For summary's "Connected to": the names of what feeds `entry`."""
        return [self._producer_name(t) for t in entry.inputs]

    # ---------------------------------------------------------- backend
    def attach(self, backend=None):
        """Upload the initial weights of every layer not yet on the backend (the active one by
        default); layers already there (of a nested or an earlier model) keep theirs."""
        self.backend = backend or get_backend()
        self._grad_buffers.reset(self.backend)
        for layer in self.primitive_layers:
            if layer.backend is not self.backend:
                layer.attach(self.backend)
        self.prepare()

    def prepare(self):
        """Plan the passes for the layers' current trainable flags (at attach and compile)."""
        count = Counter(id(n.layer) for n in self.nodes)
        upstream = {id(t): False for t in self.inputs}
        steps, needs, seen = [], {}, Counter()
        for node in self.nodes:
            layer = node.layer
            feeds = any(upstream[id(t)] for t in node.inputs)
            has_weights = bool(layer.trainable_weights)
            upstream[id(node.outputs[0])] = feeds or has_weights
            needs[id(layer)] = needs.get(id(layer), False) or feeds
            state = _NodeState(self.backend, seen[id(layer)]) if count[id(layer)] > 1 else None
            seen[id(layer)] += 1
            ids = [id(t) for t in node.inputs]
            steps.append((layer, ids if node.structured else ids[0], id(node.outputs[0]),
                          node.structured, node.training, state, has_weights,
                          count[id(layer)] > 1 and has_weights))
        self._steps = steps
        # backward runs the steps in reverse: a layer's weight gradients are final once its
        # first call (its earliest step) has been back-propagated
        first_step = {}
        for index, (layer, *_rest) in enumerate(steps):
            first_step.setdefault(id(layer), (index, layer))
        self._grads_final_after = {}
        for index, layer in first_step.values():
            if layer.trainable_weights:
                self._grads_final_after[index] = list(layer.trainable_weights)
        self._activity = {out: layer.activity_regularizer
                          for layer, _, out, *_ in steps
                          if getattr(layer, "activity_regularizer", None) is not None}
        self._needs = [(layer, needs[id(layer)]) for layer in self.primitive_layers]
        self._input_ids = [id(t) for t in self.inputs]
        self._output_ids = [id(t) for t in self.outputs]
        self._apply_flags()

    def _apply_flags(self):
        # A layer needs dL/dinput only if something upstream of it has trainable weights.
        for layer, needed in self._needs:
            layer.input_grad_needed = needed
        _flags_holder[0] = self

    @property
    def input_shapes(self):
        return [t.sample_shape for t in self.inputs]

    @property
    def output_shapes(self):
        return [t.sample_shape for t in self.outputs]

    def weights(self):
        return [w for layer in self.primitive_layers for w in layer.weights]

    def trainable_weights(self):
        return [w for layer in self.primitive_layers for w in layer.trainable_weights]

    def trainable_weight_paths(self):
        """Keras paths ("dense/kernel") of trainable_weights(), for the optimizer's
        exclude_from_weight_decay(var_names=)."""
        return [f"{layer.name}/{w.name}" for layer in self.primitive_layers
                for w in layer.trainable_weights]

    # ---------------------------------------------------------- compute
    def forward(self, xs, training):
        """Run the graph on backend tensors `xs` (one per input); a list, one per output."""
        if _flags_holder[0] is not self:
            self._apply_flags()
        values = dict(zip(self._input_ids, xs))
        masks = {}   # output id -> its Keras mask (N, steps), for the tensors that have one
        for layer, ins, out, structured, node_training, state, _, _ in self._steps:
            x = [values[i] for i in ins] if structured else values[ins]
            mask = input_mask(masks, ins, structured)
            mode = training if node_training is None else node_training
            if state is None:
                layer._input_mask = mask
                values[out] = layer.forward(x, mode)
            else:
                state.values["_input_mask"] = mask
                values[out] = state.forward(layer, x, mode)
            if layer.supports_masking:
                out_mask = layer.compute_mask(x, mask)
                if out_mask is not None:
                    masks[out] = out_mask
        # the loss and metrics of an output with a mask weigh its steps by it (models/model.py)
        self.output_masks = [masks.get(i) for i in self._output_ids]
        if self._activity:   # the model adds their penalties to the loss
            self._activity_values = {i: values[i] for i in self._activity}
        return [values[i] for i in self._output_ids]

    def masked_outputs(self):
        """For each output, whether it carries a Keras mask (known from the layers, before
        anything runs): a layer's output has one when layer.output_has_mask says so."""
        masked = {}
        for node in self.nodes:
            ins = [masked.get(id(t), False) for t in node.inputs]
            masked[id(node.outputs[0])] = node.layer.output_has_mask(
                ins if node.structured else ins[0])
        return [masked.get(id(t), False) for t in self.outputs]

    @property
    def has_activity_regularizers(self):
        return bool(self._activity)

    def activity_outputs(self):
        """(regularizer, output) of every node with an activity regularizer, from the last
        forward (the model adds their penalties to the loss)."""
        return [(reg, self._activity_values[i]) for i, reg in self._activity.items()
                if i in self._activity_values]

    def preactivation(self, index):
        """The pre-activation of output `index` after forward (for a fused loss)."""
        out = self._output_ids[index]
        for layer, _, step_out, _, _, state, _, _ in self._steps:
            if step_out == out:
                return layer.preactivation if state is None else state.values["preactivation"]
        raise ValueError(f"{self.owner}: output {index} is a model input")

    def fusable(self, index):
        """Whether output `index` can take dL/dpre-activation: produced by a layer, read
        by no other node nor listed twice as an output, and without an activity regularizer
        (whose gradient needs dL/doutput)."""
        t = self.outputs[index]
        if isinstance(t.layer, InputLayer) or self._output_ids.count(id(t)) > 1:
            return False
        if id(t) in self._activity:
            return False
        return not any(id(t) in (ins if structured else [ins])
                       for _, ins, _, structured, *_ in self._steps)

    def backward(self, douts, from_preactivation=(), on_grads_final=None):
        """Back-propagate dL/doutput of each output (dL/dpre-activation for the outputs in
        from_preactivation) through every node, filling (summing) weight gradients.
        on_grads_final(weights), if given, is called as soon as those weights' gradients are
        complete (minidl.distributed starts their allreduce while backward goes on)."""
        grads = {}
        for key, d in zip(self._output_ids, douts):
            self._accumulate(grads, key, d)
        fused = {self._output_ids[i] for i in from_preactivation}
        done = set()
        for index in range(len(self._steps) - 1, -1, -1):
            self._backward_step(self._steps[index], grads, fused, done)
            if on_grads_final is not None and index in self._grads_final_after:
                on_grads_final(self._grads_final_after[index])

    def _backward_step(self, step, grads, fused, done):
        b = self.backend
        layer, ins, out, structured, _, state, has_weights, shared = step
        g = grads.pop(out, None)
        if g is None or not (layer.input_grad_needed or has_weights):
            return
        if out in self._activity:   # the node's penalty is reg(output) / batch
            # into a copy: g may be shared (Add passes one dout to all its inputs)
            output, own = self._activity_values[out], self._grad_buffers.get(("activity", out),
                                                                             b.shape(g))
            b.copy(own, g)
            self._activity[out].add_gradient(b, own, output, 1.0 / b.shape(output)[0])
            g = own
        if state is not None:
            state.load(layer)
        saved = self._save_grads(layer) if shared and id(layer) in done else None
        dinputs = layer.backward_preactivation(g) if out in fused else layer.backward(g)
        if saved is not None:
            for w, kept in saved:
                b.add(w.grad, w.grad, kept)
        if shared:
            done.add(id(layer))
        if state is not None:
            state.save(layer)
        if not layer.input_grad_needed:
            return
        if not structured:
            self._accumulate(grads, ins, dinputs)
            return
        for key, d in zip(ins, dinputs):
            self._accumulate(grads, key, d)

    def _accumulate(self, grads, key, d):
        if key not in grads:
            grads[key] = d
            return
        acc = self._grad_buffers.get(key, self.backend.shape(d))
        self.backend.add(acc, grads[key], d)
        grads[key] = acc

    def _save_grads(self, layer):
        """Copies of a shared layer's weight gradients from the nodes already run (its next
        node's backward overwrites them; the copies are added back)."""
        saved = []
        for w in layer.trainable_weights:
            kept = self._grad_buffers.get(("weight", id(w)), w.shape)
            self.backend.copy(kept, w.grad)
            saved.append((w, kept))
        return saved

    def adjust_rank(self, x, index=0):
        """x (a host array) with a trailing axis of 1 added or dropped when that is all that
        separates its rank from input `index`'s, as Keras's Functional._adjust_input_rank:
        a (N, 28, 28) array fits Input((28, 28, 1)). Other arrays come back unchanged."""
        expected = self.inputs[index].sample_shape
        if x.ndim == len(expected) + 2 and x.shape[-1] == 1:
            return x.reshape(x.shape[:-1])
        if x.ndim == len(expected) and expected and expected[-1] == 1:
            return x.reshape(x.shape + (1,))
        return x

    def check_input(self, x_shape, argument="x", index=0):
        expected = self.inputs[index].sample_shape
        if not compatible(tuple(x_shape[1:]), tuple(expected)):
            raise ValueError(f"{self.owner} expects {argument} of shape "
                             f"{format_shape(expected)}, got {tuple(x_shape)}")

    def output_shapes_for(self, input_shapes):
        """The outputs' sample shapes for inputs of these sample shapes: with unknown (None)
        input dims, each batch's concrete shapes, from every node's layer in order (a shape
        that its layers cannot take fails here, naming the layer, before anything runs)."""
        shapes = {id(t): tuple(s) for t, s in zip(self.inputs, input_shapes)}
        for node in self.nodes:
            ins = [shapes[id(t)] for t in node.inputs]
            shapes[id(node.outputs[0])] = tuple(node.layer.concrete_output_shape(
                ins if node.structured else ins[0]))
        return [shapes[id(t)] for t in self.outputs]
