"""SimpleRNNCell, LSTMCell, GRUCell and RNN(cell): Keras's cell API on the fused layers.

A cell holds one fused layer (SimpleRNN, LSTM or GRU with the cell's arguments), whose weights
are the cell's. `RNN(cell, ...)` returns that layer with the sequence arguments set, so the
cell and the RNN share their weights as in Keras, and the RNN computes exactly as those layers
do, on the same backend ops. Called on its own, `cell(x_t, states)` runs one step (the layer
over a sequence of length 1 from the given states) and returns `(h, [h])`, or LSTM's
`(h, [h, c])`, as Keras.
"""

import numpy as np

from .recurrent import GRU, LSTM, SimpleRNN

_SEQUENCE_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")


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
        config = {k: v for k, v in self._step.get_config().items()
                  if k not in _SEQUENCE_ARGUMENTS and k not in ("name", "trainable")}
        return dict(config, name=self.name)

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
        # one step: the layer's forward with the states as inputs, whatever its sequence flags
        kept = step.multiple_inputs, step.go_backwards, step.stateful
        step.multiple_inputs, step.go_backwards, step.stateful = True, False, False
        try:
            step.forward(tensors, bool(training))
        finally:
            step.multiple_inputs, step.go_backwards, step.stateful = kept
        new_states = [b.to_numpy(t) for t in step._last_states]
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


def RNN(cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
        unroll=False, name=None, **kwargs):
    """Keras RNN(cell): the fused layer running `cell` (a SimpleRNNCell, LSTMCell or GRUCell)."""
    if not isinstance(cell, _Cell):
        raise ValueError(f"RNN: cell must be a SimpleRNNCell, LSTMCell or GRUCell (minidl runs "
                         f"them on fused kernels), got {type(cell).__name__}")
    if kwargs.pop("zero_output_for_mask", False):
        raise ValueError("RNN: zero_output_for_mask needs masks, which are not supported yet")
    if kwargs:
        raise TypeError(f"RNN: unexpected arguments {sorted(kwargs)}")
    return cell.layer(return_sequences=return_sequences, return_state=return_state,
                      go_backwards=go_backwards, stateful=stateful, unroll=unroll, name=name)


__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "RNN"]
