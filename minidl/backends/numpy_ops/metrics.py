"""The metrics section on the numpy backend: whole-tensor reductions and the accuracy counts,
sums in float64. The contract (minidl/backends/contract/metrics.py) checked every shape and
says whether the targets are sparse."""

import numpy as np

from .losses import check_class_range


def _store(out, value, accumulate):
    out[0] = out[0] + value if accumulate else value


def _target_classes(op, pred, targets, sparse):
    """The target class of each row: sparse indices as given, dense targets by argmax."""
    if sparse:
        check_class_range(op, targets, pred.shape[1])
        return targets
    return targets.argmax(axis=-1)


def _store_hits(out, hits, weights, accumulate):
    """out = the number of hits (bool array), or the sum of their weights."""
    if weights is None:
        _store(out, np.count_nonzero(hits), accumulate)
    else:
        _store(out, weights.sum(where=hits, dtype=np.float64), accumulate)


class NumpyMetricOps:
    """sum, all_finite and the accuracy counts of NumpyBackend."""

    def _sum(self, out, x, accumulate):
        _store(out, x.sum(dtype=np.float64), accumulate)

    def _categorical_accuracy(self, out, pred, targets, accumulate, weights, sparse):
        classes = _target_classes("categorical_accuracy", pred, targets, sparse)
        # numpy's argmax returns the first maximum: ties go to the lowest index. A row holding
        # a NaN never counts as correct (argmax would pick the NaN and hide the divergence).
        valid = ~np.isnan(pred).any(axis=-1)
        _store_hits(out, (pred.argmax(axis=-1) == classes) & valid, weights, accumulate)

    def _binary_accuracy(self, out, pred, targets, accumulate, weights):
        hits = ((pred > 0.5) == (targets > 0.5)) & ~np.isnan(pred)
        _store_hits(out, hits, weights, accumulate)

    def _top_k_accuracy(self, out, pred, targets, k, accumulate, weights, sparse):
        classes = _target_classes("top_k_accuracy", pred, targets, sparse)
        target_scores = pred[np.arange(pred.shape[0]), classes]
        strictly_larger = (pred > target_scores[:, None]).sum(axis=-1)
        valid = ~np.isnan(pred).any(axis=-1)   # a row holding a NaN never counts as correct
        _store_hits(out, (strictly_larger < k) & valid, weights, accumulate)

    def _all_finite(self, out, x):
        out[0] = 1.0 if np.isfinite(x).all() else 0.0
