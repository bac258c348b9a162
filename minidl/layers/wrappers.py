"""Bidirectional and TimeDistributed: layers that run another layer (Keras's wrappers).

The wrapped layers are built, attached and run by the wrapper, which owns their weights as
its own (Keras's paths: "forward_lstm/kernel", "backward_lstm/kernel"; TimeDistributed keeps
its layer's names). Each wrapped layer runs on a child of the wrapper's call context
(`call.child(key, layer)`, layers/calls.py), so a wrapper called twice keeps two sets of
what its layers saved, and their weight gradients add up when the wrapper's call
accumulates. Everything they compute goes through the backend: the time reversal and the
merges are strided copies, concatenations and elementwise ops.
"""

from ..custom_objects import get_registered_object
from . import custom_call
from .base import Layer, format_shape
from .calls import run_backward, run_forward
from .recurrent import Recurrent

MERGE_MODES = ("concat", "sum", "mul", "ave")


def _layer_classes(cls=Layer):
    """{name: class} of every Layer subclass defined so far (the built-in layers, and the
    user's that are imported), without importing minidl.layers (which imports this module)."""
    found = {}
    for sub in cls.__subclasses__():
        found.setdefault(sub.__name__, sub)
        found.update({k: v for k, v in _layer_classes(sub).items() if k not in found})
    return found


def wrapped_layer(spec, owner):
    """The layer of a wrapper's config entry {"class_name", "config"}."""
    cls = get_registered_object(spec["class_name"], None, _layer_classes())
    if cls is None:
        raise ValueError(f"{owner}: unknown layer class {spec['class_name']!r} in its config "
                         "(register a class of your own with "
                         "@minidl.saving.register_keras_serializable)")
    return cls.from_config(spec["config"])


def _spec(layer):
    """{"class_name", "config"} of a wrapped layer (what wrapped_layer reads back)."""
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def _removeprefix(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


class _Wrapper(Layer):
    """A layer holding sublayers: their weights are its weights. The model seeds the wrapper
    every training step (needs_step_seed); it hands distinct seeds to its sublayers, so that a
    wrapped layer's dropout draws new masks every step as it would unwrapped."""

    needs_step_seed = True
    seed = None
    step_seed = 0

    def _seed_sublayers(self):
        for index, sub in enumerate(self._inner()):
            if sub.needs_step_seed:
                sub.step_seed = (self.step_seed * len(self._subs) + index) % (1 << 62)

    def _inner(self):
        raise NotImplementedError

    @property
    def weights(self):
        return [w for sub in self._inner() for w in sub.weights]

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for sub in self._inner() for w in sub.trainable_weights]

    def attach(self, backend, initial_values=None):
        self.backend = backend
        for sub in self._inner():
            sub.attach(backend)

    def _run_inner(self, call, key, sub, x, training, input_grad_needed=None, mask=None):
        """sub's forward on its child context `key` of `call` with the Keras mask `mask`; it
        needs dL/dinput when the wrapper does (or as `input_grad_needed` says)."""
        if sub.backend is not self.backend:
            # the wrapper attached for a shape probe (custom_call._attach: zero weights, its
            # own backend only): its layers' weights are there, give them the backend too
            sub.backend = self.backend
        inner = call.child(key, sub)
        inner.input_grad_needed = (call.input_grad_needed if input_grad_needed is None
                                   else input_grad_needed)
        inner.mask = mask
        return run_forward(sub, inner, x, training)

    def _backward_inner(self, call, key, dout):
        """The backward of the child call `key`, accumulating as the wrapper's call does."""
        inner = call.children[key]
        return run_backward(inner.layer, inner, dout, accumulate=call.accumulating)


