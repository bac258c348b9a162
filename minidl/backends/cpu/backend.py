"""CpuBackend: the contract of minidl/backends/base.py on hand-vectorized C kernels.

Tensors are C-contiguous numpy arrays (float32, or int32 for labels and argmax). numpy is
used only to allocate and move memory (empty, zeros, from_numpy, copy_from_host, to_numpy,
reshape, copy, fill); every op that computes calls a C function of minidl._cpu_kernels with
pointers to the arrays. The C side picks AVX-512, AVX2 or plain C kernels at run time
(minidl_cpu_isa) and threads large tensors with OpenMP. gemm and conv2d come from LinalgOps.

Per-call Python work is a few checks and one pointer per tensor; scratch buffers (column
partial sums for bias_grad and batchnorm, window geometry) are allocated once and reused.
A kernel's failure comes back as a status that _ffi.raise_for_status turns into the exception.
"""

import math

import numpy as np

from ... import activations
from ..base import Backend
from ..host_memory import HostMemory
from ..rounded_operands import RoundedOperands
from ..checks import check_concat, check_dropout_args, is_sparse, require_input
from ._ffi import INT32, checked, ffi, fptr, output, raise_for_status, require_lib, window_struct
from .attention import CpuAttentionOps
from .depthwise import DepthwiseOps
from .images import ImageOps
from .layer_ops import CpuLayerOps
from .normalization import CpuNormalizationOps
from .linalg import LinalgOps
from .optimizers import CpuOptimizerOps
from .regularizers import CpuRegularizerOps
from .recurrent import CpuRecurrentOps
from ..gru_reset_before import GruResetBeforeOps
from ..recurrent_host import HostRecurrentOps
from .quantized import CpuQuantizedOps
from .quantizer_ops import CpuQuantizerOps
from .binary_ops import CpuBinaryOps
from .row_loss_ops import RowLossOps
from .tensor_ops import CpuTensorOps


def _rows_cols(shape):
    """(rows, last-axis length) of a tensor shape; a 0-d shape is one row of one element."""
    if not shape:
        return 1, 1
    c = shape[-1]
    return (math.prod(shape[:-1]), c)


