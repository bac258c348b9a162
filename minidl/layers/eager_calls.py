"""Built-in layers called on Tensors inside an eager computation (a custom layer's call, a
GradientTape block, a custom train_step: a call scope, see autodiff.call_scope), as Keras
allows: one Dense used twice in a subclassed model's call, a cell applied at every step of a
Python loop.

Each call of a layer within a scope runs on a LayerCall of its own (layers/calls.py), the
k-th call on the k-th context of the layer's pool, so that its buffers are made once and
reused from step to step while an earlier call's output and saved tensors survive. The pool
is the only thing a layer keeps for its eager calls. The weight gradients of the calls add
up (run_backward's accumulate), as they do for a layer shared between the nodes of a graph.
"""

from .. import autodiff
from .calls import LayerCall, run_backward, run_forward


def context(layer, backend, ordinal):
    """The context of the layer's eager call `ordinal`, from its pool."""
    pool = layer._eager_calls
    while len(pool) <= ordinal:
        pool.append(None)
    call = pool[ordinal]
    if call is None or call.backend is not backend:
        call = pool[ordinal] = LayerCall(layer, backend, ordinal)
    return call


def forward(layer, x, training, backend, input_grad_needed, options=None, mask=None):
    """Run layer.forward(x, training) as its next call in the current scope (ordinal 0
    outside one), with the call's keyword `options` and the input's Keras `mask` (a backend
    tensor, or None); returns (output, the call's context)."""
    scope = autodiff.current_call_scope()
    if scope is None:
        call = context(layer, backend, 0)
    else:
        calls = scope.setdefault(id(layer), [])
        call = context(layer, backend, len(calls))
        calls.append(call)
    call.mask = mask
    call.input_grad_needed = input_grad_needed
    call.options = dict(options or {})
    return run_forward(layer, call, x, training), call


def backward(layer, g, call, tape):
    """layer.backward(g) on `call`; its weight gradients are added to those of the layer's
    calls whose backward ran before it in this tape (or all of them, when the tape's own
    call accumulates: the custom layer around it is shared)."""
    accumulate = tape.accumulate or any(done is layer for done in tape.backwards)
    tape.backwards.append(layer)
    return run_backward(layer, call, g, accumulate)
