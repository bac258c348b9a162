"""OpenCLBackend: every op of the backend contract as OpenCL C kernels on one device.

All tensors (weights, activations, gradients, optimizer state, scalar results)
are CLTensors in device buffers. Ops enqueue kernels on one in-order queue and
return at once; only from_numpy/copy_from_host (host->device) and to_numpy
(device->host) move data across, and the runtime counts them.
"""

import math

import numpy as np

from ... import activations
from ..base import Backend
from ..rounded_operands import RoundedOperands
from ..checks import check_concat, check_dropout_args, check_shape, require_input
from .attention import AttentionOps
from .conv import ConvOps, window_args
from .depthwise import DepthwiseOps
from .gemm import Gemm
from .group_ops import GroupOps
from .images import ImageOps
from .equalize import EqualizeOps
from .layer_ops import LayerOps
from .normalization import NormalizationOps
from .optimizers import OptimizerOps
from .regularizers import RegularizerOps
from .recurrent import RecurrentOps
from ..recurrent_device import DeviceRecurrentOps
from .quantized import OpenCLQuantizedOps
from .quantizer_ops import QuantizerOps
from .binary_ops import BinaryOps
from .row_loss_ops import RowLossOps
from .runtime import Runtime
from .tensor import CLTensor
from .tensor_ops import OpenCLTensorOps
from .training_ops import COLUMN_PARTS, TrainingOps
from . import tuner

LOCAL_1D = 64          # work-group size of the one-dimensional kernels ...
MIN_GROUPS = 8         # ... shrunk so that a small launch still spreads over several groups