class CpuBackend(CpuAttentionOps, CpuTensorOps, ImageOps, CpuLayerOps, CpuRecurrentOps, HostRecurrentOps, GruResetBeforeOps, CpuQuantizerOps,
                 CpuBinaryOps, LinalgOps, DepthwiseOps, CpuNormalizationOps, CpuOptimizerOps, CpuQuantizedOps, CpuRegularizerOps, RowLossOps, HostMemory, RoundedOperands,
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

    # ------------------------------------------------------ elementwise
    def add(self, out, a, b):
        pa = checked("add", "a", a)
        self._lib.minidl_add(output("add", "out", out, a.shape), pa, checked("add", "b", b, a.shape), a.size)

    def axpby(self, out, alpha, x, beta, y):
        op = "axpby"
        px = checked(op, "x", x)
        self._lib.minidl_axpby(output(op, "out", out, x.shape), float(alpha), px, float(beta),
                               checked(op, "y", y, x.shape), x.size)

    def multiply(self, out, a, b):
        pa = checked("multiply", "a", a)
        self._lib.minidl_multiply(output("multiply", "out", out, a.shape), pa,
                                  checked("multiply", "b", b, a.shape), a.size)

    def bias_add(self, out, x, bias):
        op = "bias_add"
        px = checked(op, "x", x)
        rows, c = _rows_cols(x.shape)
        self._lib.minidl_bias_add(output(op, "out", out, x.shape), px, checked(op, "bias", bias, (c,)),
                                  rows, c)

    def bias_grad(self, dbias, dout):
        op = "bias_grad"
        pd = checked(op, "dout", dout)
        rows, c = _rows_cols(dout.shape)
        self._lib.minidl_bias_grad(output(op, "dbias", dbias, (c,)), pd, rows, c, self._column_scratch(c))

    # ------------------------------------------------------ activations
    def activation_forward(self, out, x, name, alpha=0.0):
        op = "activation_forward"
        kind = activations.code(op, name)
        px = checked(op, "x", x)
        rows, c = _rows_cols(x.shape)
        self._lib.minidl_activation_forward(output(op, "out", out, x.shape), px, kind, float(alpha), rows, c)

    def activation_backward(self, dx, dout, y, name, alpha=0.0, x=None):
        op = "activation_backward"
        kind = activations.code(op, name)
        py = checked(op, "y", y)
        rows, c = _rows_cols(y.shape)
        px = ffi.NULL
        if name in activations.NEEDS_INPUT:
            require_input(op, name, x, y.shape)
            px = checked(op, "x", x, y.shape)
        self._lib.minidl_activation_backward(output(op, "dx", dx, y.shape), checked(op, "dout", dout, y.shape),
                                             py, px, kind, float(alpha), rows, c)

    # ---------------------------------------------------------- pooling (checked by contract/pooling.py)
    def _max_pool2d_forward(self, out, argmax, x, plan):
        op = "max_pool2d_forward"
        self._lib.minidl_max_pool2d_forward(output(op, "out", out), output(op, "argmax", argmax, dtype=INT32),
                                            checked(op, "x", x), window_struct(op, plan))

    def _max_pool2d_backward(self, dx, dout, argmax, plan):
        op = "max_pool2d_backward"
        self._lib.minidl_max_pool2d_backward(output(op, "dx", dx), checked(op, "dout", dout),
                                             checked(op, "argmax", argmax, dtype=INT32), window_struct(op, plan))

    def _avg_pool2d_forward(self, out, x, plan):
        op = "avg_pool2d_forward"
        self._lib.minidl_avg_pool2d_forward(output(op, "out", out), checked(op, "x", x), window_struct(op, plan))

    def _avg_pool2d_backward(self, dx, dout, plan):
        op = "avg_pool2d_backward"
        self._lib.minidl_avg_pool2d_backward(output(op, "dx", dx), checked(op, "dout", dout),
                                             window_struct(op, plan))

    def _global_avg_pool_forward(self, out, x):
        op = "global_avg_pool_forward"
        n, h, w, c = x.shape
        self._lib.minidl_global_avg_pool_forward(output(op, "out", out), checked(op, "x", x), n, h * w, c)

    def _global_avg_pool_backward(self, dx, dout):
        op = "global_avg_pool_backward"
        n, h, w, c = dx.shape
        self._lib.minidl_global_avg_pool_backward(output(op, "dx", dx), checked(op, "dout", dout), n, h * w, c)

    def _pad2d_forward(self, out, x, pads):
        op = "pad2d_forward"
        n, h, w, c = x.shape
        self._lib.minidl_pad2d_forward(output(op, "out", out), checked(op, "x", x), n, h, w, c, *pads)

    def _pad2d_backward(self, dx, dout, pads):
        op = "pad2d_backward"
        n, h, w, c = dx.shape
        self._lib.minidl_pad2d_backward(output(op, "dx", dx), checked(op, "dout", dout), n, h, w, c, *pads)

    # ------------------------------------------------------ concatenate
    def concat_forward(self, out, xs):
        op = "concat_forward"
        check_concat(op, xs, out, "xs", "out")
        rows, total = _rows_cols(out.shape)
        pout = output(op, "out", out)
        offset = 0
        for index, x in enumerate(xs):
            width = x.shape[-1]
            self._lib.minidl_copy_columns(pout, checked(op, f"xs[{index}]", x), total, offset, width, 0,
                                          width, rows)
            offset += width

    def concat_backward(self, dxs, dout):
        op = "concat_backward"
        check_concat(op, dxs, dout, "dxs", "dout")
        rows, total = _rows_cols(dout.shape)
        pdout = checked(op, "dout", dout)
        offset = 0
        for index, dx in enumerate(dxs):
            width = dx.shape[-1]
            self._lib.minidl_copy_columns(output(op, f"dxs[{index}]", dx), pdout, width, 0, total, offset,
                                          width, rows)
            offset += width

    @staticmethod
    def _optional(op, name, t, shape, writable=False):
        return ffi.NULL if t is None else checked(op, name, t, shape, writable=writable)

    # ---------------------------------------------------------- dropout
    def dropout_forward(self, out, mask, x, rate, seed):
        op = "dropout_forward"
        check_dropout_args(op, rate, seed)
        px = checked(op, "x", x)
        self._lib.minidl_dropout_forward(output(op, "out", out, x.shape), output(op, "mask", mask, x.shape),
                                         px, float(rate), int(seed) % 2 ** 64, x.size)

    # ----------------------------------------------------------- losses
    @staticmethod
    def _scores(op, name, scores):
        p = checked(op, name, scores)
        if scores.ndim != 2:
            raise ValueError(f"{op}: expects 2-D (N, K) {name}, got shape {tuple(scores.shape)}")
        return p

    @staticmethod
    def _raise_for_targets(op, status, targets, k):
        """Raise for the status a kernel with sparse targets returned, naming the first bad row."""
        bad = np.flatnonzero((targets < 0) | (targets >= k))
        detail = (f"sparse targets must lie in [0, {k}), got {int(targets[bad[0]])} in row {int(bad[0])}"
                  if bad.size else "")
        raise_for_status(op, status, detail)

    def _with_targets(self, op, targets, n, k, sparse_fn, dense_fn, head, tail=()):
        """Call sparse_fn(*head, int32 targets (n,), *tail, n, k) or dense_fn with float targets
        (n, k), by the targets' dtype; an out-of-range sparse label raises naming its row."""
        if is_sparse(targets):
            status = sparse_fn(*head, checked(op, "targets (sparse)", targets, (n,), INT32), *tail, n, k)
            if status:
                self._raise_for_targets(op, status, targets, k)
        else:
            dense_fn(*head, checked(op, "targets (dense)", targets, (n, k)), *tail, n, k)

    def softmax_cross_entropy_forward(self, probs, loss, logits, targets):
        op = "softmax_cross_entropy_forward"
        plogits = self._scores(op, "logits", logits)
        n, k = logits.shape
        pprobs = output(op, "probs", probs, logits.shape)
        ploss = output(op, "loss", loss, (n,))
        self._with_targets(op, targets, n, k, self._lib.minidl_softmax_cross_entropy_forward_sparse,
                           self._lib.minidl_softmax_cross_entropy_forward_dense, (pprobs, ploss, plogits))

    def softmax_cross_entropy_backward(self, dlogits, probs, targets, scale):
        op = "softmax_cross_entropy_backward"
        pprobs = self._scores(op, "probs", probs)
        n, k = probs.shape
        pd = output(op, "dlogits", dlogits, probs.shape)
        self._with_targets(op, targets, n, k, self._lib.minidl_softmax_cross_entropy_backward_sparse,
                           self._lib.minidl_softmax_cross_entropy_backward_dense, (pd, pprobs),
                           tail=(float(scale),))

    def sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        op = "sigmoid_cross_entropy_forward"
        plogits = checked(op, "logits", logits)
        n, k = _rows_cols(logits.shape)
        self._lib.minidl_sigmoid_cross_entropy_forward(
            output(op, "probs", probs, logits.shape), output(op, "loss", loss, logits.shape[:-1]), plogits,
            checked(op, "targets", targets, logits.shape), n, k)

    def sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        op = "sigmoid_cross_entropy_backward"
        pprobs = checked(op, "probs", probs)
        n, k = _rows_cols(probs.shape)
        self._lib.minidl_sigmoid_cross_entropy_backward(
            output(op, "dlogits", dlogits, probs.shape), pprobs, checked(op, "targets", targets, probs.shape),
            float(scale), n, k)

    def cross_entropy_forward(self, loss, probs, targets, binary):
        op = "cross_entropy_forward"
        if binary:
            pprobs = checked(op, "probs", probs)
            n, k = _rows_cols(probs.shape)
            self._lib.minidl_binary_cross_entropy_forward(
                output(op, "loss", loss, probs.shape[:-1]), pprobs,
                checked(op, "targets", targets, probs.shape), n, k)
            return
        pprobs = self._scores(op, "probs", probs)
        n, k = probs.shape
        ploss = output(op, "loss", loss, (n,))
        self._with_targets(op, targets, n, k, self._lib.minidl_cross_entropy_forward_sparse,
                           self._lib.minidl_cross_entropy_forward_dense, (ploss, pprobs))

    def cross_entropy_backward(self, dprobs, probs, targets, binary, scale):
        op = "cross_entropy_backward"
        if binary:
            pprobs = checked(op, "probs", probs)
            n, k = _rows_cols(probs.shape)
            self._lib.minidl_binary_cross_entropy_backward(
                output(op, "dprobs", dprobs, probs.shape), pprobs,
                checked(op, "targets", targets, probs.shape), float(scale), n, k)
            return
        pprobs = self._scores(op, "probs", probs)
        n, k = probs.shape
        pd = output(op, "dprobs", dprobs, probs.shape)
        self._with_targets(op, targets, n, k, self._lib.minidl_cross_entropy_backward_sparse,
                           self._lib.minidl_cross_entropy_backward_dense, (pd, pprobs), tail=(float(scale),))

    def mean_squared_error_forward(self, loss, pred, targets):
        op = "mean_squared_error_forward"
        ppred = checked(op, "pred", pred)
        n, k = _rows_cols(pred.shape)
        self._lib.minidl_mean_squared_error_forward(output(op, "loss", loss, pred.shape[:-1]), ppred,
                                                    checked(op, "targets", targets, pred.shape), n, k)

    def mean_squared_error_backward(self, dpred, pred, targets, scale):
        op = "mean_squared_error_backward"
        ppred = checked(op, "pred", pred)
        n, k = _rows_cols(pred.shape)
        self._lib.minidl_mean_squared_error_backward(output(op, "dpred", dpred, pred.shape), ppred,
                                                     checked(op, "targets", targets, pred.shape), float(scale),
                                                     n, k)

    # ------------------------------------------------ reductions/metrics
    def sum(self, out, x, accumulate=False):
        self._lib.minidl_sum(output("sum", "out", out, (1,)), checked("sum", "x", x), int(bool(accumulate)),
                             x.size)

    def categorical_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        op = "categorical_accuracy"
        pout = output(op, "out", out, (1,))
        ppred = self._scores(op, "pred", pred)
        n, k = pred.shape
        pw = self._optional(op, "weights", weights, (n,))
        self._with_targets(op, targets, n, k, self._lib.minidl_categorical_accuracy_sparse,
                           self._lib.minidl_categorical_accuracy_dense, (pout, ppred),
                           tail=(pw, int(bool(accumulate))))

    def binary_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        op = "binary_accuracy"
        ppred = checked(op, "pred", pred)
        self._lib.minidl_binary_accuracy(output(op, "out", out, (1,)), ppred,
                                         checked(op, "targets", targets, pred.shape),
                                         self._optional(op, "weights", weights, pred.shape),
                                         int(bool(accumulate)), pred.size)

    def top_k_accuracy(self, out, pred, targets, k, accumulate=False, weights=None):
        op = "top_k_accuracy"
        if isinstance(k, bool) or int(k) != k or k < 1:
            raise ValueError(f"{op}: k must be a positive int, got {k!r}")
        pout = output(op, "out", out, (1,))
        ppred = self._scores(op, "pred", pred)
        n, classes = pred.shape
        pw = self._optional(op, "weights", weights, (n,))
        self._with_targets(op, targets, n, classes, self._lib.minidl_top_k_accuracy_sparse,
                           self._lib.minidl_top_k_accuracy_dense, (pout, ppred),
                           tail=(pw, int(k), int(bool(accumulate))))

    def all_finite(self, out, x):
        self._lib.minidl_all_finite(output("all_finite", "out", out, (1,)), checked("all_finite", "x", x),
                                    x.size)
