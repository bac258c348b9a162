"""The metrics section on the opencl backend: whole-tensor reductions (sum, all_finite, and the
two-pass _reduce that the optimizers' and regularizers' norms use too) and the accuracy counts.
The contract (minidl/backends/contract/metrics.py) checked every shape and k and says whether
the targets are sparse.

A mixin of OpenCLBackend (backend.py), which provides the helpers used here:
_run1d, _kernel, _scratch_tensor, multiply and rt. Every result stays on the device (1,).
"""


class MetricOps:
    """Reductions and metrics of OpenCLBackend."""

    def _scalar_reduce(self, out, partial_kernel, finish_kernel, x_args, n, finish_args):
        """Two-pass reduction of n items: partial_kernel(partial, *x_args, n, parts, chunk) sums
        contiguous chunks, then finish_kernel(out, partial, parts, *finish_args) adds them up.
        The kernel profile runs them (profiles.py; the GPU's are cooperative twins)."""
        self.profile.reduce(out, partial_kernel, finish_kernel, x_args, n, finish_args)

    def _sum(self, out, x, accumulate):
        self._scalar_reduce(out, "sum_partial", "sum_finish", (x,), x.size, (1.0, int(accumulate)))

    def _count_rows(self, out, flags, accumulate, weights=None):
        """out = the sum of the 0/1 row flags, each times its weight when weights are given."""
        if weights is not None:
            self.multiply(flags, flags, weights)
        self._scalar_reduce(out, "sum_partial", "sum_finish", (flags,), flags.size, (1.0, int(accumulate)))

    def _categorical_accuracy(self, out, pred, targets, accumulate, weights, sparse):
        rows, k = pred.shape
        flags = self._scratch_tensor("row_flags", (rows,))
        name = "categorical_accuracy_sparse" if sparse else "categorical_accuracy_dense"
        self._run1d("reduce.cl", name, rows, flags, pred, targets, rows, k)
        self._count_rows(out, flags, accumulate, weights)

    def _binary_accuracy(self, out, pred, targets, accumulate, weights):
        # unweighted, pred stands in for the weights buffer the kernel does not read
        self._scalar_reduce(out, "binary_accuracy_partial", "sum_finish",
                     (pred, targets, pred if weights is None else weights,
                      int(weights is not None)), pred.size, (1.0, int(accumulate)))

    def _top_k_accuracy(self, out, pred, targets, k, accumulate, weights, sparse):
        rows, classes = pred.shape
        flags = self._scratch_tensor("row_flags", (rows,))
        name = "top_k_accuracy_sparse" if sparse else "top_k_accuracy_dense"
        self._run1d("reduce.cl", name, rows, flags, pred, targets, rows, classes, k)
        self._count_rows(out, flags, accumulate, weights)

    def _all_finite(self, out, x):
        self._scalar_reduce(out, "nonfinite_partial", "all_finite_finish", (x,), x.size, ())
