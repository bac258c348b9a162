"""compile(optimizer, metrics=[...]) without a loss, for a train_step / test_step of your own
(Keras's knowledge-distillation recipe): the metrics live here and compute_metrics(x, y,
y_pred) updates them, as Keras's CompileMetrics.

A metric named "accuracy" (or "acc") becomes binary, sparse categorical or categorical
accuracy from the shapes of the first y and y_pred it sees, as Keras's get_metric; other
names, functions and Metric objects resolve as metrics.get does. The values returned are
Keras's: "loss" (the running mean of what the default train_step computed, 0 when nothing
did) and each metric's result, by its name.
"""

from collections.abc import Mapping

from .. import autodiff, tree
from .. import metrics as metrics_mod
from ..metrics.classes import (BinaryAccuracy, CategoricalAccuracy, MeanMetricWrapper, Metric,
                               SparseCategoricalAccuracy)


def _accuracy(name, y_true, y_pred):
    """Keras's choice for "accuracy": binary for one output unit, sparse categorical for
    integer labels (a lower rank, or a last axis of 1 against several classes)."""
    t, p = tuple(y_true.shape), tuple(y_pred.shape)
    if p[-1] == 1:
        return BinaryAccuracy(name=name)
    if len(t) < len(p) or (t[-1] == 1 and p[-1] > 1):
        return SparseCategoricalAccuracy(name=name)
    return CategoricalAccuracy(name=name)


def _resolve(identifier, y_true, y_pred, owner):
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        return _accuracy(identifier, y_true, y_pred)
    found = metrics_mod.get(identifier)
    if isinstance(found, type) and issubclass(found, Metric):
        found = found()
    if not isinstance(found, Metric):
        if not callable(found):
            raise TypeError(f"{owner}: metrics: cannot use {identifier!r} as a metric")
        found = MeanMetricWrapper(found, name=getattr(found, "__name__", None))
    if isinstance(identifier, str):
        found.name = identifier
    return found


class StepMetrics:
    """The metrics compile was given without a loss; resolved at the first update."""

    def __init__(self, model, metrics):
        owner = f"{model.describe()}.compile"
        if metrics is None:
            metrics = []
        if isinstance(metrics, (str, Mapping)) or not isinstance(metrics, (list, tuple)):
            raise TypeError(f"{owner}: without a loss, metrics must be a list of metrics (names, "
                            f"functions or Metric objects), got {metrics!r}")
        self._model, self._given, self.metrics = model, list(metrics), None

    def update(self, y, y_pred, sample_weight):
        """Count one batch; the running values since the last reset, by name."""
        owner = f"{self._model.describe()}.compute_metrics"
        if self._given and (tree.is_nested(y) or tree.is_nested(y_pred)):
            raise ValueError(f"{owner}: the metrics compiled without a loss take one y and one "
                             "y_pred, got nested ones; compute each metric in the step instead")
        if self.metrics is None:
            self.metrics = [_resolve(m, y, y_pred, owner) for m in self._given]
        backend = self._model.backend
        with autodiff.on_backend(backend), autodiff.recording(None):   # counts, not gradients
            for m in self.metrics:
                m.attach(backend)
                m.update_state(y, y_pred, sample_weight=sample_weight)
        return self.results()

    def results(self):
        tracker = getattr(self._model, "_loss_tracker", None)
        logs = {"loss": 0.0 if tracker is None else tracker.result()}
        for m in self.metrics or []:
            logs[m.name] = m.result()
        return logs

    def reset(self):
        for m in self.metrics or []:
            m.reset_state()
