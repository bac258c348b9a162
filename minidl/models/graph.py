"""The layer graph of a model: call nodes in topological order, forward and backward passes.

A model maps one or more input tensors to one or more output tensors through call nodes
(layers/base.py Node). A layer called several times (a shared layer, or the layers of a
model used twice as a layer) has one node per call: each node runs on its own LayerCall
(layers/calls.py: its buffers and what its forward keeps for backward), all of them share
the layer's weights, and the weight gradients of its nodes are summed. A node may have
several outputs (a recurrent layer's sequence and final states). A tensor used by several
nodes gets its gradients summed in a buffer that the graph owns.

A layer with an activity regularizer adds its penalty once per call node (as Keras adds it
at every call): forward keeps each such node's output (activity_outputs) for the model's
loss, and backward adds the penalty's gradient to that node's dL/doutput.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..backends import get_backend
from ..layers.base import compatible, format_shape
from ..layers.input_layer import InputLayer
from ..layers.buffers import BufferSet, LentBuffers
from ..layers.calls import LayerCall, run_backward, run_forward
from ..string_tensors import STRING, is_string_array
from .. import tree
from . import structure


@dataclass
class Step:
    """One call node as the passes run it.

    ins: the ids of the tensors it reads (one id, or a list for a layer of several inputs);
    outs: the ids of the tensors it makes (one per output of the node); call: its LayerCall
    (buffers, what forward keeps for backward), owned by this graph; has_weights: whether
    the layer has trainable weights; shared: whether the layer has other calls in this graph
    (their weight gradients add up)."""
    layer: object
    ins: object
    outs: list
    structured: bool
    training: object
    call: LayerCall
    has_weights: bool
    shared: bool = False
    multi: bool = field(default=False)

    @property
    def out(self):
        return self.outs[0]


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
        if self.input_structure == "nested":
            raise ValueError(f"{owner}: inputs must be one tensor, a list or a dict of tensors "
                             "from Input(), not nested ones")
        # nested outputs ([layer.output ...] of layers of two outputs): their structure
        self.output_nesting = (structure.template(outputs) if self.output_structure == "nested"
                               else None)
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
        self._lent = LentBuffers()          # storages a lending pass shares (forward / backward)
        self._lender = None                 # _lent during a lending backward
        self._steps = None
        self._may_add_losses = False        # a layer written with ops may call add_loss
        self._activity = {}                # output id -> activity regularizer of its node
        self._loss_scale = 1.0             # backward()'s, for the activity penalties
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
        names = getattr(tensor.layer, "output_part_names", None)
        if names and tensor.node is not None and tensor.node.several:
            return names[tensor.index]   # one output of a call of several (a subclassed model's)
        return tensor.producer.name

    def producer_names(self, entry):
        """For summary's "Connected to": the names of what feeds `entry`."""
        return [self._producer_name(t) for t in entry.inputs]

    def pack_outputs(self, values, symbolic=False):
        """One value per output, in the structure the outputs were given in (a call on
        symbolic tensors keeps a nested list of one, as Keras; structure.pack)."""
        return structure.pack(values, self.output_structure, self.output_keys,
                              self.output_nesting, symbolic)

    def flat_outputs(self, packed):
        """The inverse of pack_outputs: a list in model.outputs order."""
        if self.output_structure == "nested":
            return tree.flatten(packed if tree.is_nested(packed) else [packed])
        if isinstance(packed, Mapping):
            return [packed[k] for k in self.output_keys]
        return list(packed) if isinstance(packed, (list, tuple)) else [packed]

    def per_output(self, value, argument):
        """y, a sample_weight, a loss or loss_weights given nested as the outputs: a flat
        list in output order (anything else as it came)."""
        return structure.flatten_like(value, self.output_nesting, argument, self.owner)

    # ---------------------------------------------------------- backend
    def attach(self, backend=None):
        """Upload the initial weights of every layer not yet on the backend (the active one by
        default); layers already there (of a nested or an earlier model) keep theirs."""
        self.backend = backend or get_backend()
        self._grad_buffers.reset(self.backend)
        self._lent.reset(self.backend)
        for layer in self.primitive_layers:
            if layer.backend is not self.backend:
                layer.attach(self.backend)
        self.prepare()

    def prepare(self):
        """Plan the passes for the layers' current trainable flags (at attach and compile):
        a Step per node, each with its own LayerCall (kept when planned again)."""
        count = Counter(id(n.layer) for n in self.nodes)
        upstream = {id(t): False for t in self.inputs}
        steps, seen = [], Counter()
        calls = getattr(self, "_calls", {})
        self._calls = {}
        for node in self.nodes:
            layer = node.layer
            feeds = any(upstream[id(t)] for t in node.inputs)
            has_weights = bool(layer.trainable_weights)
            for t in node.outputs:
                upstream[id(t)] = feeds or has_weights
            call = calls.get(id(node))
            if call is None or call.backend is not self.backend or call.layer is not layer:
                call = LayerCall(layer, self.backend, seen[id(layer)])
            call.ordinal = seen[id(layer)]
            call.options = node.options
            # a layer needs dL/dinput only if something upstream of it has trainable weights
            call.input_grad_needed = feeds
            self._calls[id(node)] = call
            seen[id(layer)] += 1
            ids = [id(t) for t in node.inputs]
            steps.append(Step(layer, ids if node.structured else ids[0],
                              [id(t) for t in node.outputs], node.structured, node.training,
                              call, has_weights, count[id(layer)] > 1 and has_weights,
                              node.several))
        self._steps = steps
        # backward runs the steps in reverse: a layer's weight gradients are final once its
        # first call (its earliest step) has been back-propagated
        first_step = {}
        for index, step in enumerate(steps):
            first_step.setdefault(id(step.layer), (index, step.layer))
        self._grads_final_after = {}
        for index, layer in first_step.values():
            if layer.trainable_weights:
                self._grads_final_after[index] = list(layer.trainable_weights)
        self._activity = {step.out: step.layer.activity_regularizer for step in steps
                          if getattr(step.layer, "activity_regularizer", None) is not None}
        self._may_add_losses = any(step.layer.uses_call() for step in steps)
        self._input_ids = [id(t) for t in self.inputs]
        self._output_ids = [id(t) for t in self.outputs]
        self._plan_transients(steps)

    def _plan_transients(self, steps):
        """The outputs a lending forward lends (`_transient`: their producers' output_buffer)
        and, per step index, those whose last reader it is (`_release_after`): outputs that no
        backward reads (neither their layer's nor any reader's), read by single-input layers
        that do not keep them, and that are neither model outputs nor regularized."""
        readers = {}
        self._string_ids = {id(t) for node in self.nodes for t in node.outputs
                            if t.dtype == STRING}   # host arrays: never lent
        for index, step in enumerate(steps):
            for key in (step.ins if step.structured else [step.ins]):
                readers.setdefault(key, []).append((index, step))
        self._transient, self._release_after = set(), {}
        for step in steps:
            out = step.out
            found = readers.get(out, [])
            if (step.multi or not found or out in self._output_ids or out in self._activity
                    or out in self._string_ids or step.layer.backward_reads_output()):
                continue
            if any(r.structured or r.layer.backward_reads_input() for _, r in found):
                continue
            self._transient.add(out)
            self._release_after.setdefault(max(i for i, _ in found), []).append(out)

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
    def forward(self, xs, training, lend=False):
        """Run the graph on backend tensors `xs` (one per input); a list, one per output.
        lend: the model's own passes (not a nested model's, whose outputs its caller keeps)
        share one storage among the outputs that only forward reads (_plan_transients)."""
        values = dict(zip(self._input_ids, xs))
        masks = {}   # output id -> its Keras mask (N, steps), for the tensors that have one
        lender = self._lent if lend and self._transient else None
        if lender is not None:
            lender.release_all()
        for index, step in enumerate(self._steps):
            ins, layer, call = step.ins, step.layer, step.call
            x = [values[i] for i in ins] if step.structured else values[ins]
            mask = input_mask(masks, ins, step.structured)
            call.mask = mask
            mode = training if step.training is None else step.training
            if lender is not None and step.out in self._transient:
                call.output_lender = lender
            try:
                result = run_forward(layer, call, x, mode)
            finally:
                call.output_lender = None
            if lender is not None:
                for out in self._release_after.get(index, ()):
                    lender.release(values[out])
            if step.multi:
                values.update(zip(step.outs, result))
                call.output_shapes = [self._shape(r) for r in result]
            else:
                values[step.out] = result
                call.output_shapes = [self._shape(result)]
            if layer.supports_masking:
                out_mask = layer.output_mask(call, x, mask)
                if out_mask is not None:
                    for out in step.outs:
                        masks[out] = out_mask
        # the loss and metrics of an output with a mask weigh its steps by it (models/model.py)
        self.output_masks = [masks.get(i) for i in self._output_ids]
        if self._activity:   # the model adds their penalties to the loss
            self._activity_values = {i: values[i] for i in self._activity}
        return [values[i] for i in self._output_ids]

    def _shape(self, value):
        # a string tensor's batch stays a host array (string_tensors.py)
        return value.shape if is_string_array(value) else self.backend.shape(value)

    @property
    def string_inputs(self):
        """Per input, whether it holds strings (Input(dtype="string")): its batches stay on
        the host, for the string layers that read them."""
        return [t.dtype == STRING for t in self.inputs]

    def masked_outputs(self):
        """For each output, whether it carries a Keras mask (known from the layers, before
        anything runs): a layer's output has one when layer.output_has_mask says so."""
        masked = {}
        for node in self.nodes:
            ins = [masked.get(id(t), False) for t in node.inputs]
            has = node.layer.node_output_has_mask(ins if node.structured else ins[0], node.options)
            for t in node.outputs:
                masked[id(t)] = has
        return [masked.get(id(t), False) for t in self.outputs]

    @property
    def has_activity_regularizers(self):
        return bool(self._activity)

    @property
    def may_add_losses(self):
        """Whether a layer's call may add losses (add_loss: the layers written with ops)."""
        return self._may_add_losses

    def added_losses(self):
        """The scalar backend tensors the layers' calls added with add_loss in the last
        forward (the model adds them to its loss)."""
        return [t.value for step in self._steps or ()
                for t in (getattr(step.call, "added_losses", None) or ())]

    def activity_outputs(self):
        """(regularizer, output) of every node with an activity regularizer, from the last
        forward (the model adds their penalties to the loss)."""
        return [(reg, self._activity_values[i]) for i, reg in self._activity.items()
                if i in self._activity_values]

    def _step_making(self, out):
        for step in self._steps:
            if out in step.outs:
                return step
        return None

    def preactivation(self, index):
        """The pre-activation of output `index` after forward (for a fused loss)."""
        step = self._step_making(self._output_ids[index])
        if step is None:
            raise ValueError(f"{self.owner}: output {index} is a model input")
        return step.call.preactivation

    def fusable(self, index):
        """Whether output `index` can take dL/dpre-activation: the only output of a layer's
        call, read by no other node nor listed twice as an output, and without an activity
        regularizer (whose gradient needs dL/doutput)."""
        t = self.outputs[index]
        if isinstance(t.layer, InputLayer) or self._output_ids.count(id(t)) > 1:
            return False
        if id(t) in self._activity:
            return False
        step = self._step_making(id(t))
        if step is None or step.multi or step.layer.uses_call():
            return False   # (a layer written with call has no pre-activation to hand out)
        return not any(id(t) in (s.ins if s.structured else [s.ins]) for s in self._steps)

    def backward(self, douts, from_preactivation=(), on_grads_final=None, loss_scale=1.0,
                 lend=False):
        """Back-propagate dL/doutput of each output (dL/dpre-activation for the outputs in
        from_preactivation) through every node, filling (summing) weight gradients.
        on_grads_final(weights), if given, is called as soon as those weights' gradients are
        complete (minidl.distributed starts their allreduce while backward goes on).
        loss_scale multiplies the activity penalties' gradients as it did the douts.
        lend: the model's own pass (not a nested model's: its caller keeps the dL/dinputs it
        returns) takes every buffer its layers ask for from one pool, a storage going back
        to it once no pending gradient is in it, so that only the gradients in flight are
        held instead of every layer's."""
        self._loss_scale = loss_scale
        self._lender = self._lent if lend else None
        if self._lender is not None:
            self._lender.release_all()   # the forward's transient outputs are dead
        try:
            grads = {}
            for key, d in zip(self._output_ids, douts):
                self._accumulate(grads, key, d)
            fused = {self._output_ids[i] for i in from_preactivation}
            done = set()
            for index in range(len(self._steps) - 1, -1, -1):
                self._backward_step(self._steps[index], grads, fused, done)
                if self._lender is not None:
                    self._lender.release_unreferenced(
                        [t for g in grads.values() for t in (g if isinstance(g, list) else [g])])
                if on_grads_final is not None and index in self._grads_final_after:
                    on_grads_final(self._grads_final_after[index])
        finally:
            self._lender = None

    def _step_dout(self, step, grads):
        """dL/d(the step's outputs): one tensor, or for a node of several outputs a list
        (zeros for an output nothing used); None when no output has a gradient."""
        if not step.multi:
            return grads.pop(step.out, None)
        found = [grads.pop(out, None) for out in step.outs]
        if all(g is None for g in found):
            return None
        # a layer may skip the work of an output nothing used (attention's scores)
        step.call.douts_given = [g is not None for g in found]
        return [g if g is not None else self._zeros(("unused", out), shape)
                for g, out, shape in zip(found, step.outs, step.call.output_shapes)]

    def _zeros(self, key, shape):
        z = self._grad_buffers.get(key, shape)
        self.backend.fill(z, 0.0)
        return z

    def _backward_step(self, step, grads, fused, done):
        b = self.backend
        layer, call = step.layer, step.call
        g = self._step_dout(step, grads)
        if g is None and getattr(call, "added_losses", None):
            # the call's added losses have a gradient even where its outputs have none
            shapes = call.output_shapes
            zeros = [self._zeros(("unused", out), shape) for out, shape in zip(step.outs, shapes)]
            g = zeros if step.multi else zeros[0]
        if g is None or not (call.input_grad_needed or step.has_weights):
            return
        call.loss_scale = self._loss_scale   # for the seeds of added losses
        if step.out in self._activity:   # the node's penalty is reg(output) / batch
            # into a copy: g may be shared (Add passes one dout to all its inputs)
            out = step.out
            output, own = self._activity_values[out], self._grad_buffers.get(("activity", out),
                                                                             b.shape(g))
            b.copy(own, g)
            self._activity[out].add_gradient(b, own, output, self._loss_scale / b.shape(output)[0])
            g = own
        accumulate = step.shared and id(layer) in done
        if self._lender is None:
            dinputs = run_backward(layer, call, g, accumulate, preactivation=step.out in fused)
        else:
            call.lender = self._lender
            try:
                dinputs = run_backward(layer, call, g, accumulate, preactivation=step.out in fused)
            finally:   # no view of a pool storage outlives the step in the call
                call.lender, call._lent = None, {}
        if step.shared:
            done.add(id(layer))
        if not call.input_grad_needed:
            return
        if not step.structured:
            self._accumulate(grads, step.ins, dinputs)
            return
        for key, d in zip(step.ins, dinputs):
            self._accumulate(grads, key, d)

    def _accumulate(self, grads, key, d):
        if d is None:   # no gradient to this input (a string tensor, token indices)
            return
        if key not in grads:
            grads[key] = d
            return
        shape = self.backend.shape(d)
        acc = self._lender.lend(shape) if self._lender is not None else self._grad_buffers.get(key, shape)
        self.backend.add(acc, grads[key], d)
        grads[key] = acc

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
            out = node.layer.node_output_shape(ins if node.structured else ins[0], node.options)
            if node.several:
                shapes.update((id(t), tuple(o)) for t, o in zip(node.outputs, out))
            else:
                shapes[id(node.outputs[0])] = tuple(out)
        return [shapes[id(t)] for t in self.outputs]
