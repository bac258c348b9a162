"""minidl.GradientTape: gradients of a value computed with minidl.ops, for a train_step of
your own (Keras's tf.GradientTape, which its "customizing fit()" guide uses):

    with minidl.GradientTape() as tape:
        y_pred = self(x, training=True)
        loss = self.compute_loss(y=y, y_pred=y_pred)
    grads = tape.gradient(loss, self.trainable_weights)
    self.optimizer.apply(grads, self.trainable_weights)

Inside the block the ops record themselves on an autodiff Tape (autodiff.py) and built-in
layers run their fused forward, their backward recorded as a gradient rule; gradient() runs
the rules backwards once, so a tape gives gradients once.
"""

from contextlib import ExitStack

from . import autodiff, ops
from .autodiff import Tensor, Variable


class GradientTape:
    """Records the ops run inside `with GradientTape() as tape:` on the active backend (or
    on `backend`)."""

    def __init__(self, backend=None):
        self._backend = backend
        self._tape = None
        self._stack = None
        self._used = False

    def __enter__(self):
        backend = self._backend or ops.core.default_backend()
        self._tape = autodiff.Tape(backend)
        self._stack = ExitStack()
        self._stack.enter_context(autodiff.on_backend(backend))
        self._stack.enter_context(autodiff.recording(self._tape))
        self._stack.enter_context(autodiff.call_scope())
        return self

    def __exit__(self, *exc):
        self._stack.close()
        return False

    def gradient(self, target, sources):
        """d(target)/d(each source) for a scalar target (or the sum of a tensor's elements):
        a Tensor per source, shaped as the source, or None where the target does not depend
        on it. sources: one weight or Tensor, or a list of them (model.trainable_weights)."""
        if self._tape is None:
            raise RuntimeError("GradientTape.gradient: use the tape in a `with` block first")
        if self._used:
            raise RuntimeError("GradientTape.gradient can be called once per tape (the "
                               "built-in layers' backward uses the state of their forward)")
        if not isinstance(target, Tensor):
            raise TypeError(f"GradientTape.gradient: target must be a minidl Tensor computed "
                            f"inside the tape, got {type(target).__name__}")
        many = isinstance(sources, (list, tuple))
        if many and any(isinstance(s, (list, tuple)) for s in sources):
            # a nested list (each part's trainable_variables): the gradients come back nested alike
            flat = self.gradient(target, [s for part in sources for s in
                                          (part if isinstance(part, (list, tuple)) else [part])])
            grads, at = [], 0
            for part in sources:
                size = len(part) if isinstance(part, (list, tuple)) else 1
                grads.append(flat[at:at + size] if isinstance(part, (list, tuple)) else flat[at])
                at += size
            return grads
        sources = list(sources) if many else [sources]
        for s in sources:
            if not isinstance(s, (Tensor, Variable)):
                raise TypeError(f"GradientTape.gradient: sources must be weights or Tensors, "
                                f"got {type(s).__name__}")
        self._used = True
        tape, b = self._tape, self._tape.backend
        leaves = [tape.leaf_of(s) if isinstance(s, Variable) else s for s in sources]
        with autodiff.recording(None), autodiff.on_backend(b):
            ones = ops.ones_like(target)
        found = tape.gradients([target], [ones], [l for l in leaves if l is not None])
        by_leaf = {id(l): g for l, g in zip([l for l in leaves if l is not None], found)}
        filled = tape.filled_weights()
        grads = []
        for s, leaf in zip(sources, leaves):
            g = by_leaf.get(id(leaf)) if leaf is not None else None
            if g is None and isinstance(s, Variable) and id(s) in filled:
                g = Tensor(s.grad, b)   # a built-in layer's backward wrote it
            grads.append(g)
        return grads if many else grads[0]
