"""SimpleRNNCell, LSTMCell, GRUCell and RNN(cell): Keras's cell API on the fused layers.

A cell holds one fused layer (SimpleRNN, LSTM or GRU with the cell's arguments), whose weights
are the cell's. `RNN(cell, ...)` returns that layer with the sequence arguments set, so the
cell and the RNN share their weights as in Keras, and the RNN computes exactly as those layers
do, on the same backend ops. Called on its own, `cell(x_t, states)` runs one step (the layer
over a sequence of length 1 from the given states) and returns `(h, [h])`, or LSTM's
`(h, [h, c])`, as Keras.
"""

import numpy as np

from . import custom_call
from .calls import LayerCall
from .recurrent_layers import GRU, LSTM, SimpleRNN
from .wrappers import _Wrapper

_SEQUENCE_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
                       "zero_output_for_mask")


class _Cell:
    layer_class = None

    def __init__(self, units, **kwargs):
        for name in _SEQUENCE_ARGUMENTS:
            if name in kwargs:
                raise TypeError(f"{type(self).__name__}: {name} is an argument of RNN, not of a "
                                f"cell")
        self.name = kwargs.pop("name", None)
        self._arguments = dict(kwargs, units=units)
        # the arguments are checked now, as the layer checks them
        self._step = self.layer_class(**self._arguments)
        self.units = units

    @property
    def state_size(self):
        return [self.units] * self._step.state_count

    @property
    def output_size(self):
        return self.units

    def get_config(self):
        # use_cudnn is the layer's (Keras's cells have no such argument)
        config = {k: v for k, v in self._step.get_config().items()
                  if k not in _SEQUENCE_ARGUMENTS and k not in ("name", "trainable", "use_cudnn")}
        return dict(config, name=self.name)

    # Keras's files: a cell's weights at its own path (.../cells/lstm_cell/vars), read and
    # written by its fused layer
    def keras_state_children(self):
        return []

    @property
    def keras_own_weights(self):
        return self._step.weights

    @property
    def keras_state_owner(self):
        return self._step

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def layer(self, name=None, **sequence_arguments):
        """The fused layer running this cell over a sequence (once per cell)."""
        if getattr(self, "_claimed", False):
            raise ValueError(f"{type(self).__name__}: this cell already runs in an RNN layer; make "
                             f"another cell")
        self._claimed = True
        step = self._step
        for key, value in sequence_arguments.items():
            setattr(step, key, bool(value))
        if name is not None:
            step.name = name
        return step

    @property
    def weights(self):
        return self._step.weights

    def get_weights(self):
        return self._step.get_weights()

    def set_weights(self, values):
        self._step.set_weights(values)

    def __call__(self, inputs, states, training=False):
        """One step on numpy arrays: inputs (N, features), states [(N, units)] * state count."""
        x = np.asarray(inputs, np.float32)
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        if x.ndim != 2:
            raise ValueError(f"{type(self).__name__}: inputs must be (batch, features), got "
                             f"shape {x.shape}")
        step = self._step
        if len(states) != step.state_count:
            raise ValueError(f"{type(self).__name__}: states must be a list of {step.state_count} "
                             f"arrays (batch, {self.units}), got {len(states)}")
        if not step.built:
            step.build_once((None, x.shape[1]))
        if step.backend is None:
            from ..backends import get_backend
            step.attach(get_backend())
        b = step.backend
        tensors = [b.from_numpy(x[:, None, :])] + [
            b.from_numpy(np.ascontiguousarray(s, np.float32)) for s in states]
        # one step: the layer's loop over a sequence of one step from the given states, on a
        # call of its own (whatever the layer's sequence flags)
        call = LayerCall(step, b)
        call.input_grad_needed = False
        call.training = bool(training)
        step.run_sequence(call, tensors[0], tensors[1:], bool(training), backwards=False)
        new_states = [b.to_numpy(t) for t in call.last_states]
        return new_states[0], new_states


class SimpleRNNCell(_Cell):
    """Keras SimpleRNNCell (the arguments of SimpleRNN without the sequence ones)."""
    layer_class = SimpleRNN


class LSTMCell(_Cell):
    """Keras LSTMCell (the arguments of LSTM without the sequence ones)."""
    layer_class = LSTM


class GRUCell(_Cell):
    """Keras GRUCell (the arguments of GRU without the sequence ones)."""
    layer_class = GRU


