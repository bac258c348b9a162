"""OpenCLBackend: every op of the backend contract as OpenCL C kernels on one device.

All tensors (weights, activations, gradients, optimizer state, scalar results)
are CLTensors in device buffers. Ops enqueue kernels on one in-order queue and
return at once; only from_numpy/copy_from_host (host->device) and to_numpy
(device->host) move data across, and the runtime counts them.
"""

import math

import numpy as np

from ..base import Backend
from ..rounded_operands import RoundedOperands
from ..checks import check_shape
from .activations import ActivationOps
from .attention import AttentionOps
from .conv import ConvOps
from .depthwise import DepthwiseOps
from .elementwise import ElementwiseOps
from .gemm import Gemm, GemmOps
from .images import ImageOps
from .image_mix import OpenCLImageMixOps
from .displace import OpenCLDisplaceOps
from .larq import LarqOps
from .pooling import PoolingOps
from .equalize import EqualizeOps
from .layer_ops import LayerOps
from .losses import LossOps
from .metrics import MetricOps
from .normalization import NormalizationOps
from .optimizers import OptimizerOps
from .regularizers import RegularizerOps
from .recurrent import RecurrentOps
from ..recurrent_device import DeviceRecurrentOps
from .quantized import OpenCLQuantizedOps
from .runtime import Runtime
from .tensor import CLTensor
from .tensor_ops import OpenCLTensorOps
from .profiles import LOCAL_1D, make_profile
from . import tuner




