"""The backend contract: every numeric operation minidl performs, in one place.

Layers, losses, metrics and optimizers never compute anything themselves; they
call the ops below on the active backend. A backend owns its tensors: the numpy
and cpu backends keep them in host memory (as numpy arrays), the opencl backend
keeps them in device buffers. Only `from_numpy`, `copy_from_host` and
`to_numpy` move data between the host and a backend, so a backend that keeps
its tensors on a device can run a whole training step without a host copy.

The contract's executable sections (convolution, normalization, optimizers, pooling,
quantized, regularizers) live in minidl/backends/contract/: their public ops check the
arguments once and call the backend's underscore-named implementation (contract/__init__.py).
The other sections are documented below and still checked by each backend.

Conventions used by every op:

- Argument order is outputs, then inputs, then weights, then sizes / options
  (`conv2d_forward(out, x, weight, bias, plan)`).
- Outputs are pre-allocated by the caller with `empty`/`zeros`; ops never
  allocate tensors that outlive the call. Layers allocate once, for the largest
  batch seen, take `view`s of those buffers for smaller batches, and reuse them
  every step.
- Tensors are dense and C-contiguous; images are channels-last (N, H, W, C).
  Float tensors are float32 (the numpy backend may also run in float64 for
  gradient checks: its `dtype` attribute says which). Labels are int32.
- "Scalar" results (loss sums, correct counts) are written into tensors of
  shape (1,) so that they can stay on the device until somebody asks.
- `accumulate=True` adds into the output instead of overwriting it.
- Unless an op says otherwise, an output must not alias an input.
"""

from .contract.checks import PRECISIONS  # noqa: F401 -- what round_to_precision rounds to
from .contract.convolution import ConvolutionSection
from .contract.normalization import NormalizationSection
from .contract.optimizers import OptimizersSection
from .contract.pooling import PoolingSection
from .contract.quantized import QuantizedSection
from .contract.regularizers import RegularizersSection
from .depthwise_geometry import depthwise_window
from .window import (Window2D, conv_output_length, make_window, same_padding,  # noqa: F401
                     transpose_window)


# Operation names of the tensor ops below (minidl.ops builds on them); a backend's kernels
# use the position of a name in its tuple as the operation's code.
UNARY_OPS = ("negative", "abs", "sign", "sqrt", "square", "exp", "log", "log1p", "relu",
             "sigmoid", "tanh", "reciprocal", "logical_not", "floor", "round", "erf", "sin", "cos",
             "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh")
BINARY_OPS = ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
              "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
              "logical_or")
REDUCE_OPS = ("sum", "max", "min", "prod")
MAX_RANK = 8   # the tensor ops take tensors of rank <= MAX_RANK
# larq's quantizers (minidl.larq.quantizers) as ops; a backend's kernels use the position of a
# name as its code. DoReFa's two modes are two ops.
QUANTIZERS = ("ste_sign", "approx_sign", "swish_sign", "ste_heaviside", "ste_tern",
              "dorefa_activations", "dorefa_weights")


class BackendUnavailable(RuntimeError):
    """Raised when a backend cannot run on this machine; the message says why and what to do."""


