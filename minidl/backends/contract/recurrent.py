"""The recurrent section of the contract: LSTM / GRU / SimpleRNN over a whole sequence and the
fused gate ops of one step.

Sequences are time-major: a (T, N, k) tensor holds step t at [t]. The layer computes the input
projection x W + b of every step with one gemm; the sequence ops run the loop over time: per
step one gemm for the recurrent projection and one fused gate op, backward the same way, and
the recurrent kernel's gradient as gemms over the sequence. Gate order i, f, c, o (LSTM),
z, r, h (GRU, reset_after=True), as Keras 3. activation / recurrent_activation are one of
GATE_ACTIVATIONS.

Every sequence op takes mask: None, or Keras's mask of the steps in processing order,
time-major (T, N, 1) of 1.0 (the step runs) and 0.0 (skipped: the row's states stay those of
the step before, and so does its hseq[t]; backward passes their gradient on); and
recurrent_mask: None, or Keras's recurrent dropout masks (N, k u), one (N, u) per gate in gate
order: gate g's projection of h_{t-1} is (h_{t-1} * mask_g) U_g at every step
(backends/recurrent_dropout.py).

The public ops check every shape and activation once; a backend implements the underscore
names: the step ops in numpy_ops/recurrent.py, cpu/recurrent.py, opencl/recurrent.py, the
sequence loops in recurrent_host.py (numpy and cpu: a step is a free view) and
recurrent_device.py (opencl: a step is a strided copy). The loops call the step ops'
underscore names, so a step is not checked again.
"""

from .checks import optional_shape, same_shape

# The activations the fused gate ops compute (their derivatives follow from their outputs); the
# C and OpenCL kernels take activations.code's number of each.
GATE_ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "hard_sigmoid")


def check_gate_activation(op, argument, name):
    """Raise a ValueError naming the op and the argument unless `name` is a gate activation."""
    if name not in GATE_ACTIVATIONS:
        raise ValueError(f"{op}: {argument} must be one of {GATE_ACTIVATIONS} (the activations the "
                         f"fused recurrent kernels compute), got {name!r}")


def check_sequence(op, name, seq, shape):
    """Raise a ValueError naming the op and the argument unless seq has `shape`."""
    same_shape(op, name, seq, tuple(shape))


def check_step_mask(op, mask, steps, n):
    """A sequence op's Keras mask: None, or (T, N, 1) of 1.0 (the step runs) / 0.0 (skipped)."""
    if mask is not None:
        same_shape(op, "mask", mask, (steps, n, 1))


def _masks(op, mask, recurrent_mask, steps, n, width):
    """mask (T, N, 1) and recurrent_mask (N, width) (recurrent dropout: one (N, u) per gate),
    each optional."""
    check_step_mask(op, mask, steps, n)
    optional_shape(op, "recurrent_mask", recurrent_mask, (n, width))


def _activations(op, activation, recurrent_activation):
    check_gate_activation(op, "activation", activation)
    check_gate_activation(op, "recurrent_activation", recurrent_activation)


def _step_units(op, gates, width):
    """(N, u) of one step's gate rows (N, width * u)."""
    if len(gates.shape) != 2 or gates.shape[1] % width:
        raise ValueError(f"{op}: gates must be (N, {width} * units), got {tuple(gates.shape)}")
    return gates.shape[0], gates.shape[1] // width


def _sequence_units(op, seq, width):
    """(T, N, u) of a time-major gate sequence (T, N, width * u)."""
    if len(seq.shape) != 3 or seq.shape[2] % width:
        raise ValueError(f"{op}: the gate sequence must be (T, N, {width} * units), got "
                         f"{tuple(seq.shape)}")
    return seq.shape[0], seq.shape[1], seq.shape[2] // width


def _shapes(op, shape, named):
    for name, tensor in named:
        same_shape(op, name, tensor, shape)