class Bidirectional(_Wrapper):
    """Keras Bidirectional: `layer` over the sequence and a copy with go_backwards flipped
    (or `backward_layer`), their outputs merged by merge_mode ("concat", "sum", "mul", "ave").
    With return_sequences the backward layer's outputs are put back in time order first.
    With return_state the call has several outputs, as Keras's: [merged output, the forward
    layer's final states, the backward layer's] (LSTM: [y, h_f, c_f, h_b, c_b])."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, name=None,
                 trainable=True):
        if not isinstance(layer, Recurrent):
            raise ValueError(f"Bidirectional: layer must be a recurrent layer (SimpleRNN, LSTM, "
                             f"GRU), got {type(layer).__name__}")
        super().__init__(name=name, trainable=trainable)
        if merge_mode not in MERGE_MODES:
            raise ValueError(f"{self.describe()}: merge_mode must be one of {MERGE_MODES}, got "
                             f"{merge_mode!r}")
        self.merge_mode = merge_mode
        config = layer.get_config()
        # Keras's names: "forward_lstm", "backward_lstm" (not "forward_forward_lstm" for the
        # forward layer of a config this wrapper wrote)
        self.forward_layer = type(layer).from_config(
            dict(config, name="forward_" + _removeprefix(layer.name, "forward_")))
        if backward_layer is None:
            backward_layer = type(layer).from_config(dict(
                config, name="backward_" + _removeprefix(layer.name, "backward_"),
                go_backwards=not layer.go_backwards))
        elif backward_layer.go_backwards == layer.go_backwards:
            raise ValueError(f"{self.describe()}: backward_layer must have go_backwards="
                             f"{not layer.go_backwards}")
        elif (type(backward_layer) is not type(layer) or backward_layer.units != layer.units
              or backward_layer.return_sequences != layer.return_sequences
              or backward_layer.return_state != layer.return_state):
            raise ValueError(f"{self.describe()}: backward_layer must be a {type(layer).__name__} "
                             f"of {layer.units} units with return_sequences="
                             f"{layer.return_sequences} and return_state={layer.return_state} "
                             f"as layer, got {backward_layer.describe()}")
        self.backward_layer = backward_layer
        for sub in (self.forward_layer, self.backward_layer):
            # as Keras: with a mask, a skipped step's output is 0 in the merged sequences
            sub.zero_output_for_mask = sub.return_sequences
        self._subs = (self.forward_layer, self.backward_layer)
        self._initial_weights = weights

    def _inner(self):
        return self._subs

    def keras_state_children(self):
        """Keras's attributes holding the two layers (weights at forward_layer/cell/vars)."""
        return [("backward_layer", self.backward_layer), ("forward_layer", self.forward_layer)]

    def get_config(self):
        """As Keras's: `layer` is the forward layer's config, `backward_layer` the other's."""
        return dict(super().get_config(), merge_mode=self.merge_mode,
                    layer=_spec(self.forward_layer), backward_layer=_spec(self.backward_layer))

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = wrapped_layer(config.pop("layer"), cls.__name__)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            backward = wrapped_layer(backward, cls.__name__)
        return cls(layer, backward_layer=backward, **config)

    def build(self, input_shape):
        for sub in self._subs:
            sub.build_once(input_shape)
            for w in sub.weights:   # unique names in the wrapper, as Keras's paths
                if not w.name.startswith(sub.name + "/"):
                    w.name = f"{sub.name}/{w.name}"

    def __call__(self, inputs, training=None):
        if self.forward_layer.return_state and custom_call.is_eager(inputs):
            # a minidl.ops Tensor has one value: the tape records one output per call
            raise ValueError(f"{self.describe()}: return_state=True works in models and eager "
                             f"calls, not inside another layer's call")
        return super().__call__(inputs, training=training)

    def compute_output_shape(self, input_shape):
        shape = self.forward_layer.compute_output_shape(input_shape)
        states = []
        if self.forward_layer.return_state:   # [output, *states] of each direction
            shape, states = shape[0], list(shape[1:]) * 2
        shape = tuple(shape)
        merged = shape[:-1] + (shape[-1] * 2,) if self.merge_mode == "concat" else shape
        return [merged] + states if states else merged

    def attach(self, backend, initial_values=None):
        super().attach(backend, initial_values)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _reverse_time(self, out, y):
        """out (N, T, u) = y with its time axis reversed."""
        n, steps, u = self.backend.shape(y)
        self.backend.strided_copy(out, y, (steps - 1) * u, (steps * u, -u, 1))

    supports_masking = True

    def output_has_mask(self, input_masked):
        """The mask passes on with return_sequences (not with return_state: the graph would
        give it to the states too)."""
        layer = self.forward_layer
        return bool(input_masked) and layer.return_sequences and not layer.return_state

    def compute_mask(self, inputs, mask=None):
        layer = self.forward_layer
        return mask if layer.return_sequences and not layer.return_state else None

    def forward(self, call, x, training):
        self._seed_sublayers()
        yf = self._run_inner(call, "forward", self.forward_layer, x, training, mask=call.mask)
        yb = self._run_inner(call, "backward", self.backward_layer, x, training, mask=call.mask)
        states = []
        if self.forward_layer.return_state:
            (yf, *forward_states), (yb, *backward_states) = yf, yb
            states = forward_states + backward_states
        out = self._merge(call, yf, yb)
        return [out] + states if states else out

    def _merge(self, call, yf, yb):
        b = self.backend
        shape = b.shape(yf)
        if self.forward_layer.return_sequences:
            rev = call.buffer("reversed", shape)
            self._reverse_time(rev, yb)
            yb = rev
        call.yf, call.yb = yf, yb
        if self.merge_mode == "concat":
            out = call.buffer("out", shape[:-1] + (2 * shape[-1],))
            b.concat_forward(out, [yf, yb])
            return out
        out = call.buffer("out", shape)
        if self.merge_mode == "sum":
            b.add(out, yf, yb)
        elif self.merge_mode == "ave":
            b.axpby(out, 0.5, yf, 0.5, yb)
        else:
            b.multiply(out, yf, yb)
        return out

    def backward(self, call, dout):
        b = self.backend
        forward_dstates = backward_dstates = None
        if self.forward_layer.return_state:   # [doutput, d(forward states), d(backward states)]
            count = self.forward_layer.state_count
            dout, forward_dstates, backward_dstates = (dout[0], list(dout[1:1 + count]),
                                                       list(dout[1 + count:]))
        shape = b.shape(call.yf)
        df, db = call.buffer("dforward", shape), call.buffer("dbackward", shape)
        if self.merge_mode == "concat":
            b.concat_backward([df, db], dout)
        elif self.merge_mode == "sum":
            b.copy(df, dout)
            b.copy(db, dout)
        elif self.merge_mode == "ave":
            b.axpby(df, 0.5, dout, 0.0, dout)
            b.copy(db, df)
        else:
            b.multiply(df, dout, call.yb)
            b.multiply(db, dout, call.yf)
        if self.forward_layer.return_sequences:
            rev = call.buffer("dreversed", shape)
            self._reverse_time(rev, db)
            db = rev
        if forward_dstates is not None:   # each layer's douts: [doutput, *d(its states)]
            df, db = [df] + forward_dstates, [db] + backward_dstates
        dx_forward = self._backward_inner(call, "forward", df)
        dx_backward = self._backward_inner(call, "backward", db)
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", b.shape(dx_forward))
        b.add(dx, dx_forward, dx_backward)
        return dx


