"""The functional Model: compile, the training / test / predict steps and their buffers.

The loops (fit, evaluate, predict) live in training.py, saving in file_formats.py and the
summary table in summary.py; this file holds what runs every step.
"""

import math

import numpy as np

from .. import optimizers as optimizers_mod
from .. import random as mrandom
from ..custom_objects import custom_object_scope
from ..layers.input_layer import InputLayer
from ..layers.op_nodes import OpNode
from ..layers.variable_names import VariableNames
from ..layers.buffers import BufferSet
from ..naming import auto_name, snake_case
from ..string_tensors import is_string_array
from . import file_formats, masks, penalties, tracking, tta
from .backend_check import warn_if_not_on_active_backend
from .config import functional_config, functional_from_config
from .concurrency import UseGuard, one_thread_at_a_time
from .graph import Graph
from .heads import make_heads, metric_names
from .layer_metrics import owned_metrics
from .keras_api import KerasModelAPI, check_compile_extras
from .nesting import ModelAsLayer
from .registry import register
from .summary import summary_lines
from .training import TrainingLoops
from .validation import DataValidation


# Functions (bases, namespace) -> bases that subclassing.py registers: Keras's rule that a
# Model subclass defining call() computes with it, and one defining train_step / test_step
# runs them in fit / evaluate, applied to the subclass's bases when it is created.
_subclass_bases = []


def register_subclass_base(choose):
    _subclass_bases.append(choose)


class ModelType(type):
    """The metaclass of Model: lets subclassing.py pick a user subclass's bases."""

    def __new__(mcls, name, bases, namespace, **kwargs):
        for choose in _subclass_bases:
            bases = choose(bases, namespace)
        return super().__new__(mcls, name, bases, namespace, **kwargs)


