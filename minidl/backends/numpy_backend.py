"""The numpy reference backend: every op of the contract in plain, vectorized numpy.

It is the oracle every other backend is tested against, so each op favours the
obviously-correct formulation (stable softmax, logsumexp losses, float64 reductions)
over speed. Tensors are ordinary C-contiguous numpy arrays. The backend runs in
float32 by default, or in float64 (`NumpyBackend(dtype="float64")`) for finite-difference
gradient checks: every float tensor it creates then uses float64, int32 stays int32.
"""

import numpy as np

from .base import Backend
from .host_memory import HostMemory
from .numpy_ops import windows
from .numpy_ops.attention import NumpyAttentionOps
from .numpy_ops.activations import NumpyActivationOps
from .numpy_ops.depthwise import NumpyDepthwiseOps
from .numpy_ops.elementwise import NumpyElementwiseOps
from .numpy_ops.gemm import NumpyGemmOps
from .numpy_ops.image_mix import NumpyImageMixOps
from .numpy_ops.images import NumpyImageOps
from .numpy_ops.displace import NumpyDisplaceOps
from .numpy_ops.larq import NumpyLarqOps
from .numpy_ops.pooling import NumpyPoolingOps
from .numpy_ops.equalize import NumpyEqualizeOps
from .numpy_ops.perspective import NumpyPerspectiveOps
from .numpy_ops.layer_ops import NumpyLayerOps
from .numpy_ops.losses import NumpyLossOps
from .numpy_ops.metrics import NumpyMetricOps
from .numpy_ops.normalization import NumpyNormalizationOps
from .numpy_ops.optimizers import NumpyOptimizerOps
from .numpy_ops.recurrent import NumpyRecurrentOps
from .gru_reset_before import GruResetBeforeOps
from .recurrent_host import HostRecurrentOps
from .numpy_ops.quantized import NumpyQuantizedOps
from .numpy_ops.regularizers import NumpyRegularizerOps
from .numpy_ops.tensor_ops import NumpyTensorOps
from .rounded_operands import RoundedOperands



class NumpyBackend(NumpyElementwiseOps, NumpyActivationOps, NumpyGemmOps, NumpyAttentionOps, NumpyTensorOps, NumpyLayerOps, NumpyRecurrentOps, HostRecurrentOps, GruResetBeforeOps, NumpyLarqOps,
                   NumpyDepthwiseOps, NumpyPoolingOps, NumpyOptimizerOps, NumpyNormalizationOps, NumpyQuantizedOps,
                   NumpyRegularizerOps, NumpyLossOps, NumpyMetricOps, NumpyImageOps, NumpyImageMixOps, NumpyEqualizeOps, NumpyPerspectiveOps,
                   NumpyDisplaceOps, HostMemory, RoundedOperands, Backend):
    """Host-memory backend on numpy; see minidl.backends.base.Backend for each op's contract."""

    name = "numpy"

    def __init__(self, dtype="float32"):
        if dtype not in ("float32", "float64"):
            raise ValueError(f"NumpyBackend: dtype must be 'float32' or 'float64', got {dtype!r}")
        self.dtype = dtype
        self._float = np.dtype(dtype)

    # memory ops: HostMemory

    def info(self):
        return {"name": self.name, "dtype": self.dtype}

    # elementwise, activations, gemm: numpy_ops/elementwise.py, activations.py, gemm.py

    # ------------------------------------------------------ convolution
    def _conv2d_forward(self, out, x, weight, bias, plan, precision):
        if precision is not None:
            self._rounded_conv2d_forward(out, x, weight, bias, plan, precision)
            return
        windows.conv2d_forward(out, x, weight, bias, plan)

    def _conv2d_backward_data(self, dx, dout, weight, plan, precision):
        if precision is not None:
            self._rounded_conv2d_backward_data(dx, dout, weight, plan, precision)
            return
        windows.conv2d_backward_data(dx, dout, weight, plan)

    def _conv2d_backward_filter(self, dweight, dbias, dout, x, plan, precision):
        if precision is not None:
            self._rounded_conv2d_backward_filter(dweight, dbias, dout, x, plan, precision)
            return
        windows.conv2d_backward_filter(dweight, dbias, dout, x, plan)

    # pooling: pooling.py (checked by contract/pooling.py)


def create(**options):
    """The registry's entry point: numpy is always available."""
    return NumpyBackend(**options)
