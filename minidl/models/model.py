"""The functional Model: compile, the training / test / predict steps and their buffers.

The loops (fit, evaluate, predict) live in training.py, saving in saving.py and the
summary table in summary.py; this file holds what runs every step.
"""

import numpy as np

from .. import losses as losses_mod
from .. import metrics as metrics_mod
from .. import optimizers as optimizers_mod
from .. import random as mrandom
from ..layers.base import format_shape
from .graph import Graph
from .keras_api import KerasModelAPI, check_compile_extras
from .training import TrainingLoops


def _mix_seed(*values):
    """A 62-bit seed from integers (splitmix64 steps), for per-step dropout seeds."""
    h = 0x9E3779B97F4A7C15
    for v in values:
        h = (h ^ (int(v) & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
    return h >> 2


class Model(KerasModelAPI, TrainingLoops):
    """A model from an input tensor to an output tensor: Model(inputs, outputs)."""

    def __init__(self, inputs=None, outputs=None, name=None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"Model: name must be a non-empty string, got {name!r}")
        self.name = name or type(self).__name__.lower()
        self.graph = None
        self.optimizer = None
        self.loss = None
        self.metrics = []
        self.compiled = False
        self.stop_training = False
        self.trained_epochs = 0       # epochs completed (saved with the model)
        self.fit_state = {}           # data-order state saved in checkpoints (see training.py)
        self.seed = mrandom.new_seed()
        self._step_buffers = {}
        if inputs is not None or outputs is not None:
            self._set_graph(inputs, outputs)

    def describe(self):
        return f"{type(self).__name__} {self.name!r}"

    def _set_graph(self, inputs, outputs):
        self.graph = Graph(inputs, outputs, self.describe())
        self.graph.attach()

    def _require_built(self, what):
        if self.graph is None:
            raise ValueError(f"{self.describe()} has no layers with a known input shape yet; "
                             f"start it with layers.Input(shape) before calling {what}")

    # ----------------------------------------------------------- access
    @property
    def backend(self):
        return self.graph.backend if self.graph else None

    @property
    def layers(self):
        return list(self.graph.layers[1:]) if self.graph else []

    @property
    def input_shape(self):
        return (None,) + self.graph.input_shape

    @property
    def output_shape(self):
        return (None,) + self.graph.output_shape

    def count_params(self):
        return sum(layer.count_params() for layer in self.layers)

    def get_weights(self):
        """Every weight as a numpy array, layer by layer in Keras order."""
        self._require_built("get_weights")
        return [w for layer in self.layers for w in layer.get_weights()]

    def set_weights(self, weights):
        self._require_built("set_weights")
        if isinstance(weights, np.ndarray) or not isinstance(weights, (list, tuple)):
            raise TypeError(f"{self.describe()}.set_weights: weights must be a list of arrays "
                            f"(as get_weights returns), got {type(weights).__name__}")
        weights = list(weights)
        expected = sum(len(layer.weights) for layer in self.layers)
        if len(weights) != expected:
            raise ValueError(f"{self.describe()} has {expected} weight arrays, got {len(weights)}")
        i = 0
        for layer in self.layers:
            n = len(layer.weights)
            layer.set_weights(weights[i:i + n])
            i += n

    def summary(self, print_fn=print):
        from .summary import summary_lines
        self._require_built("summary")
        for line in summary_lines(self):
            print_fn(line)

    # ----------------------------------------------------------- compile
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, run_eagerly=False,
                steps_per_execution=1, jit_compile="auto", auto_scale_loss=True):
        """Configure training: an optimizer, a loss and metrics (names or objects). The
        Keras-only arguments after metrics are checked and have no effect (keras_api.py)."""
        check_compile_extras(f"{self.describe()}.compile", run_eagerly, steps_per_execution,
                             jit_compile, auto_scale_loss)
        self._require_built("compile")
        if loss is None:
            raise ValueError(f"{self.describe()}.compile: a loss is required, e.g. "
                             "loss='sparse_categorical_crossentropy'")
        # Everything is checked before the model changes: a failed compile leaves the
        # previous configuration in place (and usable).
        optimizer = optimizers_mod.get(optimizer)
        loss = losses_mod.get(loss)
        out_layer = self.graph.output_layer
        fused = loss.configure(getattr(out_layer, "activation", "linear"))
        if metrics is None:
            metrics = []
        if isinstance(metrics, str) or not isinstance(metrics, (list, tuple)):
            raise TypeError(f"{self.describe()}.compile: metrics must be a list of names, "
                            f"got {metrics!r}")
        metrics = [metrics_mod.get(m, loss, self.graph.output_shape) for m in metrics]
        if loss.sparse and self.graph.output_shape[-1] < 2:
            raise ValueError(f"{self.describe()}: loss {loss.name!r} needs at least 2 "
                             f"output classes, the model outputs {format_shape(self.graph.output_shape)}")
        optimizer.build(self.backend, [w.value for w in self.graph.trainable_weights()])
        self.optimizer, self.loss, self.metrics, self._fused = optimizer, loss, metrics, fused
        self._step_buffers = {}
        b = self.backend
        self._loss_sum = b.zeros((1,))
        self._metric_counts = [b.zeros((1,)) for _ in self.metrics]
        self._eval_counters = None  # evaluate()'s own counters, made on first use
        self._seen = 0
        self.compiled = True

    def _require_compiled(self, what):
        self._require_built(what)
        if not self.compiled:
            raise RuntimeError(f"{self.describe()}: call compile(optimizer, loss, metrics) "
                               f"before {what}()")

    @property
    def metrics_names(self):
        return ["loss"] + [m.name for m in self.metrics]

    # ------------------------------------------------------------ buffers
    def _buffers_for(self, n):
        """Input, target, loss and gradient buffers for batch size n, allocated once."""
        bufs = self._step_buffers.get(n)
        if bufs is None:
            b = self.backend
            out_shape = (n,) + self.graph.output_shape
            bufs = {
                "y": b.empty(self.loss.target_shape(n, self.graph.output_shape),
                             self.loss.target_dtype),
                "loss": b.empty((n,)),
                "probs": b.empty(out_shape),
                "dpred": b.empty(out_shape),
            }
            self._step_buffers[n] = bufs
        return bufs

    def _upload_inputs(self, x_batch):
        bufs_x = self._input_buffer(len(x_batch))
        self.backend.copy_from_host(bufs_x, x_batch)
        return bufs_x

    def _input_buffer(self, n):
        key = ("x", n)
        buf = self._step_buffers.get(key)
        if buf is None:
            buf = self._step_buffers[key] = self.backend.empty((n,) + self.graph.input_shape)
        return buf

    # ------------------------------------------------------------ metrics
    def reset_metrics(self):
        b = self.backend
        b.fill(self._loss_sum, 0.0)
        for c in self._metric_counts:
            b.fill(c, 0.0)
        self._seen = 0

    def _metric_values(self):
        """The running loss and metrics since the last reset (reads the device)."""
        b = self.backend
        seen = max(self._seen, 1)
        values = {"loss": float(b.to_numpy(self._loss_sum)[0]) / seen}
        for m, c in zip(self.metrics, self._metric_counts):
            values[m.name] = float(b.to_numpy(c)[0]) / (seen * m.per_sample(self.graph.output_shape))
        return values

    # ------------------------------------------------------------ steps
    def _loss_and_metrics(self, bufs, y_host, n, output):
        """Forward of the loss and metrics for one batch already run through the graph."""
        b = self.backend
        b.copy_from_host(bufs["y"], y_host)
        pred = self.graph.output_layer.preactivation if self._fused else output
        self.loss.forward(b, bufs["loss"], pred, bufs["y"], bufs["probs"])
        b.sum(self._loss_sum, bufs["loss"], accumulate=True)
        # With logits (from_logits=True), metrics look at the probabilities the loss computed.
        scored = bufs["probs"] if (self.loss.produces_probs and not self._fused) else output
        for m, c in zip(self.metrics, self._metric_counts):
            m.update(b, c, scored, bufs["y"], accumulate=True)
        self._seen += n
        return pred

    def _train_step(self, x_batch, y_batch):
        """One forward + backward + update on host arrays already validated."""
        n = len(x_batch)
        bufs = self._buffers_for(n)
        x = self._upload_inputs(x_batch)
        # The layer's position, not hash(name): str hashes change from process to process
        # (PYTHONHASHSEED), and a run resumed in another process must draw the same masks.
        for position, layer in self._dropout_layers():
            base = self.seed if layer.seed is None else layer.seed  # Dropout(seed=...) wins
            layer.step_seed = _mix_seed(base, position, self.optimizer.iterations)
        output = self.graph.forward(x, training=True)
        pred = self._loss_and_metrics(bufs, y_batch, n, output)
        self.loss.backward(self.backend, bufs["dpred"], pred, bufs["y"], bufs["probs"], 1.0 / n)
        self.graph.backward(bufs["dpred"], from_preactivation=self._fused)
        self.optimizer.apply_gradients([(w.grad, w.value)
                                        for w in self.graph.trainable_weights()])

    def _test_step(self, x_batch, y_batch):
        n = len(x_batch)
        bufs = self._buffers_for(n)
        output = self.graph.forward(self._upload_inputs(x_batch), training=False)
        self._loss_and_metrics(bufs, y_batch, n, output)

    def _predict_step(self, x_batch):
        output = self.graph.forward(self._upload_inputs(x_batch), training=False)
        return self.backend.to_numpy(output)

    def _dropout_layers(self):
        from ..layers.core import Dropout
        return [(i, l) for i, l in enumerate(self.layers) if isinstance(l, Dropout)]

    # ------------------------------------------------------ batch-level API
    def train_on_batch(self, x, y):
        """One update on one batch; returns the loss, or [loss, *metrics] when compiled with
        metrics (values of this batch)."""
        self._require_compiled("train_on_batch")
        x, y = self._validate_xy(x, y)
        self.reset_metrics()
        self._train_step(x, y)
        return self._batch_result()

    def test_on_batch(self, x, y):
        self._require_compiled("test_on_batch")
        x, y = self._validate_xy(x, y)
        self.reset_metrics()
        self._test_step(x, y)
        return self._batch_result()

    def predict_on_batch(self, x):
        self._require_built("predict_on_batch")
        return self._predict_step(self._validate_x(x))

    def _batch_result(self):
        values = self._metric_values()
        result = [values[k] for k in self.metrics_names]
        return result[0] if len(result) == 1 else result

    # ------------------------------------------------------ validation
    def _validate_x(self, x, argument="x", check_finite=True):
        if isinstance(x, (list, tuple)):
            x = np.asarray(x)
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{argument}: expected a numpy array, got {type(x).__name__}")
        if x.dtype == object or not (np.issubdtype(x.dtype, np.number) or x.dtype == bool):
            raise TypeError(f"{argument}: expected numeric data, got dtype {x.dtype}")
        if x.ndim == 0 or len(x) == 0:
            raise ValueError(f"{argument}: expected a non-empty batch of samples, got shape "
                             f"{tuple(x.shape)}")
        self.graph.check_input(x.shape, argument)
        x = np.ascontiguousarray(x, dtype=np.float32)
        if check_finite and not np.all(np.isfinite(x)):
            raise ValueError(f"{argument}: contains NaN or infinite values")
        return x

    def _validate_xy(self, x, y, x_argument="x", y_argument="y"):
        x = self._validate_x(x, x_argument)
        if y is None:
            raise ValueError(f"{y_argument}: targets are required")
        y = self.loss.prepare_targets(y, self.graph.output_shape, y_argument)
        if len(y) != len(x):
            raise ValueError(f"{x_argument} and {y_argument} must have the same length, got "
                             f"{len(x)} samples and {len(y)} targets")
        return x, y

    # ------------------------------------------------------------ saving
    def save(self, filepath, overwrite=True, include_optimizer=True):
        from .saving import save_model
        save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    def save_weights(self, filepath, overwrite=True):
        from .saving import save_weights
        save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath):
        from .saving import load_weights
        load_weights(self, filepath)

    # ------------------------------------------------------------ config
    def get_config(self):
        from .saving import model_config
        return model_config(self)
