"""How a layer written with minidl.ops runs: its `call` on Tensors, recorded on a tape in
training, and its backward from that tape (the glue between autodiff and the graph).

A built-in layer's forward/backward are hand-written; a Layer subclass that defines `call`
(and layers.Lambda) get these instead. The gradients of the call's inputs go on to the
layers before it through the ordinary graph backward, so both kinds mix freely.
"""

import inspect

import numpy as np

from .. import autodiff
from .. import ops
from ..autodiff import Tensor
from ..backends.symbolic import SymbolicBackend
from ..string_tensors import StringTensor, is_string_array, refuse
from . import added_losses, eager_calls


def _signature(layer):
    """(whether call takes training=, the other keyword names it takes), per layer class."""
    params = getattr(type(layer), "_call_params", None)
    if params is None or params[0] is not type(layer):
        sig = inspect.signature(layer.call).parameters
        names = list(sig)[1:]   # after the inputs
        others = frozenset(n for n in names if n not in ("training", "mask") and sig[n].kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))
        type(layer)._call_params = params = (type(layer), "training" in sig, others,
                                             "mask" in sig)
    return params[1], params[2]


def takes_mask(layer):
    """Whether the layer's `call` takes mask= (Keras passes it the input's mask)."""
    _signature(layer)
    return type(layer)._call_params[3]


def carries_mask(tensor):
    """Whether a symbolic tensor carries a Keras mask: from the layers that made it, as
    Graph.masked_outputs decides (a loop, not a recursion: graphs can be deep)."""
    known, todo = {}, [tensor]
    while todo:
        t = todo[-1]
        node = t.node
        if node is None or not node.inputs:
            known[id(t)] = False
            todo.pop()
            continue
        missing = [i for i in node.inputs if id(i) not in known]
        if missing:
            todo.extend(missing)
            continue
        ins = [known[id(i)] for i in node.inputs]
        known[id(t)] = bool(node.layer.node_output_has_mask(ins if node.structured else ins[0],
                                                           node.options))
        todo.pop()
    return known[id(tensor)]


def call_parameters(layer):
    """The keyword arguments (besides training and mask) that the layer's `call` takes."""
    return _signature(layer)[1]


def _call_kwargs(layer, training, options=None, mask=None):
    """training= for call when its signature takes it (as Keras passes it), mask= the same
    way (the input's mask, a Tensor, when it has one), and the call's own keyword options."""
    kwargs = dict(options or {})
    kwargs.pop(TENSOR_ARGUMENTS, None)
    if _signature(layer)[0]:
        kwargs["training"] = training
    if mask is not None and takes_mask(layer):
        kwargs["mask"] = mask
    return kwargs


# ------------------------------------------------------------- tensor arguments of call
# A call may take tensors besides its inputs (`call(self, logits, targets=None)`). They join
# the node's inputs, after the call's own (one list); the option TENSOR_ARGUMENTS records
# [whether the inputs were a list, how many they were, the names of the tensors after them],
# so that `call` gets them back by name. A layer's calls share that layout (it is fixed at
# its first call: build() sees the inputs' shapes only, as in Keras).
TENSOR_ARGUMENTS = "__tensor_arguments__"


