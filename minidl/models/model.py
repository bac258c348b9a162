"""The functional Model: compile, the training / test / predict steps and their buffers.

The loops (fit, evaluate, predict) live in training.py, saving in saving.py and the
summary table in summary.py; this file holds what runs every step.
"""

import math

import numpy as np

from .. import layers as layers_mod
from .. import losses as losses_mod
from .. import metrics as metrics_mod
from .. import optimizers as optimizers_mod
from .. import random as mrandom
from ..custom_objects import get_registered_name
from ..layers.base import format_shape
from ..layers.buffers import BufferSet
from ..naming import auto_name, snake_case
from . import penalties, saving
from .concurrency import UseGuard, one_thread_at_a_time
from .graph import Graph
from .keras_api import KerasModelAPI, check_compile_extras
from .registry import register
from .summary import summary_lines
from .training import TrainingLoops


@register
class Model(KerasModelAPI, TrainingLoops):
    """A model from an input tensor to an output tensor: Model(inputs, outputs)."""

    def __init__(self, inputs=None, outputs=None, name=None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        # Keras 3's automatic names: "functional", "functional_1", ...; "sequential", ...
        cls = type(self)
        self.name = name or auto_name("functional" if cls is Model else snake_case(cls.__name__))
        self.graph = None
        self.optimizer = None
        self.loss = None
        self.metrics = []
        self.compiled = False
        self.stop_training = False
        self.trained_epochs = 0       # epochs completed (saved with the model)
        self.fit_state = {}           # data-order state saved in checkpoints (see training.py)
        self.seed = mrandom.new_seed()
        self._buffers = BufferSet()   # inputs, targets, losses (see layers/buffers.py)
        self._step_views = None       # (batch size, the step's buffers) of the last step
        self._use_guard = UseGuard()  # one thread at a time (concurrency.py)
        if inputs is not None or outputs is not None:
            self._set_graph(inputs, outputs)

    def describe(self):
        return f"{type(self).__name__} {self.name!r}"

    def _set_graph(self, inputs, outputs):
        self.graph = Graph(inputs, outputs, self.describe())
        self.graph.attach()
        self._buffers.reset(self.graph.backend)
        self._step_views = None

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

    @one_thread_at_a_time
    def get_weights(self):
        """Every weight as a numpy array, layer by layer in Keras order."""
        self._require_built("get_weights")
        return [w for layer in self.layers for w in layer.get_weights()]

    @one_thread_at_a_time
    def set_weights(self, weights):
        self._require_built("set_weights")
        if isinstance(weights, np.ndarray) or not isinstance(weights, (list, tuple)):
            raise TypeError(f"{self.describe()}.set_weights: weights must be a list of arrays "
                            f"(as get_weights returns), got {type(weights).__name__}")
        weights = list(weights)
        expected = sum(len(layer.weights) for layer in self.layers)
        if len(weights) != expected:
            raise ValueError(f"{self.describe()} has {expected} weight arrays, got {len(weights)}")
        # every array is checked before any weight changes: a bad one leaves the model as it was
        checked, i = [], 0
        for layer in self.layers:
            n = len(layer.weights)
            checked.append(layer.check_weights(weights[i:i + n]))
            i += n
        for layer, arrays in zip(self.layers, checked):
            layer.assign_weights(arrays)

    def summary(self, print_fn=print):
        self._require_built("summary")
        for line in summary_lines(self):
            print_fn(line)

    # ----------------------------------------------------------- compile
    @one_thread_at_a_time
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
        # An activity regularizer on the output layer needs dL/doutput: no fused crossentropy then.
        fused = loss.configure("linear" if out_layer.activity_regularizer is not None
                               else getattr(out_layer, "activation", "linear"))
        if metrics is None:
            metrics = []
        if isinstance(metrics, str) or not isinstance(metrics, (list, tuple)):
            raise TypeError(f"{self.describe()}.compile: metrics must be a list of names, "
                            f"got {metrics!r}")
        metrics = [metrics_mod.get(m, loss, self.graph.output_shape) for m in metrics]
        if loss.sparse and self.graph.output_shape[-1] < 2:
            raise ValueError(f"{self.describe()}: loss {loss.name!r} needs at least 2 "
                             f"output classes, the model outputs {format_shape(self.graph.output_shape)}")
        # Keras paths ("dense/kernel") for exclude_from_weight_decay(var_names=...)
        trainable = [(layer, w) for layer in self.graph.layers for w in layer.trainable_weights]
        optimizer.build(self.backend, [w.value for _, w in trainable],
                        names=[f"{layer.name}/{w.name}" for layer, w in trainable])
        self.optimizer, self.loss, self.metrics, self._fused = optimizer, loss, metrics, fused
        self._penalties = penalties.plan(self.graph)  # regularizers and constraints
        self._buffers.reset(self.backend)
        self._step_views = None
        # The position, not hash(name): str hashes change from process to process
        # (PYTHONHASHSEED), and a run resumed in another process must draw the same numbers.
        self._seeded_layers = [(i, l) for i, l in enumerate(self.layers) if l.needs_step_seed]
        # Outputs (N, ..., K) have P positions a sample, each scored over its last axis (as
        # Keras does); the loss and metrics see them as N * P rows of K values.
        self._positions = math.prod(self.graph.output_shape[:-1])
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
        """Target, loss and gradient buffers for a batch of n (views of the largest batch's),
        and their views of one row per position, as the loss and metric ops take them."""
        if self._step_views is not None and self._step_views[0] == n:
            return self._step_views[1]
        get, b = self._buffers.get, self.backend
        out_shape = (n,) + self.graph.output_shape
        rows = n * self._positions
        bufs = {"y": get("y", self.loss.target_shape(n, self.graph.output_shape),
                         self.loss.target_dtype),
                "loss": get("loss", (rows,)), "probs": get("probs", out_shape),
                "dpred": get("dpred", out_shape)}
        bufs["y_rows"] = b.reshape(bufs["y"], self.loss.target_shape(rows, out_shape[-1:]))
        bufs["probs_rows"] = b.reshape(bufs["probs"], (rows, out_shape[-1]))
        bufs["dpred_rows"] = b.reshape(bufs["dpred"], (rows, out_shape[-1]))
        self._step_views = (n, bufs)
        return bufs

    def _upload_inputs(self, x_batch):
        bufs_x = self._input_buffer(len(x_batch))
        self.backend.copy_from_host(bufs_x, x_batch)
        return bufs_x

    def _input_buffer(self, n):
        return self._buffers.get("x", (n,) + self.graph.input_shape)

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
        values = {"loss": float(b.to_numpy(self._loss_sum)[0]) / (seen * self._positions)}
        for m, c in zip(self.metrics, self._metric_counts):
            values[m.name] = float(b.to_numpy(c)[0]) / (seen * m.per_sample(self.graph.output_shape))
        return values

    # ------------------------------------------------------------ steps
    def _loss_and_metrics(self, bufs, y_host, n, output):
        """Forward of the loss and metrics for one batch already run through the graph."""
        b = self.backend
        b.copy_from_host(bufs["y"], y_host)
        pred = self._rows(self.graph.output_layer.preactivation if self._fused else output, n)
        self.loss.forward(b, bufs["loss"], pred, bufs["y_rows"], bufs["probs_rows"])
        b.sum(self._loss_sum, bufs["loss"], accumulate=True)
        penalties.add_penalties(b, self._loss_sum, self._penalties[0], self.graph, n * self._positions)
        # With logits (from_logits=True), metrics look at the probabilities the loss computed.
        scored = (bufs["probs_rows"] if (self.loss.produces_probs and not self._fused)
                  else self._rows(output, n))
        for m, c in zip(self.metrics, self._metric_counts):
            m.update(b, c, scored, bufs["y_rows"], accumulate=True)
        self._seen += n
        return pred

    def _rows(self, tensor, n):
        """tensor (n, ..., K) as (n * positions, K); itself for outputs (n, K)."""
        if self._positions == 1:
            return tensor
        return self.backend.reshape(tensor, (n * self._positions, self.graph.output_shape[-1]))

    def _train_step(self, x_batch, y_batch):
        """One forward + backward + update on host arrays already validated."""
        n = len(x_batch)
        bufs = self._buffers_for(n)
        x = self._upload_inputs(x_batch)
        for position, layer in self._seeded_layers:
            base = self.seed if layer.seed is None else layer.seed  # Dropout(seed=...) wins
            # 62 bits: the backends' generators take a non-negative int64
            layer.step_seed = mrandom.mix_seed(base, position, self.optimizer.iterations) >> 2
        output = self.graph.forward(x, training=True)
        pred = self._loss_and_metrics(bufs, y_batch, n, output)
        self.loss.backward(self.backend, bufs["dpred_rows"], pred, bufs["y_rows"],
                           bufs["probs_rows"], 1.0 / (n * self._positions))
        self.graph.backward(bufs["dpred"], from_preactivation=self._fused)
        penalties.add_penalty_gradients(self.backend, self._penalties[1])
        self.optimizer.apply_gradients([(w.grad, w.value)
                                        for w in self.graph.trainable_weights()])
        penalties.apply_constraints(self.backend, self._penalties[2])

    def _test_step(self, x_batch, y_batch):
        n = len(x_batch)
        bufs = self._buffers_for(n)
        output = self.graph.forward(self._upload_inputs(x_batch), training=False)
        self._loss_and_metrics(bufs, y_batch, n, output)

    def _predict_step(self, x_batch):
        output = self.graph.forward(self._upload_inputs(x_batch), training=False)
        return self.backend.to_numpy(output)

    # ------------------------------------------------------ batch-level API
    @one_thread_at_a_time
    def train_on_batch(self, x, y):
        """One update on one batch; returns the loss, or [loss, *metrics] when compiled with
        metrics (values of this batch)."""
        self._require_compiled("train_on_batch")
        x, y = self._validate_xy(x, y)
        self.reset_metrics()
        self._train_step(x, y)
        return self._batch_result()

    @one_thread_at_a_time
    def test_on_batch(self, x, y):
        self._require_compiled("test_on_batch")
        x, y = self._validate_xy(x, y)
        self.reset_metrics()
        self._test_step(x, y)
        return self._batch_result()

    @one_thread_at_a_time
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
        if np.iscomplexobj(x):
            raise TypeError(f"{argument}: complex values (dtype {x.dtype}) are not supported; "
                            "pass the part you mean, e.g. x.real or np.abs(x)")
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
    @one_thread_at_a_time
    def save(self, filepath, overwrite=True, include_optimizer=True):
        saving.save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    @one_thread_at_a_time
    def save_weights(self, filepath, overwrite=True):
        saving.save_weights(self, filepath, overwrite=overwrite)

    @one_thread_at_a_time
    def load_weights(self, filepath):
        saving.load_weights(self, filepath)

    # ------------------------------------------------------------ config
    def get_config(self):
        """The architecture as save() writes it: each layer's class, config and inputs."""
        self._require_built("get_config")
        layers = [{"class_name": get_registered_name(layer), "config": layer.get_config(),
                   "inbound": [t.layer.name for t in layer.inbound]}
                  for layer in self.graph.layers]
        return {"class_name": type(self).__name__, "name": self.name, "layers": layers,
                "input": self.graph.input_layer.name, "output": self.graph.output_layer.name}

    @classmethod
    def from_config(cls, config):
        """A new model (fresh weights, on the active backend) from get_config()'s dict."""
        built = {}
        for spec in config["layers"]:
            layer = layers_mod.deserialize(spec["class_name"], spec["config"])
            if isinstance(layer, layers_mod.InputLayer):
                built[layer.name] = layer.output
                continue
            inbound = [built[name] for name in spec["inbound"]]
            built[layer.name] = layer(inbound if layer.multiple_inputs else inbound[0])
        return cls(built[config["input"]], built[config["output"]], name=config["name"])
