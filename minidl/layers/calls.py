"""One call of a layer: the context its forward fills and its backward reads.

A layer holds its weights and hyperparameters; everything that belongs to one call lives in
a LayerCall instead: the tensors forward keeps for backward (`call.x = x`), the buffers it
writes its results into (`call.buffer("z", shape)`, kept from step to step), the input's
Keras mask, whether the caller needs dL/dinput, the pre-activation a fused loss starts from,
the window plan of the batch's shape. A layer called several times (a shared layer in a
graph, a cell applied at every time step of a Python loop, a Dense used twice in a custom
layer's call) therefore needs nothing special: each call has its own LayerCall, owned by
whoever made the call (a graph step, a call scope; see models/graph.py and
layers/eager_calls.py), and backward runs on the context of the call it differentiates.

Weight gradients add up over the calls of one backward pass: a backward writes the gradient
of weight w into `call.grad(w)`, which is w.grad itself for the first call back-propagated
and a scratch buffer for the later ones, added into w.grad when the backward returns
(`run_backward`). Built-in layers keep their fused hand-written kernels, which overwrite
their output; the sum is the executor's job, never the layer's.
"""

from ..random import mix_seed
from .buffers import BufferSet


class LayerCall:
    """The per-call context of one call of `layer` on `backend`.

    ordinal: which call of the layer this is within its graph or scope (0, 1, ...): a layer
    drawing random numbers mixes it into its step seed so that each call draws its own.
    Attributes a layer's forward sets for its backward are plain attributes of the context.
    """

    def __init__(self, layer, backend, ordinal=0):
        self.layer = layer
        self.backend = backend
        self.ordinal = ordinal
        self.buffers = BufferSet(backend)
        self.mask = None                 # the input's Keras mask (a backend tensor) or None
        self.input_grad_needed = True    # whether backward must return dL/dinput
        self.training = False
        self.preactivation = None        # a fused activation's input (ActivationMixin)
        self.plan = None                 # the window plan of the latest shape (WindowPlanMixin)
        self.plan_key = None
        self.plan_backend = None
        self.children = {}               # key -> LayerCall of an inner layer (wrappers, cells)
        self.options = {}                # the call's keyword arguments (its node's options)
        self.douts_given = None          # per output, whether backward got a real dL/d (None: all)
        self._grad_scratch = None        # weight id -> scratch while accumulating
        # Set by a graph for one pass (models/graph.py): while `lender` is set (a backward
        # step) every buffer comes from it and lives until the graph releases it; while
        # `output_lender` is set (a forward step whose output no backward reads) the output
        # buffer does (output_buffer).
        self.lender = None
        self.output_lender = None
        self._lent = {}                  # (role, dtype) -> the tensor lent for it this step

    def buffer(self, role, shape, dtype="float32"):
        """A backend tensor of `shape` owned by this call for `role` ("z", "dx", ...), valid
        until the call asks for that role again (the next step)."""
        if self.lender is not None:
            held = self._lent.get((role, dtype))
            if held is None or tuple(self.backend.shape(held)) != tuple(shape):
                held = self._lent[(role, dtype)] = self.lender.lend(tuple(shape), dtype)
            return held
        return self.buffers.get(role, tuple(shape), dtype)

    def output_buffer(self, role, shape, dtype="float32"):
        """The buffer of the call's output: lent by the graph when no backward reads it
        (then valid until the layers reading it have run), else buffer(role, shape)."""
        if self.output_lender is not None:
            return self.output_lender.lend(tuple(shape), dtype)
        return self.buffer(role, shape, dtype)

    @property
    def step_seed(self):
        """The layer's seed for this step, mixed with the call's ordinal past the first call."""
        seed = self.layer.step_seed
        return seed if not self.ordinal else mix_seed(seed, self.ordinal) >> 2

    def child(self, key, layer=None):
        """The context of an inner call (a wrapper's layer, a cell at one time step), kept
        with this one from step to step; `layer` defaults to this call's layer."""
        held = self.children.get(key)
        layer = self.layer if layer is None else layer
        if held is None or held.layer is not layer or held.backend is not self.backend:
            held = self.children[key] = LayerCall(layer, self.backend, self.ordinal)
        held.training = self.training
        return held

    @property
    def accumulating(self):
        """Whether this backward adds its weight gradients to those already there: an inner
        call run from it (a wrapper's layer, a cell) must then accumulate too."""
        return self._grad_scratch is not None

    def grad(self, weight):
        """Where this call's backward writes the gradient of `weight` (see the module doc)."""
        if self._grad_scratch is None:
            return weight.grad
        held = self._grad_scratch.get(id(weight))
        if held is None:
            held = (weight, self.buffer(("grad", id(weight)), weight.shape))
            self._grad_scratch[id(weight)] = held
        return held[1]


def run_forward(layer, call, inputs, training):
    """layer.forward on its context `call` (the training mode recorded on it)."""
    call.training = bool(training)
    if layer.uses_call():
        # a built-in layer's subclass with a call of its own (or a Conv2D's convolution_op):
        # its call runs, not the built-in forward it inherits
        return layer.own_call_forward(call, inputs, training)
    return layer.forward(call, inputs, training)


def run_backward(layer, call, dout, accumulate, preactivation=False):
    """layer.backward (backward_preactivation when `preactivation`) on `call`; with
    `accumulate` the weight gradients it writes are added to those already in the weights'
    grad (another call of the layer was back-propagated before in this pass)."""
    call._grad_scratch = {} if accumulate else None
    try:
        if layer.uses_call():   # the tape of its call (as run_forward ran it)
            d = layer.own_call_backward(call, dout)
        elif preactivation:
            d = layer.backward_preactivation(call, dout)
        else:
            d = layer.backward(call, dout)
        for weight, scratch in (call._grad_scratch or {}).values():
            call.backend.add(weight.grad, weight.grad, scratch)
    finally:
        call._grad_scratch = None
    return d