class OpenCLBackend(ElementwiseOps, ActivationOps, GemmOps, AttentionOps, OpenCLTensorOps, ImageOps, OpenCLImageMixOps, OpenCLDisplaceOps, EqualizeOps, LossOps, MetricOps, LayerOps, LarqOps,
                    NormalizationOps, OptimizerOps, OpenCLQuantizedOps, RegularizerOps, ConvOps, DepthwiseOps, PoolingOps, RecurrentOps, DeviceRecurrentOps,
                    RoundedOperands, Backend):
    """The contract's memory and pooling ops here; elementwise, activations and gemm in the
    modules named for them; convolutions in conv.ConvOps; losses in losses.LossOps, metrics and
    reductions in metrics.MetricOps; optimizer updates in optimizers.OptimizerOps; the GPU and CPU
    kernel profiles in profiles.py.
    The runtime's profile ("cpu" or "gpu") is the one switch between the two kernel shapes:
    the GEMM family (gemm.default_params, and with it the convolutions), and `profile`
    (profiles.CpuProfile or GpuProfile), chosen here once, for every other op's kernels."""

    name = "opencl"
    dtype = "float32"

    def __init__(self, runtime=None, gemm_params=None):
        self.rt = runtime or Runtime()
        self._gemm_params = gemm_params
        self._gemm_engine = None   # chosen (and on a new device tuned) by the first GEMM
        self._scratch_tensors = {}   # name -> CLTensor grown on demand, reused by every later call
        self._local_1d = min(LOCAL_1D, self.rt.max_work_group_size)   # tensor_ops' launches
        self.profile = make_profile(self)

    @property
    def gemm_engine(self):
        """The Gemm in use. Its parameters are chosen on first use, not when the backend is
        made, so that listing or selecting backends never starts the tuner."""
        if self._gemm_engine is None:
            with self.rt.uncounted():  # the tuner's transfers are not the user's
                self._gemm_engine = Gemm(self.rt, self._gemm_params or tuner.gemm_params(self.rt))
        return self._gemm_engine

    # ------------------------------------------------------------ helpers
    def _kernel(self, filename, name, defines=None):
        return self.rt.kernel(filename, name, defines)

    def _run1d(self, filename, name, n, *args, defines=None):
        """Launch a kernel over n work-items (rounded up to whole work-groups: every kernel checks
        its index against a count it receives). Small launches get small work-groups so that
        every compute unit gets some. `defines` are the program's -D options."""
        if n <= 0:
            return
        kernel = self._kernel(filename, name, defines)
        local = self.profile.local_size(kernel, n)
        size = -(-n // local) * local
        self.rt.launch(kernel, (size,), (local,), *args)

    def _scratch_tensor(self, name, shape):
        """A scratch tensor of `shape` kept between calls (its buffer only grows)."""
        size = max(math.prod(shape), 1)
        held = self._scratch_tensors.get(name)
        if held is None or held.size < size:
            held = self.rt.alloc((size,))
            self._scratch_tensors[name] = held
        return CLTensor(held.buffer, shape, "float32")

    @staticmethod
    def _check(op, arg, tensor, shape):
        if tuple(tensor.shape) != tuple(shape):  # the message is built on failure only
            check_shape(f"opencl {op}", arg, tensor, shape)

    @staticmethod
    def _check_same_size(op, names, tensors):
        sizes = [t.size for t in tensors]
        if len(set(sizes)) != 1:
            shapes = ", ".join(f"{n} {t.shape}" for n, t in zip(names, tensors))
            raise ValueError(f"opencl {op}: tensors must have the same size, got {shapes}")

    # ----------------------------------------------------------- memory
    def empty(self, shape, dtype="float32"):
        return self.rt.alloc(tuple(shape), dtype)

    def zeros(self, shape, dtype="float32"):
        out = self.empty(shape, dtype)
        self.fill(out, 0)
        return out

    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        if dtype is None:
            dtype = "int32" if np.issubdtype(array.dtype, np.integer) else "float32"
        out = self.empty(array.shape, dtype)
        self.rt.write(out, array)
        return out

    def copy_from_host(self, out, array):
        self.rt.write(out, array)

    def to_numpy(self, x):
        return self.rt.read(x)

    def reshape(self, x, shape):
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(x.size // known if s == -1 else s for s in shape)
        if math.prod(shape) != x.size:
            raise ValueError(f"opencl reshape: cannot view {x.shape} ({x.size} elements) as {shape}")
        return CLTensor(x.buffer, shape, x.dtype, x.offset)

    def view(self, x, shape):
        shape = tuple(int(s) for s in shape)
        if math.prod(shape) > x.size:
            raise ValueError(f"opencl view: {x.shape} ({x.size} elements) is too small for {shape}")
        return CLTensor(x.buffer, shape, x.dtype, x.offset)

    def storage(self, x):
        return x.buffer   # views and reshapes share their cl.Buffer

    def copy(self, out, x):
        self._check_same_size("copy", ("out", "x"), (out, x))
        self.rt.copy(out, x)

    def fill(self, out, value):
        if out.dtype == np.int32:
            self._run1d("elementwise.cl", "fill_int", out.size, out, int(value), out.size)
        else:
            self._run1d("elementwise.cl", "fill_float", out.size, out, float(value), out.size)

    def synchronize(self):
        self.rt.finish()

    def info(self):
        info = {"name": self.name}
        info.update(self.rt.info())
        # cheap: the GEMM in use, else the one the first GEMM will use when that is known
        # without tuning; the tuner itself runs only for a GEMM, never for info()
        if self._gemm_engine is not None or self._gemm_params:
            params = self._gemm_engine.params if self._gemm_engine else self._gemm_params
            source = "given" if self._gemm_params else tuner.last_source(self.rt)
        else:
            params, source = tuner.known_params(self.rt) or (None, "not tuned yet: tuned on "
                                                                   "the first GEMM")
        info["gemm"] = None if params is None else dict(params)
        info["gemm_source"] = source
        return info

    def stats(self):
        return self.rt.stats()

    def reset_stats(self):
        self.rt.reset_stats()

    # elementwise, activations, gemm: elementwise.py, activations.py, gemm.py
    def _column_sums(self, out, x, scale, accumulate):
        """out (C,) = scale * sums of x viewed as (M, C) over M (+ out when accumulate)."""
        c = out.size
        m = x.size // c
        (partial,), parts = self.profile.column_partial_sums("reduce.cl", "colsum_partial", 1,
                                                              (x,), m, c)
        self.rt.launch(self._kernel("reduce.cl", "colsum_finish"), (c,), None,
                       out, partial, parts, c, float(scale), int(accumulate))

    # pooling: pooling.py (checked by contract/pooling.py)
