"""QuantizedModel's Keras methods: predict and evaluate with Keras's arguments, summary.

evaluate scores the int8 model's outputs with a loss and metrics: those given to
QuantizedModel.compile, else the float model's (a Keras user quantizes a compiled model and
expects evaluate to report what the float model's evaluate reports). The scoring runs on
the backend, in a one-layer "loss head" model (an identity on the output, compiled with those
settings): each batch's int8 outputs go through it, so losses, metrics, sample weights and
return forms are exactly Model.evaluate's. Callbacks and the progress bar see the
QuantizedModel as their model.
"""

import contextlib

import numpy as np

from .. import backends as backends_mod
from .. import callbacks as callbacks_mod
from .. import losses as losses_mod
from ..models.batch_sources import ArrayBatches
from ..models.training import TrainingLoops
from ..models.training import _positive_int as positive_int

_callbacks = TrainingLoops._check_callbacks   # Model's check of the callbacks argument


def _positive_int(value, argument, owner, default=None):
    return default if value is None else positive_int(value, argument, owner)


@contextlib.contextmanager
def _building_on(backend):
    """Models built inside take `backend` (the quantized model's), whichever is active."""
    previous = backends_mod._active
    backends_mod.set_backend(backend)
    try:
        yield
    finally:
        backends_mod._active = previous


class _Outputs:
    """The batches of an ArrayBatches over (x, y, sample_weight) with x replaced by the int8
    model's outputs, computed batch by batch as the evaluation loop asks for them."""

    validated = True

    def __init__(self, qmodel, batches):
        self.qmodel, self.batches = qmodel, batches

    def __len__(self):
        return len(self.batches)

    def epoch(self, epoch):
        for xb, yb, swb in self.batches.epoch(epoch):
            yield [self.qmodel._predict_chunk(xb[0])], yb, swb


class KerasMethods:
    """predict / evaluate / compile / summary of QuantizedModel (see the module docstring)."""

    _compile_settings = None   # QuantizedModel.compile's (loss, metrics, weighted_metrics)
    _head = None               # the loss head model, made on first evaluate

    def _checked_x(self, x, method):
        x = np.asarray(x, np.float32)
        expected = tuple(self.float_model.graph.inputs[0].sample_shape)
        if x.ndim != len(expected) + 1 or tuple(x.shape[1:]) != expected:
            raise ValueError(f"QuantizedModel {self.name!r}: {method} expects inputs of shape "
                             f"(None, {', '.join(map(str, expected))}), got {x.shape}")
        return x

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None):
        """The model's outputs for the numpy array x, batch by batch, as Model.predict:
        batch_size (default 32), verbose (0, 1: a progress bar, 2), steps (batches to run,
        default all) and callbacks (their predict hooks)."""
        owner = f"QuantizedModel {self.name!r}.predict"
        x = self._checked_x(x, "predict")
        batch_size = _positive_int(batch_size, "batch_size", owner, 32)
        steps = _positive_int(steps, "steps", owner)
        n_steps = -(-len(x) // batch_size) if steps is None else min(steps, -(-len(x) // batch_size))
        cbs = callbacks_mod.CallbackList(
            ([callbacks_mod.ProgressBar(verbose)] if verbose else []) + _callbacks(callbacks, owner),
            model=self, params={"steps": n_steps, "verbose": verbose})
        cbs.on_predict_begin()
        parts = []
        for i in range(n_steps):
            cbs.on_predict_batch_begin(i)
            parts.append(self._predict_chunk(x[i * batch_size:(i + 1) * batch_size]))
            cbs.on_predict_batch_end(i, {"outputs": parts[-1]})
        cbs.on_predict_end()
        if not parts:
            raise ValueError(f"{owner}: no samples to predict")
        return np.concatenate(parts, axis=0)

    def compile(self, loss=None, metrics=None, weighted_metrics=None, **unused):
        """The loss and metrics evaluate reports (Model.compile's forms; the optimizer and the
        other training arguments are accepted and unused: a quantized model does not train).
        Without this call evaluate uses the float model's."""
        owner = f"QuantizedModel {self.name!r}.compile"
        if loss is None:
            raise ValueError(f"{owner}: a loss is required, e.g. "
                             "loss='sparse_categorical_crossentropy'")
        head = self._make_head(loss, metrics, weighted_metrics)   # checks the settings now
        self._compile_settings, self._head = (loss, metrics, weighted_metrics), head

    def _make_head(self, loss, metrics, weighted_metrics):
        from ..layers import Activation, Input
        from ..models import Model
        with _building_on(self.backend):
            inputs = Input(tuple(self.float_model.graph.outputs[0].sample_shape))
            head = Model(inputs, Activation("linear", name="int8_output")(inputs),
                         name=f"{self.name}_loss_head")
            head.compile(optimizer="sgd", loss=loss, metrics=metrics,
                         weighted_metrics=weighted_metrics)
        return head

    def _loss_head(self, owner):
        if self._head is None:
            model = self.float_model
            if not getattr(model, "compiled", False) or not getattr(model, "_heads", None):
                raise ValueError(f"{owner}: no loss to evaluate: compile the float model before "
                                 f"quantize(), or call compile(loss=..., metrics=[...]) on the "
                                 f"quantized model")
            h = model._heads[0]
            metrics, weighted = h.compiled_metrics
            self._head = self._make_head(losses_mod.get(losses_mod.serialize(h.loss)), metrics,
                                         weighted)
        return self._head

    def evaluate(self, x=None, y=None, batch_size=None, verbose=0, sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):
        """Loss and metrics of the int8 model's outputs over (x, y), as Model.evaluate: a
        float, a list [loss, *metrics], or a dict (return_dict). The loss and metrics are
        QuantizedModel.compile's, else the float model's compile's."""
        owner = f"QuantizedModel {self.name!r}.evaluate"
        head = self._loss_head(owner)
        x = self._checked_x(x, "evaluate")
        batch_size = _positive_int(batch_size, "batch_size", owner, 32)
        steps = _positive_int(steps, "steps", owner)
        ys = head._validate_y(y, len(x))
        weights = head._sample_weights(sample_weight, None, ys, owner)
        source = _Outputs(self, ArrayBatches([x], ys, batch_size, False, 0, weights))
        cbs = callbacks_mod.CallbackList(
            ([callbacks_mod.ProgressBar(verbose)] if verbose else []) + _callbacks(callbacks, owner),
            model=self, params={"steps": len(source) if steps is None else steps,
                                "verbose": verbose})
        values = head._evaluate_batches(source, owner, cbs, steps)
        if return_dict:
            return values
        result = [values[k] for k in head.metrics_names]
        return result[0] if len(result) == 1 else result

    def summary(self, line_length=None, print_fn=None):
        """A table of the float model's layers and how each runs: int8 (conv / dense, with
        what is fused or folded into it), on uint8 values, folded, or in float."""
        from .summary import summary_lines
        for line in summary_lines(self, line_length):
            (print_fn or print)(line)