class StackedRNNCells:
    """Keras StackedRNNCells: cells run one after the other at every step, each feeding the
    next; `RNN(StackedRNNCells(cells))` (or `RNN([cells])`) runs their fused layers stacked."""

    def __init__(self, cells, name=None):
        if isinstance(cells, (list, tuple)):   # a config's cells: {"class_name", "config"}
            cells = [CELL_CLASSES[c["class_name"]].from_config(c["config"])
                     if isinstance(c, dict) and c.get("class_name") in CELL_CLASSES else c
                     for c in cells]
        cells = list(cells)
        if not cells or not all(isinstance(c, _Cell) for c in cells):
            raise ValueError("StackedRNNCells: cells must be a non-empty list of SimpleRNNCell, "
                             f"LSTMCell or GRUCell, got {[type(c).__name__ for c in cells]}")
        self.cells, self.name = cells, name

    @property
    def state_size(self):
        return [size for cell in self.cells for size in cell.state_size]

    @property
    def output_size(self):
        return self.cells[-1].output_size

    def get_config(self):
        return {"cells": [{"class_name": type(c).__name__, "config": c.get_config()}
                          for c in self.cells], "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(config["cells"], name=config.get("name"))

    def keras_state_children(self):
        """Keras's StackedRNNCells.cells: each cell at cells/lstm_cell, cells/gru_cell, ..."""
        return [("cells", list(self.cells))]

    def __call__(self, inputs, states, training=False):
        """One step: each cell in turn on the previous one's output, with its own states."""
        out, new_states, start = inputs, [], 0
        for cell in self.cells:
            count = len(cell.state_size)
            out, cell_states = cell(out, list(states[start:start + count]), training)
            new_states += cell_states
            start += count
        return out, new_states


class StackedRNN(_Wrapper):
    """RNN over StackedRNNCells: the cells' fused layers in a chain, every one but the last
    returning its whole sequence (go_backwards reverses the first one's input, after which the
    sequence is in processing order, as Keras's stacked step sees it).

    With return_state every layer returns its final states too: the call has several outputs,
    [output, the first cell's states, the second's, ...] (one graph node), which a call on
    symbolic tensors or arrays returns in Keras's structure: [output, [h, c], h] for an LSTMCell
    then a GRUCell (a cell of one state gives it bare, as Keras's functional models do)."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, name=None, trainable=True,
                 zero_output_for_mask=False):
        super().__init__(name=name, trainable=trainable)
        if isinstance(cell, dict):   # get_config's {"class_name": "StackedRNNCells", "config"}
            if cell.get("class_name") != "StackedRNNCells" or not isinstance(cell.get("config"),
                                                                             dict):
                raise ValueError(f"{self.describe()}: cell must be StackedRNNCells' config, got "
                                 f"{cell!r:.100}")
            cell = StackedRNNCells.from_config(cell["config"])
        self.cells = cell if isinstance(cell, StackedRNNCells) else StackedRNNCells(cell)
        self.return_sequences, self.go_backwards = bool(return_sequences), bool(go_backwards)
        self.stateful, self.unroll = bool(stateful), bool(unroll)
        self.return_state = bool(return_state)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        count = len(self.cells.cells)
        # with a mask, the layers before the last see a skipped step but skip it too: only the
        # last one's outputs are Keras's (zero_output_for_mask applies to it)
        self._subs = tuple(cell.layer(return_sequences=bool(return_sequences) or i < count - 1,
                                      return_state=self.return_state,
                                      go_backwards=bool(go_backwards) and i == 0,
                                      stateful=bool(stateful), unroll=bool(unroll),
                                      zero_output_for_mask=(self.zero_output_for_mask
                                                            and i == count - 1))
                           for i, cell in enumerate(self.cells.cells))

    keras_class = "RNN"   # Keras's class: RNN over a StackedRNNCells

    def _inner(self):
        return self._subs

    def keras_state_children(self):
        return [("cell", self.cells)]   # Keras's RNN.cell: weights at cell/cells/<cell>/vars

    def get_config(self):
        return dict(super().get_config(), cell={"class_name": "StackedRNNCells",
                                                "config": self.cells.get_config()},
                    return_sequences=self.return_sequences, return_state=self.return_state,
                    go_backwards=self.go_backwards, stateful=self.stateful, unroll=self.unroll,
                    zero_output_for_mask=self.zero_output_for_mask)

    def build(self, input_shape):
        shape = tuple(input_shape)
        for index, sub in enumerate(self._subs):
            sub.build_once(shape)
            for w in sub.weights:   # unique names in the wrapper: cell index / weight
                if "/" not in w.name:
                    w.name = f"cell_{index}/{w.name}"
            shape = (shape[0], sub.units)

    def __call__(self, inputs, training=None):
        if self.return_state and custom_call.is_eager(inputs):
            # a minidl.ops Tensor has one value: the tape records one output per call
            raise ValueError(f"{self.describe()}: return_state=True works in models and eager "
                             f"calls, not inside another layer's call")
        result = super().__call__(inputs, training=training)
        if not self.return_state:
            return result
        nested, rest = [result[0]], list(result[1:])   # Keras's structure of the states
        for sub in self._subs:
            own, rest = rest[:sub.state_count], rest[sub.state_count:]
            nested.append(own if len(own) > 1 else own[0])
        return nested

    def compute_output_shape(self, input_shape):
        shape, states = tuple(input_shape), []
        for sub in self._subs:   # each layer's output is the next one's input
            shape = sub.compute_output_shape(shape)
            if self.return_state:
                shape, *own = shape
                states += own
        return [tuple(shape)] + states if self.return_state else tuple(shape)

    def reset_states(self):
        for sub in self._subs:
            sub.reset_states()

    reset_state = reset_states

    supports_masking = True

    def output_has_mask(self, input_masked):
        return bool(input_masked) and self.return_sequences and not self.return_state

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences and not self.return_state else None

    def _processing_order_mask(self, call):
        """The call's mask in the order the layers after the first see the steps (reversed
        with go_backwards: the first layer's sequence comes out in processing order)."""
        mask = call.mask
        if mask is None or not self.go_backwards:
            return mask
        b = self.backend
        n, steps = b.shape(mask)
        reversed_mask = call.buffer("reversed_mask", (n, steps))
        b.strided_copy(reversed_mask, mask, steps - 1, (steps, -1))
        return reversed_mask

    def forward(self, call, x, training):
        self._seed_sublayers()
        states = []
        later_mask = self._processing_order_mask(call)
        for index, sub in enumerate(self._subs):
            # the layers after the first feed their gradient to the one before them
            x = self._run_inner(call, ("cell", index), sub, x, training,
                                call.input_grad_needed or index > 0,
                                mask=call.mask if index == 0 else later_mask)
            if self.return_state:
                x, *own = x
                states += own
        return [x] + states if self.return_state else x

    def backward(self, call, dout):
        dstates = []   # with return_state: d(each layer's final states), in the layers' order
        if self.return_state:
            dout, rest = dout[0], list(dout[1:])
            for sub in self._subs:
                dstates.append(rest[:sub.state_count])
                rest = rest[sub.state_count:]
        for index in range(len(self._subs) - 1, -1, -1):
            d = [dout] + dstates[index] if self.return_state else dout
            dout = self._backward_inner(call, ("cell", index), d)
            if dout is None:
                return None
        return dout


class RNN:
    """Keras RNN(cell): the fused layer running `cell` (a SimpleRNNCell, LSTMCell or GRUCell), or
    the stacked layers of a list of cells / StackedRNNCells. The call returns that layer (an RNN
    object is never made); in Keras's files it is an "RNN" with its cell (rnn_config)."""

    def __new__(cls, cell, return_sequences=False, return_state=False, go_backwards=False,
                stateful=False, unroll=False, name=None, trainable=True,
                zero_output_for_mask=False):
        sequence = dict(return_sequences=return_sequences, return_state=return_state,
                        go_backwards=go_backwards, stateful=stateful, unroll=unroll, name=name,
                        zero_output_for_mask=zero_output_for_mask)
        if isinstance(cell, dict):   # a config's {"class_name", "config"}
            cell = _cell_from_spec(cell)
        if isinstance(cell, (list, tuple, StackedRNNCells)):
            layer = StackedRNN(cell, **sequence)
        elif not isinstance(cell, _Cell):
            raise ValueError(f"RNN: cell must be a SimpleRNNCell, LSTMCell or GRUCell (minidl runs "
                             f"them on fused kernels), or a list of them, got "
                             f"{type(cell).__name__}")
        else:
            layer = cell.layer(**sequence)
            layer.keras_class, layer.keras_cell = "RNN", cell
        layer.trainable = bool(trainable)
        return layer

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _cell_from_spec(spec):
    kind = spec.get("class_name")
    if kind == "StackedRNNCells":
        return StackedRNNCells.from_config(spec["config"])
    if kind not in CELL_CLASSES or not isinstance(spec.get("config"), dict):
        raise ValueError(f"RNN: cell must be the config of one of {sorted(CELL_CLASSES)} or "
                         f"StackedRNNCells, got {spec!r:.100}")
    return CELL_CLASSES[kind].from_config(spec["config"])


def rnn_config(layer):
    """Keras's RNN config of a layer made by RNN(cell): the sequence arguments and the cell."""
    config = layer.get_config()
    out = {key: config[key] for key in ("name", "trainable") + _SEQUENCE_ARGUMENTS}
    cell = layer.keras_cell
    return dict(out, cell={"class_name": type(cell).__name__, "config": cell.get_config()})


CELL_CLASSES = {cls.__name__: cls for cls in (SimpleRNNCell, LSTMCell, GRUCell)}

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells", "StackedRNN", "RNN",
           "rnn_config"]