class RecurrentSection:
    """The contract's recurrent ops; a backend implements the underscore names (same arguments)."""

    # ------------------------------------------------------------ step ops (one step's rows)
    def lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        """gates (N, 4u) holds the pre-activations on entry, the activated i, f, g, o on
        return; c (N, u) = f c_prev + i g, h (N, u) = o activation(c)."""
        op = "lstm_gates_forward"
        _activations(op, activation, recurrent_activation)
        state = _step_units(op, gates, 4)
        _shapes(op, state, (("h", h), ("c", c), ("c_prev", c_prev)))
        self._lstm_gates_forward(h, c, gates, c_prev, activation, recurrent_activation)

    def lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                            recurrent_activation):
        """dgates (N, 4u) = dL/d(pre-activations) and dc_prev (N, u) from dh and dc (N, u; None:
        zero) and the forward step's gates, c and c_prev. dc_prev may alias dc."""
        op = "lstm_gates_backward"
        _activations(op, activation, recurrent_activation)
        state = _step_units(op, gates, 4)
        same_shape(op, "dgates", dgates, gates.shape)
        _shapes(op, state, (("dc_prev", dc_prev), ("dh", dh), ("c", c), ("c_prev", c_prev)))
        optional_shape(op, "dc", dc, state)
        self._lstm_gates_backward(dgates, dc_prev, dh, dc, gates, c, c_prev, activation, recurrent_activation)

    def gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        """gates (N, 3u): x W + b_input on entry, the activated z, r, hh on return; rec (N, 3u) =
        h_prev U + b_recurrent; h = z h_prev + (1 - z) hh, hh = activation(x_h + r rec_h)."""
        op = "gru_gates_forward"
        _activations(op, activation, recurrent_activation)
        state = _step_units(op, gates, 3)
        same_shape(op, "rec", rec, gates.shape)
        _shapes(op, state, (("h", h), ("h_prev", h_prev)))
        self._gru_gates_forward(h, gates, rec, h_prev, activation, recurrent_activation)

    def gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                           recurrent_activation):
        """dgates, drec (N, 3u): dL/d(input and recurrent projections); dh_prev (N, u) = dh z, the
        part of dL/dh_prev that does not go through U. dh_prev may alias dh."""
        op = "gru_gates_backward"
        _activations(op, activation, recurrent_activation)
        state = _step_units(op, gates, 3)
        _shapes(op, gates.shape, (("dgates", dgates), ("drec", drec), ("rec", rec)))
        _shapes(op, state, (("dh_prev", dh_prev), ("dh", dh), ("h_prev", h_prev)))
        self._gru_gates_backward(dgates, drec, dh_prev, dh, gates, rec, h_prev, activation, recurrent_activation)

    # ------------------------------------------------------------------------ sequence ops
    def lstm_forward(self, hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                     recurrent_activation, mask=None,
                     recurrent_mask=None):
        """gates (T, N, 4u): x W + b on entry, the activated gates on return (backward reads
        them); hseq, cseq (T, N, u) receive h_t and c_t from the initial h0, c0 (N, u)."""
        op = "lstm_forward"
        _activations(op, activation, recurrent_activation)
        steps, n, u = _sequence_units(op, gates, 4)
        _shapes(op, (steps, n, u), (("hseq", hseq), ("cseq", cseq)))
        _shapes(op, (n, u), (("h0", h0), ("c0", c0)))
        same_shape(op, "recurrent_kernel", recurrent_kernel, (u, 4 * u))
        _masks(op, mask, recurrent_mask, steps, n, 4 * u)
        self._lstm_forward(hseq, cseq, gates, h0, c0, recurrent_kernel, activation, recurrent_activation, mask, recurrent_mask)

    def lstm_backward(self, dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq,
                      hseq, h0, c0, recurrent_kernel, activation, recurrent_activation, mask=None,
                      recurrent_mask=None):
        """From dhseq (T, N, u) = dL/dh_t of the outputs and dc_last (N, u; None: zero) = dL/dc_T:
        dgates (T, N, 4u) = dL/d(x W + b), drecurrent_kernel (u, 4u) (overwritten), dh0, dc0."""
        op = "lstm_backward"
        _activations(op, activation, recurrent_activation)
        steps, n, u = _sequence_units(op, gates, 4)
        same_shape(op, "dgates", dgates, gates.shape)
        _shapes(op, (steps, n, u), (("dhseq", dhseq), ("cseq", cseq), ("hseq", hseq)))
        _shapes(op, (n, u), (("dh0", dh0), ("dc0", dc0), ("h0", h0), ("c0", c0)))
        optional_shape(op, "dc_last", dc_last, (n, u))
        _shapes(op, (u, 4 * u), (("drecurrent_kernel", drecurrent_kernel), ("recurrent_kernel", recurrent_kernel)))
        _masks(op, mask, recurrent_mask, steps, n, 4 * u)
        self._lstm_backward(dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq, hseq, h0, c0,
                            recurrent_kernel, activation, recurrent_activation, mask, recurrent_mask)

    def gru_forward(self, hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                    recurrent_activation, mask=None,
                    recurrent_mask=None):
        """gates (T, N, 3u): x W + b_input on entry, the activated gates on return; recs
        (T, N, 3u) receives each step's h_{t-1} U + recurrent_bias; hseq (T, N, u) the states."""
        op = "gru_forward"
        _activations(op, activation, recurrent_activation)
        steps, n, u = _sequence_units(op, gates, 3)
        same_shape(op, "hseq", hseq, (steps, n, u))
        same_shape(op, "recs", recs, gates.shape)
        same_shape(op, "h0", h0, (n, u))
        same_shape(op, "recurrent_kernel", recurrent_kernel, (u, 3 * u))
        same_shape(op, "recurrent_bias", recurrent_bias, (3 * u,))
        _masks(op, mask, recurrent_mask, steps, n, 3 * u)
        self._gru_forward(hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                          recurrent_activation, mask, recurrent_mask)

    def gru_backward(self, dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                     recurrent_kernel, activation, recurrent_activation, mask=None,
                     recurrent_mask=None):
        """dgates, drecs (T, N, 3u) = dL/d(input, recurrent projections), drecurrent_kernel
        (u, 3u) (overwritten) and dh0 (N, u) from dhseq (T, N, u)."""
        op = "gru_backward"
        _activations(op, activation, recurrent_activation)
        steps, n, u = _sequence_units(op, gates, 3)
        _shapes(op, gates.shape, (("dgates", dgates), ("drecs", drecs), ("recs", recs)))
        _shapes(op, (steps, n, u), (("dhseq", dhseq), ("hseq", hseq)))
        _shapes(op, (n, u), (("dh0", dh0), ("h0", h0)))
        _shapes(op, (u, 3 * u), (("drecurrent_kernel", drecurrent_kernel), ("recurrent_kernel", recurrent_kernel)))
        _masks(op, mask, recurrent_mask, steps, n, 3 * u)
        self._gru_backward(dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0, recurrent_kernel,
                           activation, recurrent_activation, mask, recurrent_mask)

    def simple_rnn_forward(self, hseq, pre, h0, recurrent_kernel, activation, mask=None,
                           recurrent_mask=None):
        """pre (T, N, u): x W + b on entry, + h_{t-1} U on return; hseq[t] = activation(pre[t])."""
        op = "simple_rnn_forward"
        check_gate_activation(op, "activation", activation)
        steps, n, u = _sequence_units(op, pre, 1)
        same_shape(op, "hseq", hseq, pre.shape)
        same_shape(op, "h0", h0, (n, u))
        same_shape(op, "recurrent_kernel", recurrent_kernel, (u, u))
        _masks(op, mask, recurrent_mask, steps, n, u)
        self._simple_rnn_forward(hseq, pre, h0, recurrent_kernel, activation, mask, recurrent_mask)

    def simple_rnn_backward(self, dpre, drecurrent_kernel, dh0, dhseq, hseq, h0, recurrent_kernel,
                            activation, mask=None,
                            recurrent_mask=None):
        """dpre (T, N, u) = dL/dpre, drecurrent_kernel (u, u) (overwritten), dh0 from dhseq."""
        op = "simple_rnn_backward"
        check_gate_activation(op, "activation", activation)
        steps, n, u = _sequence_units(op, hseq, 1)
        _shapes(op, hseq.shape, (("dpre", dpre), ("dhseq", dhseq)))
        _shapes(op, (n, u), (("dh0", dh0), ("h0", h0)))
        _shapes(op, (u, u), (("drecurrent_kernel", drecurrent_kernel), ("recurrent_kernel", recurrent_kernel)))
        _masks(op, mask, recurrent_mask, steps, n, u)
        self._simple_rnn_backward(dpre, drecurrent_kernel, dh0, dhseq, hseq, h0, recurrent_kernel, activation, mask, recurrent_mask)
