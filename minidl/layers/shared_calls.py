"""A built-in layer called several times inside one eager computation (one Dense used twice in
a subclassed model's or a custom layer's call, as Keras allows).

A built-in layer's forward writes its output into its own buffers and keeps what its backward
needs (saved inputs, masks, the pre-activation) in its attributes. Within one computation (a
custom layer's forward, a GradientTape block, a custom train_step: a call scope, see
autodiff.call_scope) the k-th call of a layer therefore runs on buffers of its own (made once,
reused every step), so that an earlier call's output survives; in training each call keeps a
snapshot of the attributes its forward left, and its backward runs on that snapshot. The
weight gradients of the calls add up, as models/graph.py does for a layer shared between the
nodes of a graph. A layer called once per scope runs as before, on its own buffers.
"""

from .. import autodiff
from ..random import mix_seed
from .buffers import BufferSet


def _state_of(layer):
    """The attributes a forward leaves for its backward (graph.py's _NodeState rule)."""
    values = {k: v for k, v in layer.__dict__.items()
              if (k[0] == "_" and k != "_inbound_nodes") or k == "preactivation"}
    values["input_grad_needed"] = layer.input_grad_needed
    return values


def _buffers_for(layer, backend, ordinal):
    """The buffers of the layer's call `ordinal` in a scope (0: the layer's own)."""
    held = layer.__dict__.get("_call_buffers")
    if held is None or held[0] is not backend:
        held = (backend, [layer._buffers])
        layer.__dict__["_call_buffers"] = held
    sets = held[1]
    while len(sets) <= ordinal:
        sets.append(BufferSet(backend))
    return sets[ordinal]


def forward(layer, x, training, backend, keep):
    """Run layer.forward(x, training) as its next call in the current scope; returns (output,
    the call's record: the list of the layer's calls in the scope, with the snapshot of each
    when `keep` (a tape records), and this call's index; None outside a scope)."""
    scope = autodiff.current_call_scope()
    if scope is None:
        return layer.forward(x, training), None
    calls = scope.setdefault(id(layer), [])
    ordinal = len(calls)
    layer._buffers = _buffers_for(layer, backend, ordinal)
    if ordinal and layer.needs_step_seed:   # each call draws its own mask, still per step
        seed = layer.step_seed
        layer.step_seed = mix_seed(seed, ordinal) >> 2
        out = layer.forward(x, training)
        layer.step_seed = seed
    else:
        out = layer.forward(x, training)
    calls.append(_state_of(layer) if keep else None)
    return out, (calls, ordinal)


def backward(layer, g, record, tape, backend):
    """layer.backward(g) for the call `record` names, its weight gradients added to those of
    the layer's calls whose backward ran before it in this tape."""
    shared = record is not None and len(record[0]) > 1
    if not shared:
        tape.backwards.append(layer)
        return layer.backward(g)
    calls, ordinal = record
    layer.__dict__.update(calls[ordinal])
    kept = None
    if any(done is layer for done in tape.backwards):
        copies = layer.__dict__.get("_grad_copies")
        if copies is None or copies.backend is not backend:
            copies = layer.__dict__["_grad_copies"] = BufferSet(backend)
        kept = []
        for i, w in enumerate(layer.trainable_weights):
            copy = copies.get(i, w.shape)
            backend.copy(copy, w.grad)
            kept.append((w, copy))
    tape.backwards.append(layer)
    d = layer.backward(g)
    for w, copy in kept or ():
        backend.add(w.grad, w.grad, copy)
    return d
