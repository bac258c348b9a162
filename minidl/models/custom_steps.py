"""train_step / test_step of your own, as Keras 3's "Customizing what happens in fit()" guide:

    class CustomModel(minidl.Model):
        def train_step(self, data):
            x, y = data
            with minidl.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_weights)
            self.optimizer.apply(grads, self.trainable_weights)
            return self.compute_metrics(x, y, y_pred)

A Model subclass (functional, Sequential or subclassed) that defines train_step or test_step
gets CustomSteps as its first base (model.py's metaclass, subclassing.py's rule). fit and
evaluate then call it once per batch with `data`: (x, y), or (x, y, sample_weight) when
sample weights are given, as minidl.ops Tensors already on the model's backend (x a list for
several inputs). What it returns (a dict of numbers or Tensors, read only when the logs are)
becomes the batch's and the epoch's logs and the History. Without an override the model's
fused step runs, unchanged.

What a step can use: self(x, training=True) on Tensors (recorded on the GradientTape),
self.compute_loss (the compiled losses as ops, differentiable), self.compute_metrics (the
compiled loss and metrics, counted on the device as fit counts them), self.optimizer.apply,
and Metric objects of its own (minidl.metrics.Mean(...)) returned by an overridden
`metrics` property, which fit resets at every epoch, as Keras.
"""

from collections.abc import Mapping

import numpy as np

from .. import autodiff, ops
from .. import metrics as metrics_mod
from ..autodiff import Tensor
from ..gradient_tape import GradientTape
from ..string_tensors import StringTensor, is_string_array
from . import structure


def _number(value):
    if isinstance(value, Tensor) or hasattr(value, "as_tensor"):
        value = ops.convert_to_numpy(value)
    return float(value.reshape(-1)[0]) if hasattr(value, "reshape") else float(value)


class CompiledLogs(Mapping):
    """The compiled loss and metrics since the last reset, read from the device only when
    looked at (compute_metrics returns it, so a step moves nothing to the host)."""

    def __init__(self, model):
        self._model = model

    def _values(self):
        return self._model._compiled_metric_values()

    def __getitem__(self, key):
        return self._values()[key]

    def __iter__(self):
        return iter(self._model._compiled_metric_names())

    def __len__(self):
        return len(self._model._compiled_metric_names())


