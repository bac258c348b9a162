"""The metrics section on the cpu backend (csrc/metrics.c): a mixin of CpuBackend
(its _lib). The contract (minidl/backends/contract/metrics.py) checked every shape and k and
says whether the targets are sparse; the pointers' checks here are the cpu tensor's own."""

from ._ffi import checked, ffi, output
from .losses import with_targets


def _weights(op, weights):
    return ffi.NULL if weights is None else checked(op, "weights", weights)


class CpuMetricOps:
    """sum, all_finite and the accuracy counts of CpuBackend."""

    def _sum(self, out, x, accumulate):
        self._lib.minidl_sum(output("sum", "out", out), checked("sum", "x", x), int(accumulate), x.size)

    def _categorical_accuracy(self, out, pred, targets, accumulate, weights, sparse):
        op = "categorical_accuracy"
        n, k = pred.shape
        with_targets(op, targets, n, k, sparse, self._lib.minidl_categorical_accuracy_sparse,
                     self._lib.minidl_categorical_accuracy_dense, (output(op, "out", out), checked(op, "pred", pred)),
                     tail=(_weights(op, weights), int(accumulate)))

    def _binary_accuracy(self, out, pred, targets, accumulate, weights):
        op = "binary_accuracy"
        self._lib.minidl_binary_accuracy(output(op, "out", out), checked(op, "pred", pred),
                                         checked(op, "targets", targets), _weights(op, weights),
                                         int(accumulate), pred.size)

    def _top_k_accuracy(self, out, pred, targets, k, accumulate, weights, sparse):
        op = "top_k_accuracy"
        n, classes = pred.shape
        with_targets(op, targets, n, classes, sparse, self._lib.minidl_top_k_accuracy_sparse,
                     self._lib.minidl_top_k_accuracy_dense, (output(op, "out", out), checked(op, "pred", pred)),
                     tail=(_weights(op, weights), k, int(accumulate)))

    def _all_finite(self, out, x):
        self._lib.minidl_all_finite(output("all_finite", "out", out), checked("all_finite", "x", x), x.size)