class Backend(ConvolutionSection, NormalizationSection, OptimizersSection, PoolingSection,
              QuantizedSection, RegularizersSection):
    """Base class of every backend. Each method documents one op of the contract; the sections
    in minidl/backends/contract/ (the base classes) are executable: their public methods check
    the arguments and call the backend's underscore-named implementation."""

    name = "abstract"
    dtype = "float32"

    # ----------------------------------------------------------- memory
    def empty(self, shape, dtype="float32"):
        """A new uninitialized tensor of `shape`; dtype is "float32" or "int32"."""
        raise NotImplementedError

    def zeros(self, shape, dtype="float32"):
        """A new tensor of `shape` filled with zeros."""
        raise NotImplementedError

    def from_numpy(self, array, dtype=None):
        """A new backend tensor holding a copy of the numpy `array` (a host->device transfer)."""
        raise NotImplementedError

    def copy_from_host(self, out, array):
        """Overwrite the existing tensor `out` with the numpy `array` of the same size (host->device)."""
        raise NotImplementedError

    def to_numpy(self, x):
        """A numpy copy of tensor `x` (device->host). The only way data leaves a backend."""
        raise NotImplementedError

    def reshape(self, x, shape):
        """A view of `x` with a new shape of the same size, sharing storage (no copy)."""
        raise NotImplementedError

    def view(self, x, shape):
        """A tensor of `shape` on the first prod(shape) elements of `x` (which holds at least
        that many), sharing storage (no copy): one allocation serves every smaller batch."""
        raise NotImplementedError

    def shape(self, x):
        """The shape of tensor `x` as a tuple."""
        return tuple(x.shape)

    def copy(self, out, x):
        """out = x (same size)."""
        raise NotImplementedError

    def fill(self, out, value):
        """out[...] = value."""
        raise NotImplementedError

    def synchronize(self):
        """Wait until every queued op has finished (a no-op for synchronous backends)."""

    def info(self):
        """A dict describing the backend on this machine (ISA, threads, device ...)."""
        return {"name": self.name}

    def stats(self):
        """Counters of host<->device traffic: {"h2d_count", "h2d_bytes", "d2h_count", "d2h_bytes"}."""
        return {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}

    def reset_stats(self):
        """Zero the counters returned by stats()."""

    # ------------------------------------------------------ elementwise
    def add(self, out, a, b):
        """out = a + b (same shapes). out may alias a or b."""
        raise NotImplementedError

    def axpby(self, out, alpha, x, beta, y):
        """out = alpha * x + beta * y. out may alias x or y."""
        raise NotImplementedError

    def multiply(self, out, a, b):
        """out = a * b elementwise. out may alias a or b."""
        raise NotImplementedError

    def bias_add(self, out, x, bias):
        """out = x + bias, bias of shape (C,) broadcast over the last axis. out may alias x."""
        raise NotImplementedError

    def bias_grad(self, dbias, dout):
        """dbias (C,) = sum of dout over every axis but the last."""
        raise NotImplementedError

    # ------------------------------------------------------ activations
    # name is one of minidl.activations.ACTIVATIONS (linear, relu, leaky_relu, sigmoid, gelu ...).
    # softmax works along the last axis; leaky_relu uses `alpha` as its negative slope, elu as
    # its alpha (activations.default_alpha gives Keras's defaults); the others ignore alpha.
    # NaN propagates as in numpy: f(NaN) = NaN, and a NaN in x, y or dout gives NaN in dx
    # (relu-like selects excepted, which pass dout or 0 as numpy's where does).
    def activation_forward(self, out, x, name, alpha=0.0):
        """out = f(x). out may alias x."""
        raise NotImplementedError

    def activation_backward(self, dx, dout, y, name, alpha=0.0, x=None):
        """dx = dout * f'(x), from the forward output y = f(x) and, for the activations in
        activations.NEEDS_INPUT (gelu, silu, elu, softplus, hard_silu, mish), the forward
        input x (same shape; required for those, ignored by the others). dx may alias dout."""
        raise NotImplementedError

    # ------------------------------------------------------------- gemm
    # precision (gemm and the conv2d ops): None computes in float32; "bfloat16" / "float16"
    # computes as a low-precision kernel with float32 accumulation does: both operands rounded
    # to that precision (round_to_precision's rounding), their products summed in float32
    # (mixed-precision policies, minidl.mixed_precision). Biases and dbias stay float32.
    def gemm(self, out, a, b, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, precision=None):
        """out = alpha * op(a) @ op(b) + beta * out, 2-D tensors, op(t) = t.T when trans_t."""
        raise NotImplementedError

    # ------------------------------------------------------ convolution: contract/convolution.py

    # ------------------------------------------------ depthwise convolution
    # kernel (KH, KW, C, M): output channel c * M + m is input channel c convolved with
    # kernel[:, :, c, m] (minidl/backends/depthwise_geometry.py); SeparableConv2D adds a 1x1 gemm.
    def depthwise_conv2d_plan(self, in_shape, kernel_shape, strides, padding):
        """A Window2D for input (N, H, W, C) and a depthwise kernel (KH, KW, C, M); plan.oc = C * M."""
        return depthwise_window("depthwise_conv2d_plan", in_shape, kernel_shape, strides, padding)

    def depthwise_conv2d_forward(self, out, x, weight, bias, plan):
        """out (N, OH, OW, C*M) = depthwise conv(x (N, H, W, C), weight (KH, KW, C, M)) + bias (C*M,) or None."""
        raise NotImplementedError

    def depthwise_conv2d_backward_data(self, dx, dout, weight, plan):
        """dx (N, H, W, C) = gradient of the depthwise output dout (N, OH, OW, C*M) w.r.t. its input."""
        raise NotImplementedError

    def depthwise_conv2d_backward_filter(self, dweight, dbias, dout, x, plan):
        """dweight (KH, KW, C, M) and dbias (C*M,) or None from dout and the forward input x."""
        raise NotImplementedError

    # ---------------------------------------------------------- pooling
    def pool2d_plan(self, in_shape, pool_size, strides, padding):
        """A Window2D for pooling input (N, H, W, C); the pooling and padding ops are checked in
        contract/pooling.py."""
        return make_window(in_shape, pool_size, strides, padding)

    def upsample2d_forward(self, out, x, size, interpolation):
        """out (N, H*sh, W*sw, C) = x (N, H, W, C) upsampled by size (sh, sw): "nearest" repeats
        pixels, "bilinear" interpolates with half-pixel centers (Keras's image.resize)."""
        raise NotImplementedError

    def upsample2d_backward(self, dx, dout, size, interpolation):
        """dx (N, H, W, C) = gradient of upsample2d_forward from dout (N, H*sh, W*sw, C)."""
        raise NotImplementedError

    def transpose(self, out, x, axes):
        """out = x with its axes permuted (numpy.transpose(x, axes)): out axis i is x axis
        axes[i]; rank 1 to 8. out must not alias x."""
        raise NotImplementedError

    # ------------------------------------------------------ concatenate
    def concat_forward(self, out, xs):
        """out = the tensors xs concatenated along the last axis."""
        raise NotImplementedError

    def concat_backward(self, dxs, dout):
        """Split dout along the last axis into the tensors dxs (the inverse of concat_forward)."""
        raise NotImplementedError

    # -------------------------------------------------------- recurrent
    # LSTM / GRU / SimpleRNN over a whole sequence, time-major: a (T, N, k) tensor holds step t
    # at [t]. The layer computes the input projection x W + b of every step with one gemm; these
    # ops run the loop over time: per step one gemm for the recurrent projection and one fused
    # gate op, backward the same way, and the recurrent kernel's gradient as gemms over the
    # sequence. Gate order i, f, c, o (LSTM), z, r, h (GRU, reset_after=True), as Keras 3.
    # activation / recurrent_activation are linear, relu, sigmoid, tanh or hard_sigmoid
    # (recurrent_host.GATE_ACTIVATIONS). Step ops on one step's (N, k u) rows:
    def lstm_gates_forward(self, h, c, gates, c_prev, activation, recurrent_activation):
        """gates (N, 4u) holds the pre-activations on entry, the activated i, f, g, o on
        return; c (N, u) = f c_prev + i g, h (N, u) = o activation(c)."""
        raise NotImplementedError

    def lstm_gates_backward(self, dgates, dc_prev, dh, dc, gates, c, c_prev, activation,
                            recurrent_activation):
        """dgates (N, 4u) = dL/d(pre-activations) and dc_prev (N, u) from dh and dc (N, u; None:
        zero) and the forward step's gates, c and c_prev. dc_prev may alias dc."""
        raise NotImplementedError

    def gru_gates_forward(self, h, gates, rec, h_prev, activation, recurrent_activation):
        """gates (N, 3u): x W + b_input on entry, the activated z, r, hh on return; rec (N, 3u) =
        h_prev U + b_recurrent; h = z h_prev + (1 - z) hh, hh = activation(x_h + r rec_h)."""
        raise NotImplementedError

    def gru_gates_backward(self, dgates, drec, dh_prev, dh, gates, rec, h_prev, activation,
                           recurrent_activation):
        """dgates, drec (N, 3u): dL/d(input and recurrent projections); dh_prev (N, u) = dh z, the
        part of dL/dh_prev that does not go through U. dh_prev may alias dh."""
        raise NotImplementedError

    # Sequence ops. mask (every one of them): None, or Keras's mask of the steps in processing
    # order, time-major (T, N, 1) of 1.0 (the step runs) and 0.0 (skipped: the row's states stay
    # those of the step before, and so does its hseq[t]; backward passes their gradient on).
    # recurrent_mask (every one of them): None, or Keras's recurrent dropout masks
    # (N, k u), one (N, u) per gate in gate order: gate g's projection of h_{t-1} is
    # (h_{t-1} * mask_g) U_g at every step (backends/recurrent_dropout.py).
    def lstm_forward(self, hseq, cseq, gates, h0, c0, recurrent_kernel, activation,
                     recurrent_activation, mask=None,
                     recurrent_mask=None):
        """gates (T, N, 4u): x W + b on entry, the activated gates on return (backward reads
        them); hseq, cseq (T, N, u) receive h_t and c_t from the initial h0, c0 (N, u)."""
        raise NotImplementedError

    def lstm_backward(self, dgates, drecurrent_kernel, dh0, dc0, dhseq, dc_last, gates, cseq,
                      hseq, h0, c0, recurrent_kernel, activation, recurrent_activation, mask=None,
                      recurrent_mask=None):
        """From dhseq (T, N, u) = dL/dh_t of the outputs and dc_last (N, u; None: zero) = dL/dc_T:
        dgates (T, N, 4u) = dL/d(x W + b), drecurrent_kernel (u, 4u) (overwritten), dh0, dc0."""
        raise NotImplementedError

    def gru_forward(self, hseq, gates, recs, h0, recurrent_kernel, recurrent_bias, activation,
                    recurrent_activation, mask=None,
                    recurrent_mask=None):
        """gates (T, N, 3u): x W + b_input on entry, the activated gates on return; recs
        (T, N, 3u) receives each step's h_{t-1} U + recurrent_bias; hseq (T, N, u) the states."""
        raise NotImplementedError

    def gru_backward(self, dgates, drecs, drecurrent_kernel, dh0, dhseq, gates, recs, hseq, h0,
                     recurrent_kernel, activation, recurrent_activation, mask=None,
                     recurrent_mask=None):
        """dgates, drecs (T, N, 3u) = dL/d(input, recurrent projections), drecurrent_kernel
        (u, 3u) (overwritten) and dh0 (N, u) from dhseq (T, N, u)."""
        raise NotImplementedError

    def gru_reset_before_forward(self, hseq, gates, recs, h0, recurrent_kernel, activation,
                                 recurrent_activation, mask=None, recurrent_mask=None):
        """GRU with reset_after=False: hh = activation(x_h + (r h_{t-1}) U_h). gates (T, N, 3u):
        x W + b on entry, the activated z, r, hh on return; recs (T, N, 3u) receives each
        step's [h_{t-1} U_zr, 0]; hseq (T, N, u) the states. One implementation for every
        backend, made of the ops above (backends/gru_reset_before.py)."""
        raise NotImplementedError

    def gru_reset_before_backward(self, dgates, drecurrent_kernel, dh0, dhseq, gates, recs, hseq,
                                  h0, recurrent_kernel, activation, recurrent_activation,
                                  mask=None, recurrent_mask=None):
        """dgates (T, N, 3u) = dL/d(x W + b), drecurrent_kernel (u, 3u) (overwritten) and dh0
        (N, u) from dhseq (T, N, u)."""
        raise NotImplementedError

    def simple_rnn_forward(self, hseq, pre, h0, recurrent_kernel, activation, mask=None,
    recurrent_mask=None):
        """pre (T, N, u): x W + b on entry, + h_{t-1} U on return; hseq[t] = activation(pre[t])."""
        raise NotImplementedError

    def simple_rnn_backward(self, dpre, drecurrent_kernel, dh0, dhseq, hseq, h0, recurrent_kernel,
                            activation, mask=None,
                            recurrent_mask=None):
        """dpre (T, N, u) = dL/dpre, drecurrent_kernel (u, u) (overwritten), dh0 from dhseq."""
        raise NotImplementedError

    # --------------------------------------------------- normalization: contract/normalization.py

    # ------------------------------------------------------ quantized (int8 inference): contract/quantized.py

    # ------------------------------------------------------- quantizers
    def quantize_forward(self, out, x, name, param=0.0, stat=None):
        """out = larq's quantizer `name` (one of QUANTIZERS) of x, elementwise; out may alias x.
        sign maps 0 to +1. param: ste_tern's threshold, DoReFa's levels 2^k_bit - 1. stat, a
        (1,) tensor or None: sum |x| for ste_tern with Ternary Weight Networks' threshold
        0.7 * mean |x| (then param is ignored), max |x| for dorefa_weights (required)."""
        raise NotImplementedError

    def quantize_backward(self, dx, dout, x, name, param=0.0, stat=None):
        """dx = dout * the straight-through gradient of quantizer `name` at x, as larq defines
        it; dx may alias dout. param: the clip value of ste_sign, ste_heaviside and ste_tern
        (math.inf: no clipping), beta of swish_sign; stat as in quantize_forward."""
        raise NotImplementedError

    # ------------------------------------------- binary (xnor-popcount) inference
    def binary_pack_input(self, bits, x):
        """bits (..., ceil(C / 32)) int32 = the larq signs of x (..., C) packed 32 channels to
        a word: bit b of word k is 1 where x[..., 32 k + b] < 0 (-1), 0 where x >= 0 (+1) and
        past C."""
        raise NotImplementedError

    def binary_pack_kernel(self, bits, weight):
        """bits (kh * kw * ceil(C / 32), F) int32 = the signs of weight (kh, kw, C, F): word
        (t * ceil(C / 32) + k, j) holds channels 32 k ... of tap t of filter j. Done once."""
        raise NotImplementedError

    def binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        """out (N, OH, OW, F) float32 = the exact integer dot products of the +-1 input windows
        (bits: binary_pack_input of (N, H, W, C)) with the +-1 filters (binary_pack_kernel),
        plus bias (F,) or None. plan: conv2d_plan of the float convolution (groups 1). A tap in
        the padding is an input of +1 when pad_value is 1, of 0 (not counted) when it is 0."""
        raise NotImplementedError

    # ------------------------------------------------------------ prelu
    # x is viewed as (M, K); alpha (K,) holds one learned slope per column.
    def prelu_forward(self, out, x, alpha):
        """out = x where x > 0, alpha * x elsewhere (Keras PReLU). out may alias x."""
        raise NotImplementedError

    def prelu_backward(self, dx, dalpha, dout, x, alpha):
        """dx = dout where x > 0, alpha * dout where x < 0, 0 at x == 0 (Keras's relu(x) -
        alpha * relu(-x) has slope 0 there); dalpha (K,) = sum over rows of x * dout where x < 0."""
        raise NotImplementedError

    # ---------------------------------------------------------- dropout
    def dropout_forward(self, out, mask, x, rate, seed):
        """mask = keep / (1 - rate) where keep ~ Bernoulli(1 - rate) drawn from a counter-based
        generator keyed by the int `seed` (same seed -> same mask on a backend); out = x * mask."""
        raise NotImplementedError

    # dropout backward is multiply(dx, dout, mask).

    def gaussian_noise(self, out, x, stddev, seed):
        """out = x + stddev * z, z ~ N(0, 1) drawn from a counter-based generator keyed by the
        int `seed` (same seed -> same noise on a backend). out may alias x."""
        raise NotImplementedError

    def channel_mask_multiply(self, out, x, mask):
        """out (N, K, C) = x (N, K, C) * mask (N, C) broadcast over K (SpatialDropout2D's
        per-sample channel mask, forward and backward). out may alias x."""
        raise NotImplementedError

    # ---------------------------------------------------------- attention
    def attention_forward(self, out, probs, q, k, v, mask, dropout, scale, causal):
        """Fused scaled dot-product attention per (batch, head), in Keras MultiHeadAttention's
        layouts: q (B, Tq, H, D), k (B, Tk, H, D), v (B, Tk, H, Dv) -> out (B, Tq, H, Dv);
        probs (B, H, Tq, Tk) = softmax over keys of scale * q.k where allowed (Keras's attention
        scores, kept for the backward pass). Allowed: mask (B, Tq, Tk) nonzero (None: all) and,
        when causal, key j <= query i. A query row with no allowed key gets uniform
        probabilities (as Keras's -1e9 masking gives). dropout (B, H, Tq, Tk) or None:
        multipliers applied to probs before the weighted sum (probs stays undropped)."""
        raise NotImplementedError

    def attention_backward(self, dq, dk, dv, dout, q, k, v, probs, mask, dropout, scale, causal):
        """dq, dk, dv of attention_forward from dout (B, Tq, H, Dv) and its probs (a row with
        no allowed key: the softmax gradient of its uniform probabilities, as Keras's additive
        -1e9 mask gives)."""
        raise NotImplementedError

    # ----------------------------------------------------------- images
    # transforms (N, 8) or (1, 8) (one row for every image), Keras's projective layout: row
    # [a0, a1, a2, b0, b1, b2, c0, c1] maps output pixel (x, y) (column, row) to the input point
    # ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
    # Random draws: sample n's uniforms u0..u3 = (word >> 8) / 2**24 of the four Philox4x32-10
    # words of counter (n, 0) under key `seed`: the same numbers on every backend.
    def image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        """out (N, OH, OW, C) = x (N, H, W, C) read at each output pixel's input point.
        interpolation "nearest" (the pixel floor(p + 0.5)) or "bilinear" (four taps); a tap
        outside the image is read by fill_mode: "reflect" (d c b a | a b c d | d c b a), "wrap"
        (a b c d | a b c d), "nearest" (a a | a b c d | d d) or "constant" (fill_value)."""
        raise NotImplementedError

    def image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        """dx (N, H, W, C) = the adjoint of image_transform_forward applied to dout (taps that
        read the constant fill contribute nothing)."""
        raise NotImplementedError

    def image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        """transforms (N, 8) = the random transform of each sample for images of height x width:
        kind and ranges (4 numbers) as image_args.TRANSFORM_KINDS describes."""
        raise NotImplementedError

    def random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        """out = clip((x - mean) * f + mean, value_range), mean (N, 1, 1, C) over each image's
        pixels, f = 1 - lower + (upper + lower) * u0 of each sample (Keras RandomContrast)."""
        raise NotImplementedError

    def random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        """out = clip(x + delta, value_range), delta = (lower + (upper - lower) * u0) *
        (high - low) of each sample (Keras RandomBrightness)."""
        raise NotImplementedError

    def random_color_forward(self, out, x, kind, params, value_range, seed):
        """out (N, H, W, C) = the per-pixel colour change `kind` of x with one draw per sample
        (u0, u1 as above), pixel values in value_range: kind and params (up to 4 numbers) as
        color_args.COLOR_KINDS describes (Keras 3's RandomGrayscale, RandomInvert,
        RandomPosterization, Solarization, RandomColorDegeneration). out may alias x."""
        raise NotImplementedError

    def auto_contrast_forward(self, out, x, value_range):
        """out (N, H, W, C) = Keras's AutoContrast: each image's channels stretched from their
        [min, max] to value_range (computed through 0..255 as Keras does); a constant channel
        stays as it is. out may alias x."""
        raise NotImplementedError

    def channel_scale_shift(self, out, x, scale, shift):
        """out = x * scale + shift, scale and shift (C,) broadcast over the last axis.
        out may alias x."""
        raise NotImplementedError

    # ----------------------------------------------------------- losses
    # targets are int32 class indices of shape (N,) ("sparse") or float (N, K) ("dense").
    # loss receives the per-sample losses, shape (N,). scale multiplies every gradient
    # (the model passes 1 / N for a mean over the batch).
    def softmax_cross_entropy_forward(self, probs, loss, logits, targets):
        """probs = softmax(logits) along the last axis; loss = -sum(t * log probs) per sample."""
        raise NotImplementedError

    def softmax_cross_entropy_backward(self, dlogits, probs, targets, scale):
        """dlogits = (probs - onehot(targets)) * scale."""
        raise NotImplementedError

    def sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        """probs = sigmoid(logits); loss = mean over the last axis of the stable logistic loss."""
        raise NotImplementedError

    def sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        """dlogits = (probs - targets) * scale / K, K the size of the last axis."""
        raise NotImplementedError

    def cross_entropy_forward(self, loss, probs, targets, binary):
        """Cross-entropy of probabilities not produced by a fused activation, probs clipped to
        [1e-7, 1 - 1e-7] as Keras does. binary=False: loss = -sum(t * log p) (targets
        sparse or dense); binary=True: mean over the last axis of -(t log p + (1-t) log(1-p))."""
        raise NotImplementedError

    def cross_entropy_backward(self, dprobs, probs, targets, binary, scale):
        """Gradient of cross_entropy_forward (zero where the clip is active), times scale."""
        raise NotImplementedError

    def mean_squared_error_forward(self, loss, pred, targets):
        """loss = mean over the last axis of (pred - targets) ** 2, per sample."""
        raise NotImplementedError

    def mean_squared_error_backward(self, dpred, pred, targets, scale):
        """dpred = 2 * (pred - targets) / K * scale."""
        raise NotImplementedError

    def row_loss_forward(self, loss, pred, targets, kind, delta=1.0):
        """loss (N,) = Keras's loss `kind` (one of ROW_LOSSES) of each row of pred (N, K) against
        dense targets (N, K): the mean over the last axis of mean_absolute_error,
        mean_absolute_percentage_error, mean_squared_logarithmic_error, huber (with `delta`),
        log_cosh, poisson, hinge, squared_hinge (targets already -1/1); the sum for
        kl_divergence; the whole row for categorical_hinge and cosine_similarity."""
        raise NotImplementedError

    def row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        """dpred (N, K) = the gradient of row_loss_forward's loss with respect to pred, times scale
        (subgradients as TensorFlow's at the kinks; zero where a clip is active)."""
        raise NotImplementedError

    # ------------------------------------------------ reductions/metrics
    def sum(self, out, x, accumulate=False):
        """out (1,) = sum of every element of x (plus out when accumulate)."""
        raise NotImplementedError

    # The accuracy counts take weights=None, or one weight per row (N,) (per element, shaped
    # as pred, for binary_accuracy): out then sums the weights of the correct ones (Keras's
    # weighted_metrics; the model divides by the sum of the weights).
    def categorical_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        """out (1,) = number of rows whose argmax of pred (N, K) equals the target class
        (sparse int32 (N,) or the argmax of dense (N, K)); ties go to the lowest index."""
        raise NotImplementedError

    def binary_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        """out (1,) = number of elements where (pred > 0.5) == (targets > 0.5)."""
        raise NotImplementedError

    def top_k_accuracy(self, out, pred, targets, k, accumulate=False, weights=None):
        """out (1,) = number of rows whose target class is among the k largest of pred
        (a target ties in when fewer than k scores are strictly larger)."""
        raise NotImplementedError

    def all_finite(self, out, x):
        """out (1,) = 1.0 if every element of x is finite, else 0.0."""
        raise NotImplementedError

    # ------------------------------------------------------ tensor ops
    # The general-purpose ops behind minidl.ops (custom layers, Lambda, losses and metrics):
    # float tensors of rank <= MAX_RANK, numpy broadcasting where an op says so. Comparisons and
    # logical ops write 1.0 for true and 0.0 for false; a logical op treats nonzero as true.
    def unary(self, out, x, name):
        """out = f(x) elementwise, f one of UNARY_OPS (relu, sigmoid, tanh as activations;
        round to nearest even). out may alias x."""
        raise NotImplementedError

    def binary(self, out, a, b, name):
        """out = a (op) b, op one of BINARY_OPS, a and b broadcast (numpy rules) to out's shape.
        Either of a and b may be a Python float instead of a tensor. power follows C's powf."""
        raise NotImplementedError

    def where(self, out, condition, a, b):
        """out = a where condition is nonzero, else b; all three broadcast to out's shape."""
        raise NotImplementedError

    def reduce(self, out, x, name):
        """out = the sum / max / min / prod (REDUCE_OPS) of x over the axes where out has size 1
        and x does not; out has x's rank (keepdims). NaN propagates through max and min."""
        raise NotImplementedError

    def strided_copy(self, out, x, offset, strides):
        """Gather: out[i_0, .., i_r] = x.flat[offset + sum_k i_k * strides[k]] (strides in
        elements, any sign, 0 to repeat). Slicing, transposes and broadcasts are this op."""
        raise NotImplementedError

    def strided_add(self, out, x, offset, strides):
        """Scatter-add, the gradient of strided_copy: out.flat[offset + sum_k i_k * strides[k]]
        += x[i_0, .., i_r]. The addressed positions must be distinct (no zero stride)."""
        raise NotImplementedError

    def take(self, out, x, indices, axis):
        """out = numpy.take(x, indices, axis): indices int32 (m,), each in [-n, n) for n =
        x.shape[axis] (negative ones count from the end); out is x's shape with m at axis."""
        raise NotImplementedError

    def take_backward(self, dx, dout, indices, axis):
        """dx += the gradient of take: each dout slice added at its index (repeats add up)."""
        raise NotImplementedError

    def arg_reduce(self, out, x, name):
        """out int32 (rows,) = the index of the largest ("argmax") or smallest ("argmin") value in
        each row of x (rows, k); ties go to the lowest index, a NaN wins at its first position."""
        raise NotImplementedError

    def argsort_rows(self, out, x):
        """out int32 (rows, n): positions sorting each row of x ascending, stable, NaN last."""
        raise NotImplementedError

    def scan_rows(self, out, x, name):
        """out (rows, n) = running "cumsum" / "cumprod" of each row of x; out may alias x."""
        raise NotImplementedError

    def cast(self, out, x):
        """out = x converted between float and int32 tensors (float to int truncates toward 0)."""
        raise NotImplementedError

    def round_to_precision(self, out, x, precision):
        """out (may be x) = x rounded to the nearest "bfloat16" / "float16" value, to nearest even
        (float16: +-inf from 65520), in float: mixed-precision operands (minidl.mixed_precision)."""
        raise NotImplementedError

    def arange(self, out, start, step):
        """out[i] = start + i * step over the flat order of out (float or int32)."""
        raise NotImplementedError

    # ------------------------------------------- regularizers, constraints: contract/regularizers.py

    # -------------------------------------------------------- optimizers: contract/optimizers.py


# The kinds of row_loss_forward/backward, in the order of their integer codes in the C and
# OpenCL kernels (csrc/row_loss.c, kernels/row_loss.cl).
ROW_LOSSES = ("mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_logarithmic_error",
              "huber", "log_cosh", "poisson", "kl_divergence", "hinge", "squared_hinge",
              "categorical_hinge", "cosine_similarity")