class TimeDistributed(_Wrapper):
    """Keras TimeDistributed: `layer` applied to every time step of (N, T, ...) inputs, as one
    call on the (N * T, ...) view of them (no copy)."""

    def __init__(self, layer, name=None, trainable=True):
        if not isinstance(layer, Layer):
            raise ValueError(f"TimeDistributed: layer must be a minidl layer, got "
                             f"{type(layer).__name__}")
        super().__init__(name=name, trainable=trainable)
        self.layer = layer
        self._subs = (layer,)

    def _inner(self):
        return self._subs

    def keras_state_children(self):
        return [("layer", self.layer)]   # Keras's attribute: weights at <path>/layer/vars

    def get_config(self):
        return dict(super().get_config(), layer=_spec(self.layer))

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        spec = config.pop("layer")
        return cls(wrapped_layer(spec, cls.__name__), **config)

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(f"{self.describe()} expects inputs of rank >= 3 (batch, time, ...), "
                             f"got shape {format_shape(input_shape)}")
        self.layer.build_once(tuple(input_shape[1:]))

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(self.layer.compute_output_shape(tuple(input_shape[1:])))

    def forward(self, call, x, training):
        b = self.backend
        self._seed_sublayers()
        shape = call.x_shape = b.shape(x)
        y = self._run_inner(call, "layer", self.layer,
                            b.reshape(x, (shape[0] * shape[1],) + shape[2:]), training)
        out_shape = b.shape(y)
        return b.reshape(y, (shape[0], shape[1]) + out_shape[1:])

    def backward(self, call, dout):
        b = self.backend
        shape = b.shape(dout)
        dx = self._backward_inner(call, "layer",
                                  b.reshape(dout, (shape[0] * shape[1],) + shape[2:]))
        if dx is None:
            return None
        return b.reshape(dx, call.x_shape)


__all__ = ["Bidirectional", "TimeDistributed"]
