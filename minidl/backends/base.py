"""The backend contract: every numeric operation minidl performs, in one place.

Layers, losses, metrics and optimizers never compute anything themselves; they
call the ops below on the active backend. A backend owns its tensors: the numpy
and cpu backends keep them in host memory (as numpy arrays), the opencl backend
keeps them in device buffers. Only `from_numpy`, `copy_from_host` and
`to_numpy` move data between the host and a backend, so a backend that keeps
its tensors on a device can run a whole training step without a host copy.

The contract's executable sections (activations, attention, convolution, depthwise, elementwise,
gemm, images, larq, losses, metrics, normalization, optimizers, pooling, quantized, recurrent,
regularizers, tensor ops) live in minidl/backends/contract/: their public ops check the
arguments once and call the backend's underscore-named implementation (contract/__init__.py).
The ops documented below are still checked by each backend.

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
# the tensor ops' operation names and round_to_precision's PRECISIONS (contract/checks.py)
from .contract.checks import BINARY_OPS, PRECISIONS, REDUCE_OPS, UNARY_OPS  # noqa: F401
from .contract.activations import ActivationsSection
from .contract.attention import AttentionSection
from .contract.convolution import ConvolutionSection
from .contract.depthwise import DepthwiseSection
from .contract.elementwise import ElementwiseSection
from .contract.gemm import GemmSection
from .contract.images import ImagesSection
from .contract.layer_ops import LayerOpsSection
from .contract.larq import QUANTIZERS, LarqSection  # noqa: F401 -- QUANTIZERS: quantize_forward's names
from .contract.losses import ROW_LOSSES, LossesSection  # noqa: F401 -- ROW_LOSSES: row_loss_forward's kinds
from .contract.metrics import MetricsSection
from .contract.normalization import NormalizationSection
from .contract.optimizers import OptimizersSection
from .contract.pooling import PoolingSection
from .contract.quantized import QuantizedSection
from .contract.recurrent import RecurrentSection
from .contract.regularizers import RegularizersSection
from .contract.tensor_ops import TensorOpsSection
from .window import (Window2D, conv_output_length, make_window, same_padding,  # noqa: F401
                     transpose_window)




class BackendUnavailable(RuntimeError):
    """Raised when a backend cannot run on this machine; the message says why and what to do."""


class Backend(ActivationsSection, AttentionSection, ConvolutionSection, DepthwiseSection,
              ElementwiseSection, GemmSection, ImagesSection, LarqSection, LayerOpsSection, LossesSection,
              MetricsSection, NormalizationSection, OptimizersSection, PoolingSection,
              QuantizedSection, RecurrentSection, RegularizersSection, TensorOpsSection):
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

    def lends_host_arrays(self, array):
        """Whether the host numpy `array` can itself serve as this backend's tensor (read-only
        inputs of an inference, Model._upload_inputs, which then copies nothing). A device
        backend's tensors live elsewhere: never."""
        return False

    def reshape(self, x, shape):
        """A view of `x` with a new shape of the same size, sharing storage (no copy)."""
        raise NotImplementedError

    def view(self, x, shape):
        """A tensor of `shape` on the first prod(shape) elements of `x` (which holds at least
        that many), sharing storage (no copy): one allocation serves every smaller batch."""
        raise NotImplementedError

    def storage(self, x):
        """The allocation `x` lives in (an opaque object compared with `is`): tensors that
        share storage (views, reshapes) give the same one; each empty() a new one."""
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

    # ---------------------------- elementwise (add ... bias, concat, dropout): contract/elementwise.py
    # ------------------------------------------------------ activations: contract/activations.py
    # ------------------------------------------------------------- gemm: contract/gemm.py

    # ------------------------------------------------------ convolution: contract/convolution.py

    # ---------------------------------------------- depthwise convolution: contract/depthwise.py

    # ---------------------------------------------------------- pooling
    def pool2d_plan(self, in_shape, pool_size, strides, padding):
        """A Window2D for pooling input (N, H, W, C); the pooling and padding ops are checked in
        contract/pooling.py."""
        return make_window(in_shape, pool_size, strides, padding)

    # upsample2d_forward / upsample2d_backward: contract/images.py

    # ---------------------------------------------------------- recurrent: contract/recurrent.py
    # GRU with reset_after=False: one implementation for every backend, made of the ops of the
    # contract (backends/gru_reset_before.py); mask and recurrent_mask as the sequence ops'.
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

    # --------------------------------------------------- normalization: contract/normalization.py

    # ------------------------------------------------------ quantized (int8 inference): contract/quantized.py

    # ------------------------------- quantizers (larq), binary inference: contract/larq.py

    # ---- layer ops (prelu, gaussian_noise, channel_mask_multiply, transpose): contract/layer_ops.py

    # ------------------------------------------------------- attention: contract/attention.py

    # ------------------------------------------------------- images: contract/images.py

    # --------------------------------------- losses, metrics: contract/losses.py, contract/metrics.py

    # ------------------------------------------------------ tensor ops: contract/tensor_ops.py

    # ------------------------------------------- regularizers, constraints: contract/regularizers.py

    # -------------------------------------------------------- optimizers: contract/optimizers.py
