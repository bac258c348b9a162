"""larq.context's metrics_scope: the training metrics given to the kernel quantizers made
inside it (quantizers.get_kernel_quantizer), as larq's."""

import contextlib

from .metrics import check_names

_training_metrics = set()


@contextlib.contextmanager
def metrics_scope(metrics=()):
    """Within the block, kernel quantizers made without metrics of their own get these (only
    "flip_ratio" exists)."""
    names = check_names(list(metrics), "metrics_scope")
    backup = set(_training_metrics)
    _training_metrics.update(names)
    try:
        yield _training_metrics
    finally:
        _training_metrics.clear()
        _training_metrics.update(backup)


def get_training_metrics():
    """The live set of training metrics of the current scope (larq's)."""
    return _training_metrics


__all__ = ["get_training_metrics", "metrics_scope"]
