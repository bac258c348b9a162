"""The metrics section of the contract: whole-tensor reductions into (1,) results (sum,
all_finite) and the accuracy counts of compiled metrics. The public ops check every shape and
scalar once; a backend implements the underscore names (numpy_ops/metrics.py, cpu/metrics.py,
opencl/metrics.py). Results stay (1,) tensors so that they can stay on a device until
somebody asks."""

from .checks import optional_shape, same_shape
from .losses import class_targets, scores_2d


def _count(op, out, pred, targets, weights):
    """The shared checks of the categorical counts; True when the targets are sparse."""
    same_shape(op, "out", out, (1,))
    n, _ = scores_2d(op, "pred", pred)
    sparse = class_targets(op, targets, pred)
    optional_shape(op, "weights", weights, (n,))
    return sparse


class MetricsSection:
    """The contract's reductions and accuracy counts; a backend implements the underscore names.

    The accuracy counts take weights=None, or one weight per row (N,) (per element, shaped as
    pred, for binary_accuracy): out then sums the weights of the correct ones (Keras's
    weighted_metrics; the model divides by the sum of the weights). A row holding a NaN never
    counts as correct."""

    def sum(self, out, x, accumulate=False):
        """out (1,) = sum of every element of x (plus out when accumulate)."""
        same_shape("sum", "out", out, (1,))
        self._sum(out, x, bool(accumulate))

    def categorical_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        """out (1,) = number of rows whose argmax of pred (N, K) equals the target class
        (sparse int32 (N,) or the argmax of dense (N, K)); ties go to the lowest index."""
        sparse = _count("categorical_accuracy", out, pred, targets, weights)
        self._categorical_accuracy(out, pred, targets, bool(accumulate), weights, sparse)

    def binary_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        """out (1,) = number of elements where (pred > 0.5) == (targets > 0.5)."""
        op = "binary_accuracy"
        same_shape(op, "out", out, (1,))
        same_shape(op, "targets", targets, pred.shape)
        optional_shape(op, "weights", weights, pred.shape)
        self._binary_accuracy(out, pred, targets, bool(accumulate), weights)

    def top_k_accuracy(self, out, pred, targets, k, accumulate=False, weights=None):
        """out (1,) = number of rows whose target class is among the k largest of pred
        (a target ties in when fewer than k scores are strictly larger)."""
        op = "top_k_accuracy"
        if isinstance(k, bool) or int(k) != k or k < 1:
            raise ValueError(f"{op}: k must be a positive int, got {k!r}")
        sparse = _count(op, out, pred, targets, weights)
        self._top_k_accuracy(out, pred, targets, int(k), bool(accumulate), weights, sparse)

    def all_finite(self, out, x):
        """out (1,) = 1.0 if every element of x is finite, else 0.0."""
        same_shape("all_finite", "out", out, (1,))
        self._all_finite(out, x)