class CustomSteps:
    """Mixed in before a Model class: runs the train_step / test_step a subclass defines."""

    # ------------------------------------------------------------ defaults
    def train_step(self, data):
        """Keras's default step written with the tools above (a subclass's super().train_step
        runs it); fit uses the fused step instead when train_step is not overridden."""
        x, y, sample_weight = _unpack(data)
        with GradientTape(self.backend) as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        weights = self.trainable_weights
        self.optimizer.apply(tape.gradient(loss, weights), weights)
        if not getattr(self, "_heads", None):
            # compiled without a loss (compute_loss of the subclass's own): the running mean
            # of what it returned is the epoch's loss, as Keras's loss tracker
            tracker = getattr(self, "_loss_tracker", None)
            if tracker is None:
                tracker = self._loss_tracker = metrics_mod.Mean(name="loss")
            tracker.update_state(loss)
            return {"loss": tracker.result()}
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        x, y, sample_weight = _unpack(data)
        y_pred = self(x, training=False)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _overrides(self, name):
        return getattr(type(self), name) is not getattr(CustomSteps, name)

    def _own_train_step(self):
        """Whether fit runs train_step (a subclass's, or the default one calling a compute_loss
        of the subclass's, as Keras's distillation recipes override it) instead of the fused
        step."""
        return self._overrides("train_step") or self._overrides("compute_loss")

    def _loss_optional(self):
        return self._own_train_step() or super()._loss_optional()

    def compile(self, *args, **kwargs):
        """As the model's compile; with a step of your own, the losses read the outputs
        themselves (not the fused pre-activation of a softmax / sigmoid layer): y_pred is
        whatever the step computed."""
        super().compile(*args, **kwargs)
        if self.compiled and (self._own_train_step() or self._overrides("test_step")):
            for h in self._heads:
                if h.fused:
                    h.fused = h.loss.configure("linear")
            self._fused = []

    # ------------------------------------------------------------ tools
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of (y, y_pred) as a scalar Tensor (each output's loss times its
        loss_weight, summed; each sample's loss times its weight when sample_weight is given),
        differentiable inside a GradientTape."""
        ys, preds, weights = self._per_head(y, y_pred, sample_weight, "compute_loss")
        total = None
        for h, yt, yp, sw in zip(self._heads, ys, preds, weights):
            if sw is None:
                loss = h.loss(yt, yp)
            else:   # Keras: sum(weight * loss) / rows (or the plain sum)
                values = h.loss._values(ops.core.as_tensor(yt), yp)
                shape = ops.shape(values)
                values = values * ops.reshape(sw, shape[:1] + (1,) * (len(shape) - 1))
                loss = ops.sum(values) if h.loss.reduction == "sum" else ops.mean(values)
            loss = loss * h.weight if h.weight != 1.0 else loss
            total = loss if total is None else total + loss
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Count the compiled loss and metrics of this batch as fit does (on the device);
        returns their running values since the epoch began, as a mapping read only when
        looked at."""
        ys, preds, weights = self._per_head(y, y_pred, sample_weight, "compute_metrics")
        b = self.backend
        n = ops.shape(preds[0])[0]
        bufs = self._buffers_for(n, getattr(self, "_step_xs", None))   # (for unknown dims)
        for h, hb, yt in zip(self._heads, bufs, ys):
            yt = ops.core.as_tensor(yt)
            if yt.value is not hb["y"]:
                if yt.shape != tuple(b.shape(hb["y"])):
                    raise ValueError(f"{self.describe()}.compute_metrics: y has shape "
                                     f"{yt.shape}, the step's targets {tuple(b.shape(hb['y']))}")
                b.copy(hb["y"], ops.cast(yt, h.loss.target_dtype).value)
        sws = None if all(w is None for w in weights) else [
            ops.convert_to_numpy(w) for w in weights]
        self._loss_and_metrics(bufs, [None] * len(bufs), n,
                               [ops.core.as_tensor(p).value for p in preds], sws)
        self._counted = True
        return CompiledLogs(self)

    def _per_head(self, y, y_pred, sample_weight, what):
        heads = getattr(self, "_heads", None)
        if not heads:
            raise ValueError(f"{self.describe()}.{what}: compile the model with a loss (and "
                             "metrics) first")
        many = len(heads) > 1

        def listed(value, argument, allow_none=False):
            if value is None and allow_none:
                return [None] * len(heads)
            if isinstance(value, Mapping):
                value = [value[h.name] for h in heads]
            values = list(value) if many else [value]
            if len(values) != len(heads):
                raise ValueError(f"{self.describe()}.{what}: {argument} must hold "
                                 f"{len(heads)} values (one per output), got {len(values)}")
            return values
        return (listed(y, "y"), listed(y_pred, "y_pred"),
                listed(sample_weight, "sample_weight", allow_none=True))

    # ------------------------------------------------------------ the loops' hooks
    def _step_data(self, xs, ys, sws):
        """The batch as Tensors on the backend: x in the model's input buffers, y in each
        head's target buffer (compute_metrics then copies nothing)."""
        b = self.backend
        # a string input's batch stays on the host (string_tensors.py)
        x = [StringTensor(v) if is_string_array(v) else Tensor(v, b)
             for v in self._upload_inputs(xs)]
        n = len(xs[0])
        bufs = self._buffers_for(n, xs)
        y = []
        for hb, yt in zip(bufs, ys):
            b.copy_from_host(hb["y"], yt)
            y.append(Tensor(hb["y"], b))
        if not bufs:    # compiled without a loss: y as given, uploaded
            y = [ops.convert_to_tensor(yt, backend=b) for yt in ys]
        data = (x if len(x) > 1 else x[0], y if len(y) > 1 else y[0])
        if sws is not None:
            w = [ops.convert_to_tensor(s, backend=b) for s in sws]
            data += (w if len(w) > 1 else w[0],)
        return data

    def _validate_y(self, y, n, argument="y", x_argument="x", xs=None):
        if getattr(self, "_heads", None):
            return super()._validate_y(y, n, argument, x_argument, xs)
        # compiled without a loss: the step's own code reads y, as float32 arrays; y need not
        # match the outputs (a step of several outputs may train them on one target, as Keras
        # hands y to train_step as it is)
        names = self.graph.output_names
        if isinstance(y, np.ndarray) and len(names) > 1:
            ys = [np.ascontiguousarray(y, dtype=np.float32)]
        else:
            ys = [np.ascontiguousarray(yi, dtype=np.float32)
                  for yi in structure.flatten_data(y, names, argument, self.describe())]
        for yi in ys:
            if yi.ndim == 0 or len(yi) != n:
                raise ValueError(f"{x_argument} and {argument} must have the same length, got "
                                 f"{n} samples and {yi.shape} targets")
        return ys

    def _run_step(self, step, xs, ys, sws):
        self._counted, self._step_xs = False, xs
        with autodiff.call_scope():
            logs = step(self._step_data(xs, ys, sws))
        if logs is None:
            logs = {}
        if not isinstance(logs, Mapping):
            raise TypeError(f"{self.describe()}.{step.__name__} must return a dict of metric "
                            f"values, got {type(logs).__name__}")
        self._step_logs = logs
        if not self._counted:
            self._seen += len(xs[0])

    def _train_step(self, xs, ys, sws=None):
        if not self._own_train_step():
            return super()._train_step(xs, ys, sws)
        self._seed_step()
        self._run_step(self.train_step, xs, ys, sws)

    def _test_step(self, xs, ys, sws=None):
        if not self._overrides("test_step"):
            return super()._test_step(xs, ys, sws)
        self._run_step(self.test_step, xs, ys, sws)

    def _compiled_metric_values(self):
        return super()._metric_values()

    def _compiled_metric_names(self):
        return super().metrics_names

    def _metric_values(self):
        logs = getattr(self, "_step_logs", None)
        if logs is None:
            return super()._metric_values()
        if isinstance(logs, CompiledLogs):
            return super()._metric_values()
        return {k: _number(v) for k, v in logs.items()}

    @property
    def metrics_names(self):
        logs = getattr(self, "_step_logs", None)
        return super().metrics_names if logs is None else list(logs)

    def reset_metrics(self):
        super().reset_metrics()
        self._step_logs = None
        if getattr(self, "_loss_tracker", None) is not None:
            self._loss_tracker.reset_state()
        for m in self.metrics:
            if hasattr(m, "reset_state"):
                m.reset_state()


def _unpack(data):
    """(x, y, sample_weight) from a step's data (Keras's unpack_x_y_sample_weight)."""
    if isinstance(data, (list, tuple)) and len(data) in (2, 3):
        return tuple(data) + (None,) * (3 - len(data))
    return data, None, None
