"""CpuBackend: the contract of minidl/backends/base.py on hand-vectorized C kernels.

Tensors are C-contiguous numpy arrays (float32, or int32 for labels and argmax). numpy is
used only to allocate and move memory (empty, zeros, from_numpy, copy_from_host, to_numpy,
reshape, copy, fill); every op that computes calls a C function of minidl._cpu_kernels with
pointers to the arrays. The C side picks AVX-512, AVX2 or plain C kernels at run time
(minidl_cpu_isa) and threads large tensors with OpenMP. Each section of the contract is a
mixin named for it (elementwise.py, gemm.py, ...; conv2d: linalg.py).

Per-call Python work is a few checks and one pointer per tensor; scratch buffers (column
partial sums for bias_grad and batchnorm, window geometry) are allocated once and reused.
A kernel's failure comes back as a status that _ffi.raise_for_status turns into the exception.
"""

import numpy as np

from ..base import Backend
from ..host_memory import HostMemory
from ..rounded_operands import RoundedOperands

from ._ffi import ffi, fptr, require_lib
from .attention import CpuAttentionOps
from .activations import CpuActivationOps
from .depthwise import DepthwiseOps
from .elementwise import CpuElementwiseOps
from .gemm import CpuGemmOps
from .images import CpuImageOps
from .larq import CpuLarqOps
from .pooling import CpuPoolingOps
from .image_mix import CpuImageMixOps
from .displace import CpuDisplaceOps
from .equalize import EqualizeOps
from .layer_ops import CpuLayerOps
from .losses import CpuLossOps
from .metrics import CpuMetricOps
from .normalization import CpuNormalizationOps
from .linalg import LinalgOps
from .optimizers import CpuOptimizerOps
from .regularizers import CpuRegularizerOps
from .recurrent import CpuRecurrentOps
from ..gru_reset_before import GruResetBeforeOps
from ..recurrent_host import HostRecurrentOps
from .quantized import CpuQuantizedOps
from .tensor_ops import CpuTensorOps


class CpuBackend(CpuElementwiseOps, CpuActivationOps, CpuGemmOps, CpuAttentionOps, CpuTensorOps, CpuImageOps, CpuImageMixOps, CpuDisplaceOps, EqualizeOps, CpuLayerOps, CpuRecurrentOps, HostRecurrentOps, GruResetBeforeOps, CpuLarqOps,
                 LinalgOps, DepthwiseOps, CpuPoolingOps, CpuNormalizationOps, CpuOptimizerOps, CpuQuantizedOps, CpuRegularizerOps, CpuLossOps, CpuMetricOps, HostMemory, RoundedOperands,
                 Backend):
    """Host-memory backend whose ops run as C kernels; see Backend for each op's contract."""

    name = "cpu"
    dtype = "float32"

    def __init__(self):
        self._lib = require_lib()
        self._scratch = np.empty(0, dtype=np.float32)

    def _column_scratch(self, c):
        """float* to scratch for the column ops (bias_grad, batchnorm) on c channels; grows once."""
        need = self._lib.minidl_column_scratch_floats(c)
        if self._scratch.size < need:
            self._scratch = np.empty(need, dtype=np.float32)
        return fptr(self._scratch)

    # memory ops: HostMemory (float32 numpy arrays)


    def info(self):
        return {"name": self.name, "isa": ffi.string(self._lib.minidl_cpu_isa_name()).decode(),
                "threads": int(self._lib.minidl_num_threads()),
                "gemm_kernel": ffi.string(self._lib.minidl_sgemm_kernel_name()).decode(),
                "amx": ffi.string(self._lib.minidl_amx_status()).decode()
                + ("" if self._lib.minidl_amx_active() or not self._lib.minidl_amx_available() else " (switched off)"),
                # what gemm / conv2d with precision="bfloat16" (mixed_bfloat16) run
                "bf16": ffi.string(self._lib.minidl_bf16_kernel_name()).decode()}

    # elementwise, activations, gemm: elementwise.py, activations.py, gemm.py

    # pooling: pooling.py (checked by contract/pooling.py)
