"""Where a ConvLSTM call starts from: zeros, the states given as initial_state, or those a
stateful layer kept from its last call (Keras's ConvLSTM: its RNN's initial_state and state
variables).

Each state, h and c, is (N, *output spatial, filters), the output's sizes (ConvLSTM1D's
(N, OW, f)). A call with initial_state=[h0, c0] has them as further inputs (a node of three
inputs in a model, as LSTM's): the layer's backward returns dL/dh0 (the recurrent
convolution of h0 at the first step, plus what a masked first step passes straight on) and
dL/dc0 (dc through the first step's forget gate, or straight on where it was masked).
"""

from .base import format_shape


def given_states(layer, initial_state):
    """initial_state as the list [h0, c0] (a list or tuple of two tensors), else a clear
    error naming the layer."""
    states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [
        initial_state]
    if len(states) != 2:
        raise ValueError(f"{layer.describe()}: initial_state must be a list of 2 tensors [h, c], "
                         f"each (batch, *output spatial sizes, {layer.filters}), got "
                         f"{len(states)} tensor(s)")
    return states


def state_shape(layer, sequence_shape):
    """One sample's state shape, (*output spatial sizes, filters), for inputs of
    `sequence_shape` (one sample's: (T, *spatial, C))."""
    return layer._own_axes(layer._output_image(sequence_shape)) + (layer.filters,)


def check_state_shapes(layer, sequence_shape, shapes):
    """The states' sample shapes (model inputs, or an eager call's arrays) against those
    the inputs give (None fits any size, as an Input's unknown dimension)."""
    expected = state_shape(layer, sequence_shape)
    for name, shape in zip(("h", "c"), shapes):
        shape = tuple(shape)
        if len(shape) != len(expected) or any(
                d is not None and d != e for d, e in zip(shape, expected)):
            raise ValueError(f"{layer.describe()}: initial state {name} must have shape "
                             f"{format_shape(expected)} (batch, *output spatial sizes, "
                             f"filters) for inputs {format_shape(sequence_shape)}, got "
                             f"{format_shape(shape)}")


def initial_states(layer, call, n, given=None):
    """The call's (h0 (N, *out, f), c0 (rows, f)) and call.first_recurrent, the first step
    with a recurrent term (1 when h0 is zero: step 0 has none). A stateful layer's kept
    states fix its batch size at the first call (as Keras: a stateful RNN takes one batch
    size); given states start the call instead of the kept ones (as Keras), and the call's
    final states are kept as ever."""
    b, f = layer.backend, layer.filters
    shape = (n,) + tuple(call.out_image) + (f,)
    h0, c0 = call.buffer("h0", shape), call.buffer("c0", (call.rows, f))
    own = (n,) + layer._own_axes(call.out_image) + (f,)
    call.given_states = given is not None
    if given is not None:
        for name, state in zip(("h", "c"), given):
            if tuple(b.shape(state)) != own:
                raise ValueError(f"{layer.describe()}: initial state {name} must have shape "
                                 f"{own} (batch, *output spatial sizes, filters) for inputs "
                                 f"{tuple(call.x_shape)}, got {tuple(b.shape(state))}")
    if layer.stateful:
        if layer._states is None:
            layer._states = [b.zeros(own), b.zeros(own)]
        elif tuple(b.shape(layer._states[0])) != own:
            # shapes with their batch sizes (format_shape writes a sample's)
            raise ValueError(f"{layer.describe()}: a stateful layer keeps states of shape "
                             f"{tuple(b.shape(layer._states[0]))} (batch, *output, filters); "
                             f"inputs {tuple(call.x_shape)} would need {own}. As Keras, a "
                             f"stateful RNN takes batches of one size")
    start = given if given is not None else (layer._states if layer.stateful else None)
    if start is None:
        b.fill(h0, 0.0)
        b.fill(c0, 0.0)
        call.first_recurrent = 1
        return h0, c0
    b.copy(b.reshape(h0, own), start[0])
    b.copy(b.reshape(c0, own), start[1])
    call.first_recurrent = 0
    return h0, c0


def keep_states(layer, h_last, c_last):
    """A stateful layer keeps the call's final states for the next call."""
    if layer.stateful:
        b = layer.backend
        shape = b.shape(layer._states[0])
        b.copy(layer._states[0], b.reshape(h_last, shape))
        b.copy(layer._states[1], b.reshape(c_last, shape))