class OpenCLBackend(AttentionOps, OpenCLTensorOps, ImageOps, EqualizeOps, TrainingOps, LayerOps, QuantizerOps, BinaryOps,
                    NormalizationOps, OptimizerOps, OpenCLQuantizedOps, RegularizerOps, RowLossOps, ConvOps, DepthwiseOps, GroupOps, RecurrentOps, DeviceRecurrentOps,
                    RoundedOperands, Backend):
    """The contract's memory, elementwise, GEMM, pooling, normalization and dropout ops here;
    convolutions in conv.ConvOps; losses, metrics and reductions in training_ops.TrainingOps;
    optimizer updates in optimizers.OptimizerOps; the GPU profile's cooperative reductions in group_ops.GroupOps.
    The runtime's profile ("cpu" or "gpu") is the one switch between the two kernel shapes:
    the GEMM family (gemm.default_params, and with it the convolutions), and here `gpu`."""

    name = "opencl"
    dtype = "float32"

    def __init__(self, runtime=None, gemm_params=None):
        self.rt = runtime or Runtime()
        self._gemm_params = gemm_params
        self._gemm_engine = None   # chosen (and on a new device tuned) by the first GEMM
        self._scratch = {}   # name -> CLTensor grown on demand, reused by every later call
        self._local_1d = min(LOCAL_1D, self.rt.max_work_group_size)
        self.gpu = self.rt.profile == "gpu"
        self._group_sizes = {}   # kernel name -> work-group size (group_ops.GroupOps.group_size)

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
        if self.gpu:  # whole warps / wavefronts, within the kernel's and device's limits
            local = self.group_size(kernel)
        else:
            local = self._local_1d
            while local > 1 and n < local * MIN_GROUPS:
                local //= 2
        size = -(-n // local) * local
        self.rt.launch(kernel, (size,), (local,), *args)

    def _scratch_tensor(self, name, shape):
        """A scratch tensor of `shape` kept between calls (its buffer only grows)."""
        size = max(math.prod(shape), 1)
        held = self._scratch.get(name)
        if held is None or held.size < size:
            held = self.rt.alloc((size,))
            self._scratch[name] = held
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

    # ------------------------------------------------------ elementwise
    def add(self, out, a, b):
        self._check_same_size("add", ("out", "a", "b"), (out, a, b))
        self._run1d("elementwise.cl", "add", out.size, out, a, b, out.size)

    def axpby(self, out, alpha, x, beta, y):
        self._check_same_size("axpby", ("out", "x", "y"), (out, x, y))
        self._run1d("elementwise.cl", "axpby", out.size, out, float(alpha), x, float(beta), y, out.size)

    def multiply(self, out, a, b):
        self._check_same_size("multiply", ("out", "a", "b"), (out, a, b))
        self._run1d("elementwise.cl", "multiply", out.size, out, a, b, out.size)

    def bias_add(self, out, x, bias):
        self._check_same_size("bias_add", ("out", "x"), (out, x))
        self._check("bias_add", "bias", bias, (x.shape[-1],))
        if self.gpu:
            self.per_element("bias_add_elements", x.size, out, x, bias, bias.size)
            return
        rows = x.size // bias.size
        self._run1d("elementwise.cl", "bias_add", rows, out, x, bias, rows, bias.size)

    def bias_grad(self, dbias, dout):
        self._check("bias_grad", "dbias", dbias, (dout.shape[-1],))
        self._column_sums(dbias, dout, 1.0, accumulate=False)

    def _column_sums(self, out, x, scale, accumulate):
        """out (C,) = scale * sums of x viewed as (M, C) over M (+ out when accumulate)."""
        c = out.size
        m = x.size // c
        if self.gpu:
            (partial,), parts = self.column_partials("colsum_partial_wg", 1, (x,), m, c)
            self.rt.launch(self._kernel("reduce.cl", "colsum_finish"), (c,), None,
                           out, partial, parts, c, float(scale), int(accumulate))
            return
        parts = max(1, min(COLUMN_PARTS, m))
        rows_per_part = -(-m // parts)
        partial = self._scratch_tensor("column_partial", (parts, c))
        self._run1d("reduce.cl", "colsum_partial", parts, partial, x, m, c, rows_per_part, parts)
        self.rt.launch(self._kernel("reduce.cl", "colsum_finish"), (c,), None,
                       out, partial, parts, c, float(scale), int(accumulate))

    # ------------------------------------------------------ activations
    def activation_forward(self, out, x, name, alpha=0.0):
        self._check_same_size(f"activation_forward({name})", ("out", "x"), (out, x))
        if name == "softmax":
            k = x.shape[-1]
            if self.gpu:
                self.row_groups("softmax_forward_rows", x.size // k, k, out, x)
                return
            self._run1d("loss.cl", "softmax_forward", x.size // k, out, x, x.size // k, k)
            return
        code = self._activation_code(name)
        self._run1d("activations.cl", "activation_forward", out.size, out, x, code, float(alpha), out.size)

    def activation_backward(self, dx, dout, y, name, alpha=0.0, x=None):
        self._check_same_size(f"activation_backward({name})", ("dx", "dout", "y"), (dx, dout, y))
        if name in activations.NEEDS_INPUT:
            require_input("activation_backward", name, x, y.shape)
        else:
            x = y    # a valid buffer the kernel never reads
        if name == "softmax":
            k = y.shape[-1]
            self._run1d("loss.cl", "softmax_backward", y.size // k, dx, dout, y, y.size // k, k)
            return
        code = self._activation_code(name)
        self._run1d("activations.cl", "activation_backward", dx.size, dx, dout, y, x, code,
                    float(alpha), dx.size)

    @staticmethod
    def _activation_code(name):
        # elementwise.cl's codes (softmax, code 5, has its own row kernels above)
        return activations.code("opencl activation", name)

    # ------------------------------------------------------------- gemm
    def gemm(self, out, a, b, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, precision=None):
        # low precision: rounded operands, then the float32 kernels (no bf16 storage kernel yet)
        a, b = self._rounded("gemm", "a", a, precision), self._rounded("gemm", "b", b, precision)
        if a.ndim != 2 or b.ndim != 2 or out.ndim != 2:
            raise ValueError(f"opencl gemm: out, a, b must be 2-D, got {out.shape}, {a.shape}, {b.shape}")
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        kb, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
        if kb != k or out.shape != (m, n):
            raise ValueError(f"opencl gemm: cannot compute out {out.shape} = op(a) {a.shape} @ "
                             f"op(b) {b.shape} with trans_a={trans_a}, trans_b={trans_b}")
        engine = self.gemm_engine
        if trans_b and not engine.reads_transposed_b:
            b = self._transpose_into(self._scratch_tensor("gemm_b_transposed", (k, n)), b)
            trans_b = False
        engine.run(out, a, b, m, n, k, trans_a, alpha, beta, trans_b)

    def _transpose_into(self, out, x):
        """out (cols, rows) = x (rows, cols).T on the device; returns out."""
        rows, cols = x.shape
        tile = 16
        while tile > 1 and tile * tile > self.rt.max_work_group_size:
            tile //= 2
        global_size = (-(-cols // tile) * tile, -(-rows // tile) * tile)
        kernel = self.rt.kernel("gemm_util.cl", "transpose", {"TILE": tile})
        self.rt.launch(kernel, global_size, (tile, tile), out, x, rows, cols)
        return out

    # ---------------------------------------------------------- pooling (checked by contract/pooling.py)
    def _max_pool2d_forward(self, out, argmax, x, plan):
        pixels = plan.n * plan.oh * plan.ow
        self._run1d("pool.cl", "max_pool2d_forward", pixels, out, argmax, x,
                    *window_args(plan), pixels)

    def _max_pool2d_backward(self, dx, dout, argmax, plan):
        pixels = plan.n * plan.h * plan.w
        self._run1d("pool.cl", "max_pool2d_backward", pixels, dx, dout, argmax,
                    *window_args(plan), pixels)

    def _avg_pool2d_forward(self, out, x, plan):
        pixels = plan.n * plan.oh * plan.ow
        self._run1d("pool.cl", "avg_pool2d_forward", pixels, out, x, *window_args(plan), pixels)

    def _avg_pool2d_backward(self, dx, dout, plan):
        pixels = plan.n * plan.h * plan.w
        self._run1d("pool.cl", "avg_pool2d_backward", pixels, dx, dout, *window_args(plan), pixels)

    def _global_avg_pool_forward(self, out, x):
        n, h, w, c = x.shape
        if self.gpu:
            self.per_element("global_avg_pool_forward_columns", n * c, out, x, h * w, c)
            return
        self._run1d("pool.cl", "global_avg_pool_forward", n, out, x, h * w, c, n)

    def _global_avg_pool_backward(self, dx, dout):
        n, h, w, c = dx.shape
        if self.gpu:
            self.per_element("global_avg_pool_backward_elements", dx.size, dx, dout, h * w, c)
            return
        self._run1d("pool.cl", "global_avg_pool_backward", n * h * w, dx, dout, h * w, c, n * h * w)

    def _pad2d_forward(self, out, x, pads):
        top, _, left, _ = pads
        n, h, w, c = x.shape
        image_rows = n * out.shape[1]
        self._run1d("elementwise.cl", "pad2d_forward", image_rows, out, x, h, w, c,
                    out.shape[1], out.shape[2], top, left, image_rows)

    def _pad2d_backward(self, dx, dout, pads):
        top, _, left, _ = pads
        n, h, w, c = dx.shape
        self._run1d("elementwise.cl", "pad2d_backward", n * h, dx, dout, h, w, c,
                    dout.shape[1], dout.shape[2], top, left, n * h)

    # ------------------------------------------------------ concatenate
    def concat_forward(self, out, xs):
        check_concat("opencl concat_forward", xs, out, "xs", "out")
        offset = 0
        for x in xs:
            c_in = x.shape[-1]
            rows = x.size // max(c_in, 1)
            self._run1d("elementwise.cl", "concat_piece_forward", rows, out, x, c_in,
                        out.shape[-1], offset, rows)
            offset += c_in

    def concat_backward(self, dxs, dout):
        check_concat("opencl concat_backward", dxs, dout, "dxs", "dout")
        offset = 0
        for dx in dxs:
            c_in = dx.shape[-1]
            rows = dx.size // max(c_in, 1)
            self._run1d("elementwise.cl", "concat_piece_backward", rows, dx, dout, c_in,
                        dout.shape[-1], offset, rows)
            offset += c_in

    # ---------------------------------------------------------- dropout
    def dropout_forward(self, out, mask, x, rate, seed):
        self._check_same_size("dropout_forward", ("out", "mask", "x"), (out, mask, x))
        check_dropout_args("dropout_forward", rate, seed)
        seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        blocks = -(-x.size // 4)
        self._run1d("dropout.cl", "dropout_forward", blocks, out, mask, x, float(rate),
                    1.0 / (1.0 - rate), np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32), x.size)
