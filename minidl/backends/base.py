"""The backend contract: every numeric operation minidl performs, in one place.

Layers, losses, metrics and optimizers never compute anything themselves; they
call the ops below on the active backend. A backend owns its tensors: the numpy
and cpu backends keep them in host memory (as numpy arrays), the opencl backend
keeps them in device buffers. Only `from_numpy`, `copy_from_host` and
`to_numpy` move data between the host and a backend, so a backend that keeps
its tensors on a device can run a whole training step without a host copy.

The contract's executable sections (convolution, normalization, optimizers, pooling,
quantized, regularizers, losses, metrics, larq, images, attention, recurrent) live in
minidl/backends/contract/: their public ops check the arguments once and call the backend's
underscore-named implementation (contract/__init__.py). The other sections are documented
below and still checked by each backend.

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

import math

from .checks import MAX_RANK  # noqa: F401 -- the tensor ops take tensors of rank <= MAX_RANK
from .contract.checks import PRECISIONS  # noqa: F401 -- what round_to_precision rounds to
from .contract.attention import AttentionSection
from .contract.convolution import ConvolutionSection
from .contract.images import ImagesSection
from .contract.larq import QUANTIZERS, LarqSection  # noqa: F401 -- QUANTIZERS: quantize_forward's names
from .contract.losses import ROW_LOSSES, LossesSection  # noqa: F401 -- ROW_LOSSES: row_loss_forward's kinds
from .contract.metrics import MetricsSection
from .contract.normalization import NormalizationSection
from .contract.optimizers import OptimizersSection
from .contract.pooling import PoolingSection
from .contract.quantized import QuantizedSection
from .contract.recurrent import RecurrentSection
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


class BackendUnavailable(RuntimeError):
    """Raised when a backend cannot run on this machine; the message says why and what to do."""


class Backend(ConvolutionSection, NormalizationSection, OptimizersSection, PoolingSection,
              QuantizedSection, RegularizersSection, LossesSection, MetricsSection, LarqSection,
              ImagesSection, AttentionSection, RecurrentSection):
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

    # upsample2d_forward / upsample2d_backward: contract/images.py

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

    # ---------------------------------------------------------- recurrent: contract/recurrent.py

    # --------------------------------------------------- normalization: contract/normalization.py

    # ------------------------------------------------------ quantized (int8 inference): contract/quantized.py

    # ------------------------------- quantizers (larq), binary inference: contract/larq.py

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

    # ------------------------------------------------------- attention: contract/attention.py

    # ------------------------------------------------------- images: contract/images.py

    # The mixing layers (MixUp, CutMix, RandomErasing, RandomGaussianBlur, RandomSharpness)
    # draw their per-sample numbers on the host and pass them as small float32 tables
    # (image_mix_args.py); a source index in a table is clamped to the valid range.
    def batch_mix_forward(self, out, x, mix):
        """out[n] = mix[n, 0] * x[n] + mix[n, 1] * x[int(mix[n, 2])] for x (N, ...) of any
        shape, mix (N, 3) (MixUp's images and labels, CutMix's labels). out must not alias x."""
        raise NotImplementedError

    def image_paste_forward(self, out, x, boxes, source, clip=(-math.inf, math.inf)):
        """out (N, H, W, C) = x, except the pixels (row i, column j) of image n inside its box
        boxes[n] = (x0, x1, y0, y1, k, dx, dy) (x0 <= j < x1 and y0 <= i < y1, compared as
        floats), which get source[k, i + dy, j + dx, :] clipped to clip; source (M, SH, SW, C)
        (CutMix: x itself, offsets 0; RandomErasing: its fill, each box read from a corner).
        A source coordinate is clamped into the source. out must not alias x or source."""
        raise NotImplementedError

    def image_filter_blend_forward(self, out, x, kernel, weights, value_range):
        """out (N, H, W, C) = clip(x + weights[n] * (f - x), value_range), f the 2-D filter of
        each channel of x by kernel (KH, KW) (odd sizes; a correlation over the zero-padded
        image, as a "same" depthwise convolution), weights (N,) (RandomGaussianBlur: 1 or 0;
        RandomSharpness: 1 - 2 factor). out must not alias x."""
        raise NotImplementedError

    # --------------------------------------- losses, metrics: contract/losses.py, contract/metrics.py

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
