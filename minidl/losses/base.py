"""The Loss base class: configuration, target checks, and the two ways a loss computes.

A built-in loss names one of the backend's fused loss kernels (the contract's losses section):
model.fit runs them on the batch's rows (forward, then backward with the loss weight), and a
direct call, loss(y_true, y_pred), runs the same kernels as one differentiable op
(kernel_op.py), inside a GradientTape too. A loss of your own defines call(y_true, y_pred)
with minidl.ops; fit then records it on a tape and back-propagates by automatic
differentiation.

Cross-entropies fuse with a final softmax (or sigmoid) activation: the model then feeds
the layer's pre-activation (logits) to the loss, which is both faster and numerically
stable, and back-propagates dL/dlogits = (p - t) / N directly.
"""

import numbers

import numpy as np

from .. import autodiff, ops
from ..ops.core import as_tensor
from ..autodiff import Tensor
from ..naming import snake_case
from . import kernel_op

REDUCTIONS = ("sum_over_batch_size", "sum", "auto")
# the kernels whose forward also writes the probabilities (softmax / sigmoid of the logits)
PROBABILITY_KERNELS = ("softmax_ce", "sigmoid_ce")


class Loss:
    """Base class. Built-in losses choose one of the kernel families of run_kernel (kernel_for);
    a subclass of your own defines call(y_true, y_pred) with minidl.ops (Keras's Loss), whose
    gradient comes from automatic differentiation."""

    name = "loss"
    sparse = False  # targets are int32 class indices rather than arrays like the output
    # a loss of the whole sample (CTC): fit feeds it the (N, ...) output and its targets of
    # target_shape as they are, and it writes one loss per sample (not one per position)
    per_sample = False

    def __init__(self, from_logits=False, name=None, reduction="sum_over_batch_size"):
        if not isinstance(from_logits, bool):
            raise TypeError(f"{type(self).__name__}: from_logits must be a bool, got {from_logits!r}")
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {REDUCTIONS}, got "
                             f"{reduction!r}")
        self.from_logits = from_logits
        self.reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        if name is not None:
            self.name = name
        elif self.uses_call() and type(self).name == "loss":
            self.name = snake_case(type(self).__name__)
        self.kernel = None

    def get_config(self):
        if self.uses_call():
            return {"name": self.name, "reduction": self.reduction}
        return {"from_logits": self.from_logits}

    def call(self, y_true, y_pred):
        """Per-sample losses of a batch, written with minidl.ops (Keras's Loss.call)."""
        raise NotImplementedError

    def uses_call(self):
        return type(self).call is not Loss.call

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The batch's loss as a scalar Tensor (reduced as `reduction` says), differentiable
        with respect to y_pred inside a GradientTape. sample_weight (one per sample, or shaped
        as the per-position losses) multiplies each loss before the reduction, whose
        sum_over_batch_size still divides by the number of losses (as Keras's)."""
        values = self._values(y_true, y_pred)
        if sample_weight is not None:
            values = ops.multiply(values, _weights_like(sample_weight, values))
        return ops.sum(values) if self.reduction == "sum" else ops.mean(values)

    def _values(self, y_true, y_pred):
        """The per-sample (per-position) losses as a Tensor: call() for a loss of your own, the
        fused kernels for a built-in one."""
        if self.uses_call():
            if not ops.is_tensor(y_true):
                backend = as_tensor(y_pred).backend if ops.is_tensor(y_pred) else None
                y_true = ops.convert_to_tensor(y_true, backend=backend)
            return ops.cast(ops.convert_to_tensor(self.call(y_true, y_pred)), "float32")
        return kernel_op.per_sample_losses(self, y_true, y_pred)

    def kernel_for(self, output_activation):
        """(kernel, fused): the kernel family for an output with `output_activation`, and
        whether the model must then feed that layer's pre-activation (the activation fused
        into the loss)."""
        if self.uses_call():
            return "function", False
        raise NotImplementedError

    def configure(self, output_activation):
        """Choose the kernel fit runs for a model whose last layer has `output_activation`.

        Returns True when the model must feed the last layer's pre-activation (fused)."""
        self.kernel, fused = self.kernel_for(output_activation)
        return fused

    # ------------------------------------------------------------ direct calls (kernel_op.py)
    def direct_targets(self, y_true, pred):
        """y_true as the kernel's targets for predictions `pred` (a float32 Tensor (N, ..., K)):
        float32 and shaped as pred; sparse losses take int32 labels shaped as pred[:-1]."""
        if self.sparse:
            return kernel_op.sparse_labels(y_true, pred, self.name)
        return kernel_op.dense_targets(y_true, pred, self.name)

    def direct_pred(self, pred, kernel):
        """pred as the kernel reads it (a loss may renormalize probabilities first)."""
        return pred

    # ------------------------------------------------------------ targets
    def target_shape(self, batch, output_shape):
        """Sparse targets hold one class index per position: (batch,) + output_shape[:-1]."""
        return (batch,) + tuple(output_shape[:-1] if self.sparse else output_shape)

    @property
    def target_dtype(self):
        return "int32" if self.sparse else "float32"

    def prepare_targets(self, y, output_shape, argument="y"):
        """Validate targets and return them as a host array of target_dtype/target_shape; a
        loss of your own (call written with ops) takes targets of any shape, float32, and
        reads them as they are, as Keras runs it."""
        y = np.asarray(y)
        if y.dtype == object or not (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
            raise TypeError(f"{argument}: targets for loss {self.name!r} must be numeric, "
                            f"got dtype {y.dtype}")
        if np.iscomplexobj(y):
            raise TypeError(f"{argument}: complex targets (dtype {y.dtype}) are not supported")
        if self.sparse:
            return self._prepare_sparse(y, output_shape, argument)
        want = tuple(output_shape)
        if tuple(y.shape[1:]) != want:
            if want == (1,) and y.ndim == 1:
                y = y.reshape(-1, 1)
            elif not (self.uses_call() and y.ndim >= 1):
                raise ValueError(f"{argument}: loss {self.name!r} expects targets of shape "
                                 f"(None, {', '.join(map(str, want))}) like the model output, "
                                 f"got {tuple(y.shape)}")
        y = y.astype(np.float32)
        if not np.all(np.isfinite(y)):
            raise ValueError(f"{argument}: targets contain NaN or infinite values")
        return y

    def _prepare_sparse(self, y, output_shape, argument):
        positions = tuple(output_shape[:-1])   # one label per position, e.g. (H, W)
        if tuple(y.shape[1:]) == positions + (1,):
            y = y[..., 0]
        if y.ndim == 0 or tuple(y.shape[1:]) != positions:
            want = ", ".join(["N"] + [str(d) for d in positions])
            raise ValueError(f"{argument}: loss {self.name!r} expects integer class labels of "
                             f"shape ({want}) or ({want}, 1), got shape {tuple(y.shape)}")
        classes = output_shape[-1]
        if y.size:
            if np.issubdtype(y.dtype, np.floating) and not np.all(np.floor(y) == y):
                raise ValueError(f"{argument}: class labels must be whole numbers")
            low, high = y.min(), y.max()
            if low < 0 or high >= classes:
                raise ValueError(f"{argument}: class labels must be in [0, {classes - 1}] for a "
                                 f"model with {classes} outputs, got labels from {low} to {high}")
        return y.astype(np.int32)

    # ------------------------------------------------------------ compute
    def forward(self, b, loss, pred, targets, probs):
        """loss (N,) per-sample losses of pred (output or logits); probs receives the
        probabilities for the fused kernels. Returns what backward needs of this call (None
        for the kernels: probs and pred hold it); nothing of a call stays on the loss."""
        if self.per_sample:
            return self._sample_forward(b, loss, pred, targets)
        if self.kernel == "function":
            return self._function_forward(b, loss, pred, targets)
        self.run_kernel(b, self.kernel, loss, pred, targets, probs)
        return None

    def backward(self, b, dpred, pred, targets, probs, scale, step=None):
        """dpred = dloss/dpred * scale; step is what forward returned for this call."""
        if self.per_sample:
            self._sample_backward(b, dpred, scale, step)
        elif self.kernel == "function":
            self._function_backward(b, dpred, scale, step)
        else:
            self.run_kernel_backward(b, self.kernel, dpred, pred, targets, probs, scale)

    def run_kernel(self, b, kernel, loss, pred, targets, probs):
        """The backend's forward kernel of family `kernel` (rows (N, K) in, loss (N,) out)."""
        if kernel == "softmax_ce":
            b.softmax_cross_entropy_forward(probs, loss, pred, targets)
        elif kernel == "sigmoid_ce":
            b.sigmoid_cross_entropy_forward(probs, loss, pred, targets)
        elif kernel in ("ce", "bce"):
            b.cross_entropy_forward(loss, pred, targets, kernel == "bce")
        elif kernel == "mse":
            b.mean_squared_error_forward(loss, pred, targets)
        else:
            raise ValueError(f"loss {self.name!r}: no kernel family {kernel!r}")

    def run_kernel_backward(self, b, kernel, dpred, pred, targets, probs, scale):
        """The backward kernel matching run_kernel: dpred (N, K) = dloss/dpred * scale."""
        if kernel == "softmax_ce":
            b.softmax_cross_entropy_backward(dpred, probs, targets, scale)
        elif kernel == "sigmoid_ce":
            b.sigmoid_cross_entropy_backward(dpred, probs, targets, scale)
        elif kernel in ("ce", "bce"):
            b.cross_entropy_backward(dpred, pred, targets, kernel == "bce", scale)
        elif kernel == "mse":
            b.mean_squared_error_backward(dpred, pred, targets, scale)
        else:
            raise ValueError(f"loss {self.name!r}: no kernel family {kernel!r}")

    def _function_forward(self, b, loss, pred, targets):
        """Run call on the batch with a tape; every row of `loss` gets the batch's loss, so
        that the model's running sum over rows divided by the rows is the batch's value."""
        tape = autodiff.Tape(b)
        y_pred = Tensor(pred, b, requires_grad=True)
        with autodiff.on_backend(b), autodiff.recording(tape):
            total = ops.reshape(self(Tensor(targets, b), y_pred), (1,))
        b.strided_copy(loss, total.value, 0, (0,))
        return (tape, y_pred, total)

    def _function_backward(self, b, dpred, scale, step):
        """dpred = the tape's gradient of the batch's loss, times the loss weight: the model's
        scale is loss_weight / rows, and the batch's loss is already reduced over the rows."""
        if step is None:
            raise RuntimeError(f"loss {self.name!r}: backward needs the step its forward returned")
        tape, y_pred, total = step
        with autodiff.on_backend(b):
            (grad,) = tape.gradients([total], [ops.full((1,), scale * dpred.shape[0], backend=b)], [y_pred])
        if grad is None:
            b.fill(dpred, 0.0)
        else:
            b.copy(dpred, grad.value)

    def _sample_forward(self, b, loss, pred, targets):
        """A per-sample loss: `loss` (N,) gets each sample's loss (times N with reduction
        "sum", so that the model's mean over the samples is the batch's sum), on a tape."""
        tape = autodiff.Tape(b)
        y_pred = Tensor(pred, b, requires_grad=True)
        with autodiff.on_backend(b), autodiff.recording(tape):
            values = self._values(Tensor(targets, b), y_pred)
            if self.reduction == "sum":
                values = ops.multiply(values, float(values.shape[0]))
        b.copy(loss, values.value)
        return (tape, y_pred, values)

    def _sample_backward(self, b, dpred, scale, step):
        """dpred = the gradient of scale * sum(per-sample losses): the model's scale is
        loss_weight / N (one row per sample)."""
        if step is None:
            raise RuntimeError(f"loss {self.name!r}: backward needs the step its forward returned")
        tape, y_pred, values = step
        with autodiff.on_backend(b):
            (grad,) = tape.gradients([values], [ops.full(values.shape, scale, backend=b)], [y_pred])
        if grad is None:
            b.fill(dpred, 0.0)
        else:
            b.copy(dpred, grad.value)

    @property
    def produces_probs(self):
        return self.kernel in PROBABILITY_KERNELS


def check_probability(value, argument, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{owner}: {argument} must be a number in [0, 1], got {value!r}")
    return float(value)


def check_non_negative(value, argument, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"{owner}: {argument} must be a number >= 0, got {value!r}")
    return float(value)


class LossFunctionWrapper(Loss):
    """A Python function of (y_true, y_pred) as a Loss (what compile(loss=function) makes)."""

    def __init__(self, fn, name=None, reduction="sum_over_batch_size", **kwargs):
        if not callable(fn):
            raise TypeError(f"LossFunctionWrapper: fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.fn_kwargs = kwargs
        super().__init__(name=name or getattr(fn, "__name__", "loss"), reduction=reduction)

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self.fn_kwargs)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


def _weights_like(sample_weight, values):
    """sample_weight as a float32 Tensor of values' rank (Keras squeezes or expands the
    trailing axes of size 1), on values' backend."""
    weight = ops.cast(ops.convert_to_tensor(sample_weight, backend=values.backend)
                      if not ops.is_tensor(sample_weight) else sample_weight, "float32")
    while len(weight.shape) > len(values.shape) and weight.shape[-1] == 1:
        weight = ops.squeeze(weight, -1)
    while len(weight.shape) < len(values.shape):
        weight = ops.expand_dims(weight, -1)
    return weight
