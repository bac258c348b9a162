"""The training-side ops of the opencl backend: losses, reductions and metrics (the optimizer
updates are in optimizers.py).

A mixin of OpenCLBackend (backend.py), which provides the helpers used here:
_run1d, _kernel, _scratch_tensor, _check, _check_same_size, axpby and rt.
Every result stays on the device: per-sample losses (N,), counts and sums (1,).
"""

import math

from ..checks import is_sparse

REDUCE_PARTS = 256       # at most this many partial sums in the first pass of a whole-tensor reduction
REDUCE_MIN_CHUNK = 1024  # elements per partial sum at the least
COLUMN_PARTS = 64        # row chunks of the first pass of a per-column reduction


class TrainingOps:
    """Losses, metrics and reductions of OpenCLBackend."""

    # ----------------------------------------------------------- losses
    def _check_targets(self, op, pred, targets):
        rows = pred.size // pred.shape[-1]
        expected = (rows,) if is_sparse(targets) else pred.shape
        if targets.size != math.prod(expected):
            raise ValueError(f"opencl {op}: targets {targets.shape} ({targets.dtype}) do not match "
                             f"predictions {pred.shape}")
        return rows, pred.shape[-1]

    def softmax_cross_entropy_forward(self, probs, loss, logits, targets):
        rows, k = self._check_targets("softmax_cross_entropy_forward", logits, targets)
        self._check("softmax_cross_entropy_forward", "loss", loss, (rows,))
        name = ("softmax_cross_entropy_forward_sparse" if is_sparse(targets)
                else "softmax_cross_entropy_forward_dense")
        if self.gpu:
            self.row_groups(name + "_rows", rows, k, probs, loss, logits, targets)
            return
        self._run1d("loss.cl", name, rows, probs, loss, logits, targets, rows, k)

    def softmax_cross_entropy_backward(self, dlogits, probs, targets, scale):
        rows, k = self._check_targets("softmax_cross_entropy_backward", probs, targets)
        if is_sparse(targets):
            self._run1d("loss.cl", "softmax_cross_entropy_backward_sparse", probs.size, dlogits,
                        probs, targets, float(scale), k, probs.size)
        else:
            self.axpby(dlogits, scale, probs, -scale, targets)

    def sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        rows, k = self._check_targets("sigmoid_cross_entropy_forward", logits, targets)
        self._run1d("loss.cl", "sigmoid_cross_entropy_forward", rows, probs, loss, logits, targets, rows, k)

    def sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        k = probs.shape[-1]
        self.axpby(dlogits, scale / k, probs, -scale / k, targets)

    def cross_entropy_forward(self, loss, probs, targets, binary):
        rows, k = self._check_targets("cross_entropy_forward", probs, targets)
        if binary:
            name = "cross_entropy_forward_binary"
        elif is_sparse(targets):
            name = "cross_entropy_forward_sparse"
        else:
            name = "cross_entropy_forward_dense"
        self._run1d("loss.cl", name, rows, loss, probs, targets, rows, k)

    def cross_entropy_backward(self, dprobs, probs, targets, binary, scale):
        _, k = self._check_targets("cross_entropy_backward", probs, targets)
        n = probs.size
        if binary:
            self._run1d("loss.cl", "cross_entropy_backward_binary", n, dprobs, probs, targets,
                        float(scale) / k, n)
        elif is_sparse(targets):
            self._run1d("loss.cl", "cross_entropy_backward_sparse", n, dprobs, probs, targets,
                        float(scale), k, n)
        else:
            self._run1d("loss.cl", "cross_entropy_backward_dense", n, dprobs, probs, targets,
                        float(scale), n)

    def mean_squared_error_forward(self, loss, pred, targets):
        self._check_same_size("mean_squared_error_forward", ("pred", "targets"), (pred, targets))
        k = pred.shape[-1]
        self._run1d("loss.cl", "mean_squared_error_forward", pred.size // k, loss, pred, targets,
                    pred.size // k, k)

    def mean_squared_error_backward(self, dpred, pred, targets, scale):
        k = pred.shape[-1]
        self.axpby(dpred, 2.0 * scale / k, pred, -2.0 * scale / k, targets)

    # ------------------------------------------------ reductions/metrics
    def _scalar_reduce(self, out, partial_kernel, finish_kernel, x_args, n, finish_args):
        """Two-pass reduction of n items: partial_kernel(partial, *x_args, n, parts, chunk) sums
        contiguous chunks, then finish_kernel(out, partial, parts, *finish_args) adds them up.
        The GPU profile runs the cooperative twins of both (group_ops.GroupOps.whole_reduce)."""
        if self.gpu:
            self.whole_reduce(out, partial_kernel, finish_kernel, x_args, n, finish_args)
            return
        chunk = max(REDUCE_MIN_CHUNK, -(-n // REDUCE_PARTS))
        parts = max(1, -(-n // chunk))
        partial = self._scratch_tensor("reduce_partial", (parts,))
        self._run1d("reduce.cl", partial_kernel, parts, partial, *x_args, n, parts, chunk)
        self.rt.launch(self._kernel("reduce.cl", finish_kernel), (1,), None, out, partial, parts,
                       *finish_args)

    def sum(self, out, x, accumulate=False):
        self._check("sum", "out", out, (1,))
        self._scalar_reduce(out, "sum_partial", "sum_finish", (x,), x.size, (1.0, int(accumulate)))

    def _count_rows(self, out, flags, accumulate, weights=None, op=None):
        """out = the sum of the 0/1 row flags, each times its weight when weights are given."""
        if weights is not None:
            self._check(op, "weights", weights, flags.shape)
            self.multiply(flags, flags, weights)
        self._scalar_reduce(out, "sum_partial", "sum_finish", (flags,), flags.size,
                            (1.0, int(accumulate)))

    def categorical_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        self._check("categorical_accuracy", "out", out, (1,))
        rows, k = self._check_targets("categorical_accuracy", pred, targets)
        flags = self._scratch_tensor("row_flags", (rows,))
        name = "categorical_accuracy_sparse" if is_sparse(targets) else "categorical_accuracy_dense"
        self._run1d("reduce.cl", name, rows, flags, pred, targets, rows, k)
        self._count_rows(out, flags, accumulate, weights, "categorical_accuracy")

    def binary_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        self._check("binary_accuracy", "out", out, (1,))
        self._check_same_size("binary_accuracy", ("pred", "targets"), (pred, targets))
        if weights is not None:
            self._check("binary_accuracy", "weights", weights, pred.shape)
        # unweighted, pred stands in for the weights buffer the kernel does not read
        self._scalar_reduce(out, "binary_accuracy_partial", "sum_finish",
                     (pred, targets, pred if weights is None else weights,
                      int(weights is not None)), pred.size, (1.0, int(accumulate)))

    def top_k_accuracy(self, out, pred, targets, k, accumulate=False, weights=None):
        self._check("top_k_accuracy", "out", out, (1,))
        rows, classes = self._check_targets("top_k_accuracy", pred, targets)
        flags = self._scratch_tensor("row_flags", (rows,))
        name = "top_k_accuracy_sparse" if is_sparse(targets) else "top_k_accuracy_dense"
        self._run1d("reduce.cl", name, rows, flags, pred, targets, rows, classes, int(k))
        self._count_rows(out, flags, accumulate, weights, "top_k_accuracy")

    def all_finite(self, out, x):
        self._check("all_finite", "out", out, (1,))
        self._scalar_reduce(out, "nonfinite_partial", "all_finite_finish", (x,), x.size, ())
