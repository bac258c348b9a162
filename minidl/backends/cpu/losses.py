"""The losses section on the cpu backend (csrc/loss.c, csrc/row_loss.c): a mixin of CpuBackend
(its _lib). The contract (minidl/backends/contract/losses.py) checked every shape and says
whether the targets are sparse; the pointers' checks here are the cpu tensor's own (C-contiguous
float32 numpy arrays, int32 class indices). A kernel with sparse targets returns a status when a
class index lies outside [0, K): the error names the first bad row."""

import math

import numpy as np

from ..contract.losses import ROW_LOSSES
from ._ffi import INT32, checked, output, raise_for_status


def rows_cols(shape):
    """(rows, last-axis length) of a tensor shape of rank >= 1."""
    return math.prod(shape[:-1]), shape[-1]


def sparse_targets(op, targets):
    """int32* to sparse class indices (N,)."""
    return checked(op, "targets (sparse)", targets, dtype=INT32)


def raise_for_targets(op, status, targets, k):
    """Raise for the status a kernel with sparse targets returned, naming the first bad row."""
    bad = np.flatnonzero((targets < 0) | (targets >= k))
    detail = (f"sparse targets must lie in [0, {k}), got {int(targets[bad[0]])} in row {int(bad[0])}"
              if bad.size else "")
    raise_for_status(op, status, detail)


def with_targets(op, targets, n, k, sparse, sparse_fn, dense_fn, head, tail=()):
    """Call sparse_fn(*head, int32 targets (n,), *tail, n, k) or dense_fn with float targets
    (n, k); an out-of-range sparse label raises naming its row."""
    if sparse:
        status = sparse_fn(*head, sparse_targets(op, targets), *tail, n, k)
        if status:
            raise_for_targets(op, status, targets, k)
    else:
        dense_fn(*head, checked(op, "targets (dense)", targets), *tail, n, k)


class CpuLossOps:
    """The fused loss kernels of CpuBackend."""

    def _softmax_cross_entropy_forward(self, probs, loss, logits, targets, sparse):
        op = "softmax_cross_entropy_forward"
        n, k = logits.shape
        with_targets(op, targets, n, k, sparse, self._lib.minidl_softmax_cross_entropy_forward_sparse,
                     self._lib.minidl_softmax_cross_entropy_forward_dense,
                     (output(op, "probs", probs), output(op, "loss", loss), checked(op, "logits", logits)))

    def _softmax_cross_entropy_backward(self, dlogits, probs, targets, scale, sparse):
        op = "softmax_cross_entropy_backward"
        n, k = probs.shape
        with_targets(op, targets, n, k, sparse, self._lib.minidl_softmax_cross_entropy_backward_sparse,
                     self._lib.minidl_softmax_cross_entropy_backward_dense,
                     (output(op, "dlogits", dlogits), checked(op, "probs", probs)), tail=(scale,))

    def _sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        op = "sigmoid_cross_entropy_forward"
        n, k = rows_cols(logits.shape)
        self._lib.minidl_sigmoid_cross_entropy_forward(
            output(op, "probs", probs), output(op, "loss", loss), checked(op, "logits", logits),
            checked(op, "targets", targets), n, k)

    def _sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        op = "sigmoid_cross_entropy_backward"
        n, k = rows_cols(probs.shape)
        self._lib.minidl_sigmoid_cross_entropy_backward(
            output(op, "dlogits", dlogits), checked(op, "probs", probs), checked(op, "targets", targets),
            scale, n, k)

    def _cross_entropy_forward(self, loss, probs, targets, binary, sparse):
        op = "cross_entropy_forward"
        n, k = rows_cols(probs.shape)
        if binary:
            self._lib.minidl_binary_cross_entropy_forward(output(op, "loss", loss), checked(op, "probs", probs),
                                                          checked(op, "targets", targets), n, k)
            return
        with_targets(op, targets, n, k, sparse, self._lib.minidl_cross_entropy_forward_sparse,
                     self._lib.minidl_cross_entropy_forward_dense,
                     (output(op, "loss", loss), checked(op, "probs", probs)))

    def _cross_entropy_backward(self, dprobs, probs, targets, binary, scale, sparse):
        op = "cross_entropy_backward"
        n, k = rows_cols(probs.shape)
        if binary:
            self._lib.minidl_binary_cross_entropy_backward(
                output(op, "dprobs", dprobs), checked(op, "probs", probs), checked(op, "targets", targets),
                scale, n, k)
            return
        with_targets(op, targets, n, k, sparse, self._lib.minidl_cross_entropy_backward_sparse,
                     self._lib.minidl_cross_entropy_backward_dense,
                     (output(op, "dprobs", dprobs), checked(op, "probs", probs)), tail=(scale,))

    def _mean_squared_error_forward(self, loss, pred, targets):
        op = "mean_squared_error_forward"
        n, k = rows_cols(pred.shape)
        self._lib.minidl_mean_squared_error_forward(output(op, "loss", loss), checked(op, "pred", pred),
                                                    checked(op, "targets", targets), n, k)

    def _mean_squared_error_backward(self, dpred, pred, targets, scale):
        op = "mean_squared_error_backward"
        n, k = rows_cols(pred.shape)
        self._lib.minidl_mean_squared_error_backward(output(op, "dpred", dpred), checked(op, "pred", pred),
                                                     checked(op, "targets", targets), scale, n, k)

    def _row_loss_forward(self, loss, pred, targets, kind, delta):
        op = "row_loss_forward"
        rows, k = pred.shape
        self._lib.minidl_row_loss_forward(output(op, "loss", loss), checked(op, "pred", pred),
                                          checked(op, "targets", targets), ROW_LOSSES.index(kind), delta,
                                          rows, k)

    def _row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        op = "row_loss_backward"
        rows, k = pred.shape
        self._lib.minidl_row_loss_backward(output(op, "dpred", dpred), checked(op, "pred", pred),
                                           checked(op, "targets", targets), ROW_LOSSES.index(kind), delta,
                                           scale, rows, k)
