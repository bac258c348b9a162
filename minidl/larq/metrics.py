"""larq's training metrics (larq.metrics): FlipRatio, the mean fraction of a quantized tensor's
values that changed from one update to the next (how many binary weights a training step
flipped). A quantizer made with metrics=["flip_ratio"] (or inside context.metrics_scope) owns
one named "flip_ratio/<quantizer name>"; as a Metric attribute of a layer it is one of the
model's metrics (models/layer_metrics.py), so fit's logs show it, and the larq layers update it
with the quantized kernel at every training step. State stays on the backend (minidl.ops)."""

from .. import ops
from ..autodiff import Tensor
from ..metrics.classes import Metric, MetricVariable

AVAILABLE = ("flip_ratio",)


def check_names(metrics, owner):
    """The list of larq metric names `metrics` (None: none), or ValueError naming `owner`."""
    if metrics is None:
        return []
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise TypeError(f"{owner}: metrics must be a list of metric names, got {metrics!r}")
    unknown = [m for m in metrics if m not in AVAILABLE]
    if unknown:
        raise ValueError(f"{owner}: unknown training metric(s) {unknown}; available: {list(AVAILABLE)}")
    return list(metrics)


class FlipRatio(Metric):
    """FlipRatio(values_dtype="int8", name="flip_ratio", dtype=None), larq's: update_state(values)
    counts the values that differ from the previous update's (the first update only records
    them); result() is the mean of those fractions over the updates since the last reset
    (0 before two updates). reset_state() keeps the previous values, as larq's."""

    def __init__(self, values_dtype="int8", name="flip_ratio", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.values_dtype = values_dtype
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")
        self._previous = None

    def update_state(self, values, sample_weight=None):
        values = values if ops.is_tensor(values) else ops.convert_to_tensor(values)
        shape = tuple(ops.shape(values))
        if self._previous is None or self._previous.shape != shape:
            self._previous = MetricVariable("previous_values", shape, "zeros", values.backend)
        previous = Tensor(self._previous.value, self._previous.backend)
        unchanged = ops.sum(ops.cast(ops.equal(previous, values), "float32"))
        size = float(max(1, int(ops.size(values))))
        # the first update (count 0) adds nothing: there is nothing to compare with yet
        self.total.assign_add((1.0 - unchanged / size) * ops.sign(Tensor(self.count.value, self.count.backend)))
        self.count.assign_add(1.0)
        self._previous.assign(values)

    def result(self):
        count = Tensor(self.count.value, self.count.backend) - 1.0
        total = Tensor(self.total.value, self.total.backend)
        return ops.where(ops.greater(count, 0.0), total / ops.maximum(count, 1.0), 0.0)

    def reset_state(self):
        for var in (self.total, self.count):
            var.backend.fill(var.value, 0.0)

    def get_config(self):
        return {"name": self.name, "values_dtype": self.values_dtype}


__all__ = ["FlipRatio"]