@register
class Model(ModelAsLayer, KerasModelAPI, DataValidation, TrainingLoops, VariableNames,
            metaclass=ModelType):
    """A model from input tensors to output tensors: Model(inputs, outputs), each one
    tensor, a list or a dict of tensors, as Keras."""

    # the epoch BackupAndRestore restored, for the next fit to start from (once)
    _restored_initial_epoch = None

    def __init__(self, inputs=None, outputs=None, name=None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        # Keras 3's automatic names: "functional", "functional_1", ...; "sequential", ...
        cls = type(self)
        self.name = name or auto_name("functional" if cls is Model else snake_case(cls.__name__))
        self.graph = None
        self.optimizer = None
        self.loss = None
        self._metrics = []
        self.compiled = False
        self.stop_training = False
        self.trained_epochs = 0       # epochs completed (saved with the model)
        self.fit_state = {}           # data-order state saved in checkpoints (see training.py)
        self.seed = mrandom.new_seed()
        self._buffers = BufferSet()   # inputs, targets, losses (see layers/buffers.py)
        self._step_views = None       # (batch size, the step's buffers) of the last step
        self._use_guard = UseGuard()  # one thread at a time (concurrency.py)
        self._trainable = True
        self._dynamic_heads = False   # compile sets it (see _buffers_for)
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
        """The InputLayers, then the layers and nested models, once each, in execution order
        (Keras 3's functional model.layers; get_layer(index=) counts the same way). The nodes
        of minidl.ops calls (layers/op_nodes.py) are operations, not layers: the summary shows
        them, model.layers does not, as in Keras."""
        return [l for l in self.graph.layers if not isinstance(l, OpNode)] if self.graph else []

    @property
    def operations(self):
        """Every operation of the graph in execution order: the layers, and the nodes of
        minidl.ops calls that model.layers leaves out (Keras 3's model.operations)."""
        return list(self.graph.layers) if self.graph else []

    @property
    def _weighted_layers(self):
        """model.layers without the InputLayers (they hold no weights): the positions that
        weight files index, the same for a Sequential and a functional model."""
        return [l for l in self.layers if not isinstance(l, InputLayer)]

    @property
    def input_shape(self):
        shapes = [(None,) + s for s in self.graph.input_shapes]
        return shapes[0] if self.graph.input_structure == "single" else shapes

    @property
    def output_shape(self):
        """One shape, or a list of them in model.outputs order (nested outputs too, as
        Keras 3)."""
        shapes = [(None,) + s for s in self.graph.output_shapes]
        if self.graph.output_structure == "nested":
            return shapes[0] if len(shapes) == 1 else shapes
        return shapes[0] if self.graph.output_structure == "single" else shapes

    @one_thread_at_a_time
    def get_weights(self):
        """Every weight as a numpy array, layer by layer in Keras order."""
        self._require_built("get_weights")
        return [w for layer in self._weighted_layers for w in layer.get_weights()]

    @one_thread_at_a_time
    def set_weights(self, weights):
        self._require_built("set_weights")
        if isinstance(weights, np.ndarray) or not isinstance(weights, (list, tuple)):
            raise TypeError(f"{self.describe()}.set_weights: weights must be a list of arrays "
                            f"(as get_weights returns), got {type(weights).__name__}")
        # every array is checked before any weight changes: a bad one leaves the model as it was
        self.assign_weights(self.check_weights(list(weights)))

    def summary(self, line_length=None, positions=None, print_fn=print, expand_nested=False,
                show_trainable=False, layer_range=None):
        """The Keras 2 table of layers; show_trainable adds a Trainable column. line_length,
        positions, expand_nested and layer_range are accepted and not used."""
        self._require_built("summary")
        for line in summary_lines(self, show_trainable):
            print_fn(line)

    # ----------------------------------------------------------- compile
    @one_thread_at_a_time
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """Configure training: an optimizer, a loss (one for every output, a list or a dict by
        output name), loss_weights and metrics (a list, a list of lists or a dict), as Keras.
        weighted_metrics (named as Keras names them) weigh each hit with its sample's weight
        and divide by the sum of the weights. The Keras-only arguments after them are
        checked and have no effect (keras_api.py)."""
        owner = f"{self.describe()}.compile"
        check_compile_extras(owner, run_eagerly, steps_per_execution, jit_compile,
                             auto_scale_loss)
        self._require_built("compile")
        if loss is None and not self._loss_optional():
            raise ValueError(f"{owner}: a loss is required, e.g. "
                             "loss='sparse_categorical_crossentropy'")
        # Everything is checked before the model changes: a failed compile leaves the
        # previous configuration in place (and usable).
        optimizer = optimizers_mod.get(optimizer)
        heads = ([] if loss is None else
                 make_heads(self._scored_outputs(loss, metrics), loss, loss_weights, metrics,
                            owner, weighted_metrics))
        # trainable flags are read here, as Keras: a change takes effect at the next compile
        self.graph.prepare()
        trainable = self.graph.trainable_weights()
        if optimizer.built:
            # an optimizer object passed again: its state fits only the weights it was built for
            shapes = [tuple(w.shape) for w in trainable]
            if list(getattr(optimizer, "_shapes", [])) != shapes:
                raise ValueError(f"{owner}: {type(optimizer).__name__} {optimizer.name!r} was "
                                 f"built for {len(optimizer._shapes)} other weights; the model "
                                 f"now trains {len(shapes)} (after a trainable change): pass a "
                                 "new optimizer")
        else:
            describe = getattr(optimizer, "describe_weights", None)   # lq.optimizers.CaseOptimizer
            if describe is not None:   # its predicates read each Weight's precision
                describe(trainable)
            # Keras paths ("dense/kernel") for exclude_from_weight_decay(var_names=...)
            optimizer.build(self.backend, [w.value for w in trainable],
                            names=self.graph.trainable_weight_paths())
        track = getattr(optimizer, "track_non_trainable", None)   # Lookahead's slow copies
        if track is not None:
            trained = {id(w) for w in trainable}
            track([w for w in self.graph.weights() if id(w) not in trained])
        self.optimizer, self._heads, self._trained_weights = optimizer, heads, trainable
        masks.weigh_masked_metrics(self.graph, heads)
        self._penalties = penalties.plan(self.graph)  # regularizers and constraints
        self._penalized = bool(self._penalties[0]) or self.graph.has_activity_regularizers
        self._grads_and_vars = [(w.grad, w.value) for w in trainable]
        # the Loss objects (one for a one-output model, else one per output, in order)
        self.loss = heads[0].loss if len(heads) == 1 else [h.loss for h in heads]
        self.loss_weights = loss_weights
        self._metrics = [m for h in heads for m in h.metrics]
        self._buffers.reset(self.backend)
        self._step_views = None
        # The position, not hash(name): str hashes change from process to process
        # (PYTHONHASHSEED), and a run resumed in another process must draw the same numbers.
        # (layers held by a layer written with ops, or by a subclassed model, count each)
        self._seeded_layers = [(i, l) for i, l in
                               enumerate(tracking.leaf_layers(self.graph.primitive_layers))
                               if l.needs_step_seed]
        self._fused = [h.index for h in heads if h.fused]
        self._dynamic_heads = any(h.unknown for h in heads)   # outputs with None dims
        self._counters = self._new_counters()
        self._eval_counters = None  # evaluate()'s own counters, made on first use
        self._seen = 0
        self._head_rows = [0] * len(heads)
        self.compiled = True

    def _scored_outputs(self, loss, metrics):
        """The graph whose outputs the compiled loss and metrics score (custom_steps.py may
        narrow it)."""
        return self.graph

    def _loss_optional(self):
        """Whether compile() may go without a loss: the model's layers may add theirs
        (add_loss, as Keras's endpoint layers), or a train_step of your own computes it."""
        return self.graph.may_add_losses

    @property
    def metrics(self):
        """The compiled metrics, then the Metric objects its layers own (layer_metrics.py), as
        Keras 3's model.metrics (a subclass may override this property, as Keras's)."""
        return self._metrics + owned_metrics(self)

    def _new_counters(self):
        """(per head: (loss sum, metric counts, weight sum), penalty sum): the weight sum (of
        the rows' weights, for weighted_metrics only, else None) divides the weighted metrics;
        the regularization penalties join the total loss only, not an output's own loss
        (Keras 3's logs)."""
        b = self.backend
        return ([(b.zeros((1,)), [b.zeros((1,)) for _ in h.metrics],
                  b.zeros((1,)) if h.weighted else None) for h in self._heads],
                b.zeros((1,)))

    def _require_compiled(self, what):
        self._require_built(what)
        if not self.compiled:
            raise RuntimeError(f"{self.describe()}: call compile(optimizer, loss, metrics) "
                               f"before {what}()")

    @property
    def metrics_names(self):
        names = metric_names(self._heads) if self.compiled else ["loss"]
        return names + [m.name for m in owned_metrics(self)]

    # ------------------------------------------------------------ buffers
    def _buffers_for(self, n, xs):
        """Each head's target, loss and gradient buffers for a batch of n (views of the
        largest batch's), with their views of one row per position, as the loss and metric
        ops take them. Outputs with unknown (None) dims get this batch's shapes first."""
        if self._dynamic_heads:
            self._resolve_heads(xs)
        if self._step_views is not None and self._step_views[0] == n:
            return self._step_views[1]
        get, b = self._buffers.get, self.backend
        bufs = [h.buffers(get, b, n) for h in self._heads]
        self._step_views = (n, bufs)
        return bufs

    def _upload_inputs(self, xs, lend=False):
        """Host arrays (one per input) into the model's input buffers. lend (inference): on a
        host backend an array already in the backend's layout is handed over as it is, read-only
        (no op writes its inputs, and one that tried would be refused, not corrupt the user's
        data): copying a batch of 32 16x16x256 images costs a fifth of a binary layer's predict."""
        out = []
        for i, x in enumerate(xs):
            if is_string_array(x):   # a string input's batch stays on the host
                out.append(x)
                continue
            if lend and self.backend.lends_host_arrays(x):
                view = x.view()
                view.flags.writeable = False
                out.append(view)
                continue
            buf = self._buffers.get(("x", i), x.shape)
            self.backend.copy_from_host(buf, x)
            out.append(buf)
        return out

    # ------------------------------------------------------------ metrics
    def reset_metrics(self):
        b = self.backend
        heads, penalty_sum = self._counters
        for loss_sum, counts, weight_sum in heads:
            for c in [loss_sum] + counts + ([weight_sum] if weight_sum is not None else []):
                b.fill(c, 0.0)
        for h in self._heads:
            for m in h.metrics:
                m.reset()
        if self._penalized:
            b.fill(penalty_sum, 0.0)
        for m in owned_metrics(self):
            m.reset_state()
        self._added = False   # whether a layer added a loss (add_loss) since the reset
        self._seen = 0
        self._head_rows = [0] * len(self._heads)   # rows (samples x positions) per head

    def _metric_values(self):
        """The running loss and metrics since the last reset (reads the device)."""
        b = self.backend
        seen = max(self._seen, 1)
        heads, penalty_sum = self._counters
        values = {}
        total = (float(b.to_numpy(penalty_sum)[0]) / seen
                 if self._penalized or getattr(self, "_added", False) else 0.0)
        for h, (loss_sum, counts, weight_sum), rows in zip(self._heads, heads, self._head_rows):
            positions, shape = h.positions, h.shape
            if h.unknown and self._seen:   # sizes may vary: the positions per sample, on average
                positions = rows / seen
                shape = (positions, shape[-1])
            # (an output with unknown dims sums its batches' means over the positions)
            head_loss = float(b.to_numpy(loss_sum)[0]) / (seen * (1 if h.unknown else positions))
            total += h.weight * head_loss
            if len(self._heads) > 1:
                values[h.loss_name] = head_loss
            # weighted_metrics divide by the weights' sum (0 when every weight is 0, as Keras)
            samples = float(b.to_numpy(weight_sum)[0]) / positions if h.weighted else seen
            for name, m, c in zip(h.metric_names, h.metrics, counts):
                values[name] = m.value(b, c, samples if m.weighted else seen, shape)
        for m in owned_metrics(self):
            values[m.name] = _owned_value(m)
        return dict({"loss": total}, **values)

    # ------------------------------------------------------------ steps
    def _loss_and_metrics(self, bufs, ys, n, outputs, sws=None):
        """Forward of every head's loss and metrics for a batch already run through the
        graph (each sample's loss times its weight when sws holds weights); the
        predictions each loss scored."""
        b = self.backend
        preds = []
        heads, penalty_sum = self._counters
        for i, (h, hb, y, out, (loss_sum, counts, weight_sum)) in enumerate(
                zip(self._heads, bufs, ys, outputs, heads)):
            if y is not None:   # None: the targets are in hb["y"] already (custom_steps.py)
                b.copy_from_host(hb["y"], y)
            pred = self._rows(self.graph.preactivation(h.index) if h.fused else out, n, h)
            hb["loss_step"] = h.loss.forward(b, hb["loss"], pred, hb["y_rows"], hb["probs_rows"])
            row_weights = None
            if sws is not None:
                row_weights = self._weigh(hb, "loss", np.repeat(sws[i], h.positions))
            mask_rows = masks.output_mask_rows(b, self.graph, h, n)
            hb["mask_weights"] = None if mask_rows is None else masks.loss_step_weights(
                b, self._buffers.get, h, mask_rows)
            if mask_rows is not None:   # the mean over the unmasked steps (models/masks.py)
                b.multiply(hb["loss"], hb["loss"], hb["mask_weights"])
            if h.unknown:   # Keras's running loss: each batch's mean, weighted by its samples
                b.axpby(hb["loss"], 1.0 / h.positions, hb["loss"], 0.0, hb["loss"])
            b.sum(loss_sum, hb["loss"], accumulate=True)
            # With logits (from_logits=True), metrics look at the probabilities the loss computed.
            scored = (hb["probs_rows"] if (h.loss.produces_probs and not h.fused)
                      else self._rows(out, n, h))
            if mask_rows is not None:   # the metrics count the unmasked steps only
                row_weights = masks.metric_row_weights(b, self._buffers.get, h, mask_rows,
                                                       row_weights)
            if h.weighted:
                self._count_weights(hb, weight_sum, row_weights, n * h.positions)
            for m, c in zip(h.metrics, counts):
                weights = None
                if m.weighted and row_weights is not None:
                    if m.weights_per_row(h.shape[-1]) == 1:
                        weights = row_weights
                    elif mask_rows is not None:
                        weights = masks.element_weights(b, self._buffers.get, h, row_weights)
                    else:
                        weights = self._element_weights(hb, sws[i], h)
                m.update(b, c, scored, hb["y_rows"], accumulate=True, weights=weights)
            preds.append(pred)
        # losses the layers added (add_loss) join the penalties' sum; the sum is read only
        # when one of them exists, so a model without any moves nothing more
        added = self.graph.added_losses() if self.graph.may_add_losses else ()
        before = getattr(self, "_added", False)
        if added and not (self._penalized or before):
            b.fill(penalty_sum, 0.0)
        self._added = before or bool(added)
        if self._penalized or added:   # the running sum is per sample: n times this batch's penalty
            penalties.add_penalties(b, penalty_sum, self._penalties[0], self.graph, n, added)
        self._seen += n
        if self._dynamic_heads:
            self._head_rows = [r + n * h.positions for r, h in zip(self._head_rows, self._heads)]
        return preds

    def _upload_weights(self, hb, role, weights):
        """A buffer holding `weights` (host, float32 once uploaded) for hb's `role`."""
        buf = self._buffers.get(("weights", role, id(hb)), weights.shape)
        self.backend.copy_from_host(buf, np.ascontiguousarray(weights, dtype=np.float32))
        return buf

    def _weigh(self, hb, role, weights):
        """hb[role] *= weights (host, shaped as hb[role]), through an upload; the weights'
        buffer."""
        buf = self._upload_weights(hb, role, weights)
        self.backend.multiply(hb[role], hb[role], buf)
        return buf

    def _element_weights(self, hb, sample_weights, head):
        """Each output element's weight (its sample's), for weighted binary accuracy."""
        per_element = math.prod(head.shape)
        weights = np.repeat(sample_weights, per_element).reshape(-1, head.shape[-1])
        return self._upload_weights(hb, "elements", weights)

    def _count_weights(self, hb, weight_sum, row_weights, rows):
        """weight_sum += the rows' weights (1 each without sample weights), on the backend."""
        b = self.backend
        if row_weights is None:
            row_weights = self._buffers.get(("ones", id(hb)), (rows,))
            b.fill(row_weights, 1.0)
        b.sum(weight_sum, row_weights, accumulate=True)

    def _rows(self, tensor, n, head):
        """tensor (n, ..., K) as (n * positions, K); itself for outputs (n, K)."""
        if head.positions == 1:
            return tensor
        return self.backend.reshape(tensor, (n * head.positions, head.shape[-1]))

    def _gradients(self, xs, ys, sws=None):
        """Forward, loss and backward of one batch: fills every trainable weight's grad."""
        n = len(xs[0])
        bufs = self._buffers_for(n, xs)
        outputs = self.graph.forward(self._upload_inputs(xs), training=True, lend=True)
        preds = self._loss_and_metrics(bufs, ys, n, outputs, sws)
        b = self.backend
        # LossScaleOptimizer: the loss (penalties included) times its scale, unscaled by it
        scale = getattr(self.optimizer, "loss_scale", 1.0)
        for i, (h, hb, pred) in enumerate(zip(self._heads, bufs, preds)):
            h.loss.backward(b, hb["dpred_rows"], pred, hb["y_rows"], hb["probs_rows"],
                            scale * h.weight / (n * h.positions), hb.pop("loss_step"))
            if sws is not None:   # Keras's sum_over_batch_size: sum(w * loss) / rows
                rows = np.repeat(sws[i], h.positions)
                per_row = math.prod(h.shape) if h.whole_samples else h.shape[-1]
                self._weigh(hb, "dpred_rows", np.repeat(rows, per_row).reshape(b.shape(hb["dpred_rows"])))
            if hb["mask_weights"] is not None:
                rows = b.reshape(hb["mask_weights"], (n * h.positions, 1))
                b.binary(hb["dpred_rows"], hb["dpred_rows"], rows, "multiply")
        self.graph.backward([hb["dpred"] for hb in bufs], self._fused, self._grads_final_hook(),
                            loss_scale=scale, lend=True)
        penalties.add_penalty_gradients(b, self._penalties[1], scale)

    def _grads_final_hook(self):
        """The optimizer's listener for weight gradients completed during backward (a
        minidl.distributed.DistributedOptimizer's), minus the weights whose regularizer
        gradient is added after backward; None for ordinary optimizers."""
        listener = getattr(self.optimizer, "gradients_final", None)
        if listener is None:
            return None
        penalized = {id(w) for w, _ in self._penalties[1]}
        if not penalized:
            return listener
        return lambda weights: listener([w for w in weights if id(w) not in penalized])

    def _seed_step(self):
        """Every random layer's seed for this training step."""
        for position, layer in self._seeded_layers:
            base = self.seed if layer.seed is None else layer.seed  # Dropout(seed=...) wins
            # 62 bits: the backends' generators take a non-negative int64
            layer.step_seed = mrandom.mix_seed(base, position, self.optimizer.iterations) >> 2

    def _train_step(self, xs, ys, sws=None):
        """One forward + backward + update on host arrays already validated."""
        self._seed_step()
        self._gradients(xs, ys, sws)
        self.optimizer.apply_gradients(self._grads_and_vars)
        penalties.apply_constraints(self.backend, self._penalties[2])

    def _test_step(self, xs, ys, sws=None):
        n = len(xs[0])
        bufs = self._buffers_for(n, xs)
        outputs = tta.inference(self, self._upload_inputs(xs, lend=True))
        self._loss_and_metrics(bufs, ys, n, outputs, sws)

    def _predict_step(self, xs):
        outputs = tta.inference(self, self._upload_inputs(xs, lend=True))
        return [self.backend.to_numpy(o) for o in outputs]

    def _pack_outputs(self, arrays):
        return self.graph.pack_outputs(arrays)

    # ------------------------------------------------------ batch-level API
    @one_thread_at_a_time
    def train_on_batch(self, x, y, sample_weight=None, class_weight=None, return_dict=False):
        """One update on one batch; returns the loss, or [loss, *metrics] when compiled with
        metrics (values of this batch), or a dict with return_dict=True."""
        self._require_compiled("train_on_batch")
        warn_if_not_on_active_backend(self)
        x, y, sw = self._batch_arrays("train_step", x, y, sample_weight, class_weight,
                                      f"{self.describe()}.train_on_batch")
        self.reset_metrics()
        self._train_step(x, y, sw)
        return self._batch_result(return_dict)

    @one_thread_at_a_time
    def test_on_batch(self, x, y, sample_weight=None, return_dict=False):
        self._require_compiled("test_on_batch")
        warn_if_not_on_active_backend(self)
        x, y, sw = self._batch_arrays("test_step", x, y, sample_weight, None,
                                      f"{self.describe()}.test_on_batch")
        self.reset_metrics()
        self._test_step(x, y, sw)
        return self._batch_result(return_dict)

    @one_thread_at_a_time
    def predict_on_batch(self, x):
        self._require_built("predict_on_batch")
        warn_if_not_on_active_backend(self)
        return self._pack_outputs(self._predict_step(self._validate_x(x)))

    def _batch_arrays(self, step, x, y, sample_weight, class_weight, owner):
        """One batch for `step`, as the loops' batch sources give it (training.py _arrays)."""
        xs, ys, sws, arrays = self._arrays(step, x, y, sample_weight, class_weight, owner)
        return (xs, ys, sws) if arrays is None else arrays.pack(xs, ys, sws)

    def _batch_result(self, return_dict=False):
        values = self._metric_values()
        if return_dict:
            return values
        result = [values[k] for k in self.metrics_names]
        return result[0] if len(result) == 1 else result

    # ------------------------------------------------------------ saving
    @one_thread_at_a_time
    def save(self, filepath, overwrite=True, include_optimizer=True):
        file_formats.save_model(self, filepath, overwrite=overwrite,
                                include_optimizer=include_optimizer)

    @one_thread_at_a_time
    def save_weights(self, filepath, overwrite=True):
        file_formats.save_weights(self, filepath, overwrite=overwrite)

    @one_thread_at_a_time
    def load_weights(self, filepath, skip_mismatch=False, by_name=False):
        file_formats.load_weights(self, filepath, skip_mismatch=skip_mismatch, by_name=by_name)

    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None,
               **kwargs):
        """Keras's model.export: format="onnx" writes an ONNX model (minidl/keras_files/
        onnx_export.py; opset_version=17 or later), format="openvino" an OpenVINO IR (.xml and
        .bin; keras_files/openvino_export.py, needs the openvino package); Keras's other
        formats need TensorFlow."""
        if format not in ("onnx", "openvino"):
            raise ValueError(f"export: minidl exports format='onnx' or 'openvino' (Keras's "
                             f"{format!r} needs TensorFlow)")
        if input_signature is not None:
            raise ValueError("export: input_signature is not used: the exported inputs are the "
                             "model's, with a dynamic batch axis")
        from ..keras_files.onnx_export import OPSET, export_onnx
        opset = kwargs.pop("opset_version", OPSET)
        if kwargs:
            raise TypeError(f"export: unexpected arguments {sorted(kwargs)}")
        if format == "openvino":
            from ..keras_files.openvino_export import export_openvino
            export_openvino(self, filepath, opset, verbose)
            return
        export_onnx(self, filepath, opset)
        if verbose:
            print(f"Saved an ONNX model to {filepath}")

    # ------------------------------------------------------------ config
    def get_config(self):
        """The architecture as save() writes it: layers, nested models and their calls
        (config.py)."""
        self._require_built("get_config")
        return functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new model (fresh weights, on the active backend) from get_config()'s dict;
        custom_objects ({name: class}) names layer classes of your own."""
        with custom_object_scope(custom_objects):
            return functional_from_config(cls, config)


def _owned_value(metric):
    """A layer-owned metric's result as a Python float (a scalar Tensor, array or number)."""
    result = metric.result()
    value = getattr(result, "value", result)
    backend = getattr(result, "backend", None)
    return float(np.asarray(backend.to_numpy(value) if backend is not None else value).reshape(-1)[0])