def bind_positional(layer, args, options, training):
    """options (and training) with the positional arguments after the inputs bound to the
    names of call's parameters, in order."""
    sig = inspect.signature(layer.call).parameters
    names = [n for n, p in list(sig.items())[1:] if p.kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(names):
        raise TypeError(f"{layer.describe()}: call takes {len(names) + 1} positional arguments "
                        f"({', '.join(['inputs'] + names)}), got {len(args) + 1}")
    options = dict(options)
    for name, value in zip(names, args):
        if name in options or (name == "training" and training is not None):
            raise TypeError(f"{layer.describe()}: call got two values for argument {name!r}")
        if name == "training":
            training = value
        else:
            options[name] = value
    return options, training


def _is_tensor(value):
    from .nodes import KerasTensor
    return isinstance(value, (KerasTensor, Tensor, np.ndarray))


def pack_tensor_arguments(layer, inputs, options):
    """(inputs, options) with the tensor-valued keyword arguments moved into the inputs."""
    if options.get("mask") is not None:
        raise TypeError(f"{layer.describe()}: minidl passes Keras masks itself (from Embedding("
                        "mask_zero=True) or Masking); an explicit mask= argument is not supported")
    options = {n: v for n, v in options.items() if n != "mask"}
    names = [n for n, v in options.items() if _is_tensor(v)]
    previous = getattr(layer, "_tensor_arguments", None)
    if not names:
        if previous and layer.built:
            raise TypeError(f"{layer.describe()} was first called with the tensor arguments "
                            f"{previous[2]}; every call must pass them")
        return inputs, options
    main = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    layout = [isinstance(inputs, (list, tuple)), len(main), names]
    if previous is not None and layer.built and list(previous) != layout:
        raise TypeError(f"{layer.describe()}: its calls must pass the same tensor arguments; the "
                        f"first passed {previous[2]} after {previous[1]} inputs, this one {names}")
    layer._tensor_arguments = layout   # the layer's call layout (a build-time setting)
    extra = [options.pop(n) for n in names]
    options[TENSOR_ARGUMENTS] = layout
    return main + extra, options


def check_tensor_arguments(layer, layout):
    """A TENSOR_ARGUMENTS option (from a model file too) is [bool, int, [names of call's
    parameters]]."""
    ok = (isinstance(layout, (list, tuple)) and len(layout) == 3 and isinstance(layout[0], bool)
          and isinstance(layout[1], int) and not isinstance(layout[1], bool) and layout[1] >= 1
          and isinstance(layout[2], (list, tuple)) and layout[2]
          and all(isinstance(n, str) and n in call_parameters(layer) for n in layout[2]))
    if not ok:
        raise TypeError(f"{layer.describe()}: bad tensor-argument layout {layout!r:.100} (call "
                        f"takes {sorted(call_parameters(layer))})")


def restore_layout(layer, options):
    """A layer read from a model file takes its calls' tensor-argument layout from a node's
    options (before it is built)."""
    layout = (options or {}).get(TENSOR_ARGUMENTS)
    if layout:
        check_tensor_arguments(layer, layout)
        layer._tensor_arguments = [layout[0], layout[1], list(layout[2])]
        layer.multiple_inputs = True


def unpack_call_arguments(layer, xs, options):
    """(the inputs call gets, the tensor keyword arguments) from the flat list of a call's
    tensors xs, by the call's TENSOR_ARGUMENTS layout (or the layer's: a shape probe)."""
    layout = (options or {}).get(TENSOR_ARGUMENTS) or getattr(layer, "_tensor_arguments", None)
    if not layout:
        return (xs if layer.multiple_inputs else xs[0]), {}
    was_list, count, names = layout
    main = xs[:count]
    return (main if was_list else main[0]), dict(zip(names, xs[count:]))


def main_shapes(layer, input_shape):
    """The shapes of the call's own inputs (what build() gets), without its tensor arguments."""
    layout = getattr(layer, "_tensor_arguments", None)
    if not layout:
        return input_shape
    was_list, count, _ = layout
    return list(input_shape[:count]) if was_list else input_shape[0]


def _output_of(layer, result):
    if isinstance(result, (list, tuple)):
        raise ValueError(f"{layer.describe()}: call must return one tensor here, got "
                         f"{type(result).__name__} of {len(result)}")
    t = ops.convert_to_tensor(result) if not ops.is_tensor(result) else ops.core.as_tensor(result)
    return ops.cast(t, "float32")


def _outputs_of(layer, result):
    """The call's result as a list of float32 Tensors and whether it returned several (a
    list or tuple: the layer's node then has one output each)."""
    if isinstance(result, (list, tuple)):
        if not result:
            raise ValueError(f"{layer.describe()}: call returned an empty {type(result).__name__}")
        return [_output_of(layer, r) for r in result], True
    return [_output_of(layer, result)], False


def call_forward(layer, call, inputs, training):
    """Run layer.call on backend tensors; in training keep the tape on `call` for
    call_backward."""
    b = layer.backend
    tape = autodiff.Tape(b) if training else None
    needs = call.input_grad_needed and training
    # a string input's batch stays on the host (string_tensors.py): no gradient flows to it
    xs = [StringTensor(v) if is_string_array(v) else Tensor(v, b, requires_grad=needs)
          for v in (inputs if layer.multiple_inputs else [inputs])]
    with autodiff.on_backend(b), autodiff.recording(tape), autodiff.call_scope(), \
            added_losses.Collecting() as added:
        main, tensors = unpack_call_arguments(layer, xs, call.options)
        mask = _first_mask(call.mask, b)
        outs, several = _outputs_of(layer, layer.call(main, **tensors, **_call_kwargs(
            layer, training, call.options, mask)))
    # the losses the call added (add_loss): the model adds them to its loss, backward seeds them
    call.added_losses = added
    layer._last_losses = added
    call.tape = (tape, xs, outs) if training else None
    values = []
    for out in outs:
        value = out.value
        if any(value is x.value for x in xs) or any(value is v for v in values):
            # an identity call: hand out a copy, so that the graph never sees one tensor twice
            copy = call.buffer(("identity", len(values)), b.shape(value))
            b.copy(copy, value)
            value = copy
        values.append(value)
    return values if several else values[0]


def _first_mask(mask, backend):
    """The mask Keras passes to call: the first input's (masks of a list of inputs come as a
    list), as a Tensor of 1.0 where a step is real, 0.0 where it is padding."""
    if isinstance(mask, list):
        mask = mask[0] if mask else None
    return None if mask is None else Tensor(mask, backend)


def call_backward(layer, call, dout):
    """Weight gradients into call.grad(weight); returns dL/dinputs (a list for several).
    dout is a list (one per output) for a call that returned several."""
    b = layer.backend
    tape, xs, outs = call.tape
    tape.accumulate = call.accumulating   # the built-in layers inside add theirs too
    weights = layer.trainable_weights
    leaves = [tape.leaf_of(w) for w in weights]
    numeric = [x for x in xs if isinstance(x, Tensor)]
    sources = numeric + [leaf for leaf in leaves if leaf is not None]
    douts = [Tensor(d, b) for d in (dout if isinstance(dout, list) else [dout])]
    added = getattr(call, "added_losses", None) or []
    # each added loss counts once in the total loss (times a LossScaleOptimizer's scale)
    seeds = [ops.full((), float(getattr(call, "loss_scale", 1.0)), backend=b) for _ in added]
    grads = tape.gradients(list(outs) + list(added), douts + seeds, sources)
    by_leaf = dict(zip([id(s) for s in sources], grads))
    filled = tape.filled_weights()
    for w, leaf in zip(weights, leaves):
        g = by_leaf.get(id(leaf)) if leaf is not None else None
        if g is not None:
            b.copy(call.grad(w), g.value)
        elif id(w) not in filled:
            b.fill(call.grad(w), 0.0)
    call.tape = None
    if not call.input_grad_needed:
        return None
    dxs, input_grads = [], iter(grads[:len(numeric)])
    for x in xs:
        if not isinstance(x, Tensor):
            dxs.append(None)   # a string input has no gradient
            continue
        g = next(input_grads)
        if g is None:
            g = ops.zeros(x.shape, backend=b)
        dxs.append(g.value)
    return dxs if layer.multiple_inputs else dxs[0]


def is_eager(inputs):
    """True when a layer is called on Tensors (inside a call) rather than on KerasTensors."""
    items = inputs if isinstance(inputs, (list, tuple)) else (inputs,)
    return any(isinstance(t, (Tensor, autodiff.Variable, StringTensor)) for t in items)


def call_eagerly(layer, inputs, training=None, options=None, mask=None):
    """A layer called on Tensors inside another layer's call: built on first use, attached to
    the tensors' backend, and run at once, in training mode while a tape records unless the
    call says training=. A layer written with ops records into the caller's
    tape; a built-in one runs its fused forward, and its backward becomes the tape's gradient
    rule (each call of a layer runs on its own context: eager_calls.py). mask: a built-in
    layer's input mask passed by hand (a Tensor or array, True / nonzero where a step is
    real), as `lstm(x, mask=embedding.compute_mask(ids))`."""
    many = isinstance(inputs, (list, tuple))
    items = list(inputs) if many else [inputs]
    strings = [isinstance(t, StringTensor) for t in items]
    if any(strings) and not layer.takes_strings():
        raise refuse(f"its input of shape {items[strings.index(True)].shape}",
                     f"{layer.describe()} computes on numbers")
    # a string batch reaches a call as it is (its string layers take it)
    ts = [t if string else ops.cast(ops.core.as_tensor(t), "float32")
          for t, string in zip(items, strings)]
    numeric = [t for t in ts if isinstance(t, Tensor)]
    b = numeric[0].backend if numeric else ops.core.default_backend()
    if layer.uses_call():
        layer.multiple_inputs = many
    elif layer.multiple_inputs != many:
        kind = "a list of tensors" if layer.multiple_inputs else "a single tensor"
        raise TypeError(f"{layer.describe()} must be called on {kind}")
    shapes = [t.shape[1:] for t in ts]
    layer.build_once(shapes if many else shapes[0], eager=True)
    if layer.backend is not b:
        _attach(layer, b, zeros=autodiff.probing())
    tape = autodiff.current_tape()
    mode = tape is not None if training is None else bool(training)
    if layer.uses_call():
        main, tensors = unpack_call_arguments(layer, ts, options)
        with added_losses.Collecting() as added:   # this call's add_loss values (layer.losses)
            outs, several = _outputs_of(layer, layer.call(main, **tensors,
                                                          **_call_kwargs(layer, mode, options)))
        layer._last_losses = added
        return outs if several else outs[0]
    needed = any(t.requires_grad for t in ts)
    if mask is not None:
        mask = ops.cast(ops.core.as_tensor(mask), "float32").value
    value, call = eager_calls.forward(layer, [t.value for t in ts] if many else ts[0].value,
                                      mode, b, needed, options, mask)
    several = isinstance(value, list)   # a layer of several outputs (a recurrent one's states)
    outs = [Tensor(v, b) for v in (value if several else [value])]
    if tape is None or not (needed or layer.trainable_weights):
        return outs if several else outs[0]

    def rule(g):
        dout = [t.value for t in g] if several else g.value
        d = eager_calls.backward(layer, dout, call, tape)
        if d is None:
            return (None,) * len(ts)
        return tuple(Tensor(v, b) for v in (d if many else [d]))
    for out in outs:
        out.requires_grad = True
    tape.record(tuple(outs) if several else outs[0], tuple(ts), rule)
    return outs if several else outs[0]


def _attach(layer, backend, zeros):
    """Attach a layer met inside a call; while probing shapes, with zero weights (no random
    numbers drawn, no upload that the real attach would repeat)."""
    if not zeros:
        layer.attach(backend)
        return
    layer.backend = backend
    for w in layer.weights:
        w.value, w.backend = backend.zeros(w.shape), backend
        w.grad = backend.zeros(w.shape) if w.trainable else None


_SYMBOLIC = SymbolicBackend()


# Unknown (None) input dims are probed at two sizes: an output dim that changes with them is
# unknown too. Sizes large enough for the usual windows, coprime so that strides and
# divisions (h // 8) tell them apart.
_PROBE_SIZES = (32, 45)


class BatchAxisDropped(ValueError):
    """A call whose output has no batch axis (a sum over the batch): fine in an eager call,
    as in Keras, but a model's graph cannot carry it."""


def infer_output_shape(layer, input_shape, backend=None, options=None):
    """The output shape (without the batch axis) of call on a one-sample batch, traced on
    symbolic tensors (no values, no random numbers drawn; see _probe_batch); on `backend`
    instead when given, where the layers inside attach with their real initial weights (a
    subclassed model's build). options: the call's keyword arguments."""
    shapes = input_shape if layer.multiple_inputs else [input_shape]
    if any(getattr(layer, "_string_inputs", None) or ()):
        try:
            return _probe(layer, shapes, backend, options)
        except Exception as exc:   # say which layer met the strings, and how they may be used
            if "string tensor" in str(exc):   # a layer or op inside said so already
                raise TypeError(f"in the call of {layer.describe()}: {exc}") from exc
            raise TypeError(f"{layer.describe()}: its call failed on its string input "
                            f"({type(exc).__name__}: {exc}). Strings stay on the host: in a call, "
                            "only StringLookup, Hashing and TextVectorization take them; turn "
                            "them into numbers with one of those first") from exc
    if not any(None in s for s in shapes):
        return _probe(layer, shapes, backend, options)
    if layer.sublayers():
        raise ValueError(f"{layer.describe()}: its input shape "
                         f"{[(None,) + tuple(s) for s in shapes]} has unknown (None) dims and "
                         "its call uses other layers; define compute_output_shape(input_shape) "
                         "and build its layers in build() for such inputs")
    a, b = ([tuple(size if d is None else d for d in s) for s in shapes] for size in _PROBE_SIZES)
    first, second = _probe(layer, a, None, options), _probe(layer, b, None, options)
    if isinstance(first, list):
        return [tuple(p if p == q else None for p, q in zip(f, g)) for f, g in zip(first, second)]
    return tuple(p if p == q else None for p, q in zip(first, second))


def _probe(layer, shapes, backend=None, options=None):
    outs, several = _probe_batch(layer, shapes, backend, 1, options)
    if any(not out.shape or out.shape[0] != 1 for out in outs):
        # A one-sample batch can lose its axis where a batch would not (ops.squeeze(x) on
        # (1, 3, 1)); Keras's symbolic shapes keep it (None is not 1): try two samples.
        two, _ = _probe_batch(layer, shapes, backend, 2, options)
        if all(t.shape and t.shape[0] == 2 for t in two):
            found = [tuple(t.shape[1:]) for t in two]
            return found if several else found[0]
    for out in outs:
        if not out.shape or out.shape[0] != 1:
            raise BatchAxisDropped(f"{layer.describe()}: call must keep the batch axis in a "
                                   f"model; on inputs {[(None,) + tuple(s) for s in shapes]} it "
                                   f"returned shape {out.shape} (called on arrays or tensors, "
                                   "it may drop it)")
    found = [tuple(out.shape[1:]) for out in outs]
    return found if several else found[0]


def _probe_batch(layer, shapes, backend, batch, options=None):
    """The output of call on a batch of `batch` samples of each shape: traced on symbolic
    tensors (backends/symbolic.py), or when the call needs values (or `backend` is given:
    a subclassed model's build, whose layers take their real initial weights there) run on
    zeros on that backend, or, once attached, on the layer's own (with its weights)."""
    if backend is None and layer.backend is None:
        try:
            return _run_probe(layer, shapes, _SYMBOLIC, batch, True, options)
        except Exception:   # the call needs values (or fails: the real run says why)
            pass
    from ..backends import get_backend
    target = backend or layer.backend or get_backend()
    return _run_probe(layer, shapes, target, batch, backend is None, options)


def _run_probe(layer, shapes, target, batch, probe, options=None, dtypes=None):
    """call on zeros of `shapes` (of `dtypes`, float32 by default): its outputs as the graph
    takes them (float32 Tensors, whether several); with dtypes given, call's own result."""
    strings = getattr(layer, "_string_inputs", None) or [False] * len(shapes)
    xs = [StringTensor(np.full((batch,) + tuple(s), "", dtype=object), probe=True) if string
          else Tensor(target.zeros((batch,) + tuple(s), dt), target)
          for s, dt, string in zip(shapes, dtypes or ["float32"] * len(shapes), strings)]
    with autodiff.on_backend(target, probe=probe), autodiff.recording(None), \
            autodiff.call_scope():
        main, tensors = unpack_call_arguments(layer, xs, options)
        mask = None
        if getattr(layer, "_input_masked", False):   # what the input's mask will look like
            mask = target.zeros((batch,) + tuple(shapes[0])[:-1])
            target.fill(mask, 1.0)
            mask = Tensor(mask, target)
        result = layer.call(main, **tensors, **_call_kwargs(layer, False, options, mask))
        return result if dtypes else _outputs_of(layer, result)


def traced_dtypes(layer, shapes, dtypes):
    """The dtypes of call's results (a list) on symbolic inputs of those shapes (unknown dims
    taken as 1) and dtypes, or None when the call needs values."""
    shapes = [tuple(1 if d is None else d for d in s) for s in shapes]
    try:
        result = _run_probe(layer, shapes, _SYMBOLIC, 1, True, None, dtypes)
    except Exception:   # the call needs values: the graph's dtype, float32, stands
        return None
    results = result if isinstance(result, (list, tuple)) else [result]
    return [ops.core.as_tensor(r).dtype if ops.is_tensor(r) else "float32" for r in results]
