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
evaluate then call it once per batch with `data` as Keras 3 does: x, (x, y) or (x, y,
sample_weight) nested as given, unchecked against the model's inputs and outputs, as
minidl.ops Tensors on the model's backend (step_data.py). What it returns (a dict of numbers
or Tensors, read only when the logs are) becomes the batch's and the epoch's logs and the
History. Without an override the model's fused step runs, unchanged.

A Model subclass without Input and without call whose train_step uses the models it holds
(Keras's VAE recipe) has no graph at all: compile takes its optimizer (and metrics), and fit
runs the step from the first batch, the layers it calls being built already.

What a step can use: self(x, training=True) on Tensors (recorded on the GradientTape),
self.compute_loss (the compiled losses as ops, differentiable), self.compute_metrics (the
compiled loss and metrics, counted on the device as fit counts them), self.optimizer.apply,
and Metric objects of its own (minidl.metrics.Mean(...)) returned by an overridden
`metrics` property, which fit resets at every epoch, as Keras.
"""

import math
from collections.abc import Mapping

import numpy as np

from .. import autodiff, ops
from .. import metrics as metrics_mod
from .. import optimizers as optimizers_mod
from ..autodiff import Tensor
from ..backends import get_backend
from ..gradient_tape import GradientTape
from . import structure, tracking
from .step_data import as_step_data, first_rows
from .step_metrics import StepMetrics


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

    def _own_step(self, step):
        return self._own_train_step() if step == "train_step" else self._overrides(step)

    def _loss_optional(self):
        return self._own_train_step() or super()._loss_optional()

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, *args, **kwargs):
        """As the model's compile; with a step of your own, the losses read the outputs
        themselves (not the fused pre-activation of a softmax / sigmoid layer): y_pred is
        whatever the step computed. Without a loss, compute_metrics updates `metrics`
        (step_metrics.py); a model without Input and call compiles without a graph."""
        self._step_metrics = StepMetrics(self, metrics if loss is None else None)
        if self._steps_only():
            self._compile_steps_only(optimizer, loss, args, kwargs)
            return
        super().compile(optimizer, loss, metrics, *args, **kwargs)
        if self.compiled and (self._own_train_step() or self._overrides("test_step")):
            for h in self._heads:
                if h.fused:
                    h.fused = h.loss.configure("linear")
            self._fused = []

    def _scored_outputs(self, loss, metrics):
        """With a step of your own, one loss (and a flat list of metrics) for a model of
        several outputs scores the one y_pred the step hands compute_loss / compute_metrics,
        as Keras builds its compiled loss from the y and y_pred it is given: minidl takes
        the first output's shape for it."""
        graph = super()._scored_outputs(loss, metrics)
        nested = isinstance(loss, (list, tuple, Mapping)) or isinstance(metrics, Mapping) or (
            isinstance(metrics, (list, tuple)) and any(isinstance(m, (list, tuple)) for m in metrics))
        if len(graph.outputs) > 1 and not nested and (self._own_train_step()
                                                      or self._overrides("test_step")):
            return _FirstOutput(graph)
        return graph

    # ------------------------------------------------------------ without a graph
    def _steps_only(self):
        """Whether this is a model without Input and call (nothing can build a graph: a
        Sequential or subclassed model builds from its first data) whose steps do it all."""
        return self.graph is None and not hasattr(self, "_build_from_data")

    def _compile_steps_only(self, optimizer, loss, args, kwargs):
        owner = f"{self.describe()}.compile"
        if loss is not None or any(a is not None for a in args[:2]) or \
                kwargs.get("loss_weights") or kwargs.get("weighted_metrics"):
            raise ValueError(f"{owner}: the model has no Input and no call(), so no outputs for "
                             "a compiled loss: compute the loss in train_step and compile with "
                             "only an optimizer (and metrics)")
        if not self._own_train_step():
            raise ValueError(f"{self.describe()} has no layers with a known input shape yet; "
                             "start it with layers.Input(shape) before calling compile")
        items = self.layers
        backends = [getattr(item, "backend", None) for item in items]
        self._steps_backend = next((b for b in backends if b is not None), None) or get_backend()
        self.optimizer = optimizers_mod.get(optimizer)
        self.loss, self._heads, self._metrics, self._fused = None, [], [], []
        self._trained_weights = self.trainable_weights
        self._penalties, self._penalized = ([], [], []), False
        self._seeded_layers = [(i, l) for i, l in enumerate(tracking.leaf_layers(items))
                               if l.needs_step_seed]
        self._dynamic_heads, self._step_views = False, None
        self._buffers.reset(self._steps_backend)
        self._counters, self._eval_counters = self._new_counters(), None
        self._seen, self._head_rows = 0, []
        self.compiled = True

    @property
    def backend(self):
        if self.graph is None:
            return getattr(self, "_steps_backend", None)
        return self.graph.backend

    @property
    def layers(self):
        """Without a graph: the layers and models set as attributes (Keras's tracking)."""
        if self._steps_only():
            return tracking.tracked_items(self)
        return super().layers

    def _require_compiled(self, what):
        if not self._steps_only():
            return super()._require_compiled(what)
        if not self.compiled:
            raise RuntimeError(f"{self.describe()}: call compile(optimizer) before {what}()")

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
        if not getattr(self, "_heads", None):   # compiled without a loss
            return self._step_metrics.update(y, y_pred, sample_weight)
        ys, preds, weights = self._per_head(y, y_pred, sample_weight, "compute_metrics")
        b = self.backend
        n = ops.shape(preds[0])[0]
        bufs = self._buffers_for(n, getattr(self, "_step_xs", None))   # (for unknown dims)
        for h, hb, yt in zip(self._heads, bufs, ys):
            yt = ops.convert_to_tensor(yt, backend=b) if not ops.is_tensor(yt) else yt
            yt = ops.core.as_tensor(yt)
            want = tuple(b.shape(hb["y"]))
            if yt.shape != want:   # labels (N,) for targets (N, 1), or the other way round
                if math.prod(yt.shape) != math.prod(want):
                    raise ValueError(f"{self.describe()}.compute_metrics: y has shape "
                                     f"{yt.shape}, the loss {h.loss.name!r} takes targets of "
                                     f"shape {want}")
                yt = ops.reshape(yt, want)
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
    def _input_arrays(self, x):
        """A batch's x as one array per model input (for outputs of unknown dims), or None
        when it is not laid out as the inputs are (the step reads it its own way)."""
        if self.graph is None:
            return None
        try:
            xs = structure.flatten_data(x, self.graph.input_names, "x", self.describe())
        except ValueError:
            return None
        return xs if all(isinstance(a, np.ndarray) for a in xs) else None

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

    def _run_step(self, step, x, y, sample_weight):
        """Run `step` on a batch (x, y, sample_weight as the data gave them, step_data.py)."""
        self._counted, self._step_xs = False, self._input_arrays(x)
        with autodiff.call_scope():
            logs = step(as_step_data(x, y, sample_weight, self.backend))
        if logs is None:
            logs = {}
        if not isinstance(logs, Mapping):
            raise TypeError(f"{self.describe()}.{step.__name__} must return a dict of metric "
                            f"values, got {type(logs).__name__}")
        self._step_logs = logs
        if not self._counted:
            self._seen += first_rows(x)

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
        if getattr(self, "_step_metrics", None) is not None:
            self._step_metrics.reset()
        if getattr(self, "_loss_tracker", None) is not None:
            self._loss_tracker.reset_state()
        for m in self.metrics:
            if hasattr(m, "reset_state"):
                m.reset_state()


class _FirstOutput:
    """A graph seen through its first output only (what make_heads and Head read)."""

    def __init__(self, graph):
        self._graph = graph
        self.output_names = graph.output_names[:1]
        self.output_shapes = graph.output_shapes[:1]
        self.outputs = graph.outputs[:1]

    def fusable(self, index):
        return self._graph.fusable(index)

    def per_output(self, value, argument):
        """One output, scored by a loss that is not nested (see _scored_outputs): as given."""
        return value


def _unpack(data):
    """(x, y, sample_weight) from a step's data (Keras's unpack_x_y_sample_weight)."""
    if isinstance(data, (list, tuple)) and len(data) in (2, 3):
        return tuple(data) + (None,) * (3 - len(data))
    return data, None, None
