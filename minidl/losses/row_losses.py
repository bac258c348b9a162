"""The losses computed along the last axis of (N, K) rows: the mean squared error on its own
kernel, and the regression, probabilistic and hinge losses of Keras on the backend's
row_loss_forward / row_loss_backward (`kind`, one of base.ROW_LOSSES of the backend contract).
Outputs of rank > 2 are scored per position, as Keras."""

import numbers

import numpy as np

from .. import ops
from .base import Loss


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def __init__(self):
        super().__init__(from_logits=False)

    def get_config(self):
        return {}

    def kernel_for(self, output_activation):
        return "mse", False


class _RowLoss(Loss):
    """A loss run by the backend's row_loss kernels of kind `kind`."""

    kind = None

    def __init__(self):
        super().__init__(from_logits=False)

    def get_config(self):
        return {}

    def kernel_for(self, output_activation):
        return "row", False

    def _delta(self):
        return 1.0

    def run_kernel(self, b, kernel, loss, pred, targets, probs):
        b.row_loss_forward(loss, pred, targets, self.kind, self._delta())

    def run_kernel_backward(self, b, kernel, dpred, pred, targets, probs, scale):
        b.row_loss_backward(dpred, pred, targets, self.kind, self._delta(), scale)


def _row_loss_class(class_name, kind, doc, base=None):
    """A row loss class that only names its kind (Keras's name is the kind)."""
    return type(class_name, (base or _RowLoss,), {"name": kind, "kind": kind, "__doc__": doc,
                                                  "__module__": __name__})


MeanAbsoluteError = _row_loss_class("MeanAbsoluteError", "mean_absolute_error",
                                    "mean(|y_pred - y_true|) over the last axis.")
MeanAbsolutePercentageError = _row_loss_class(
    "MeanAbsolutePercentageError", "mean_absolute_percentage_error",
    "100 * mean(|y_pred - y_true| / max(|y_true|, 1e-7)) over the last axis.")
MeanSquaredLogarithmicError = _row_loss_class(
    "MeanSquaredLogarithmicError", "mean_squared_logarithmic_error",
    "mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1))^2) over the last axis.")
LogCosh = _row_loss_class("LogCosh", "log_cosh", "mean(log(cosh(y_pred - y_true))) over the last axis.")
Poisson = _row_loss_class("Poisson", "poisson", "mean(y_pred - y_true * log(y_pred + 1e-7)) over the last axis.")
KLDivergence = _row_loss_class("KLDivergence", "kl_divergence",
                               "sum(t log(t / p)) over the last axis, t and p clipped to [1e-7, 1].")
CategoricalHinge = _row_loss_class("CategoricalHinge", "categorical_hinge",
                                   "max(neg - pos + 1, 0), pos = sum(t p), neg = max((1 - t) p) over the last axis.")


class Huber(_RowLoss):
    """0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) elsewhere, e = y_pred - y_true."""

    name, kind = "huber_loss", "huber"

    def __init__(self, delta=1.0):
        super().__init__()
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not delta >= 0:
            raise ValueError(f"Huber: delta must be a number >= 0, got {delta!r}")
        self.delta = float(delta)

    def _delta(self):
        return self.delta

    def get_config(self):
        return {"delta": self.delta}


class _HingeTargets(_RowLoss):
    """Hinge losses take -1/1 targets; 0/1 targets are converted (2t - 1) as Keras does, when
    every target of the array (Keras: of the batch) is 0 or 1."""

    def prepare_targets(self, y, output_shape, argument="y"):
        y = super().prepare_targets(y, output_shape, argument)
        if np.all((y == 0) | (y == 1)):
            return (2.0 * y - 1.0).astype(y.dtype)
        return y

    def direct_targets(self, y_true, pred):
        # the same conversion on the device, without a branch (is_binary is 1.0 or 0.0), so
        # that nothing leaves it
        t = super().direct_targets(y_true, pred)
        binary = ops.logical_or(ops.equal(t, 0.0), ops.equal(t, 1.0))
        is_binary = ops.min(ops.cast(binary, "float32"))
        return t + is_binary * (t - 1.0)


Hinge = _row_loss_class("Hinge", "hinge", "mean(max(1 - t p, 0)) over the last axis, t in -1/1.", _HingeTargets)
SquaredHinge = _row_loss_class("SquaredHinge", "squared_hinge", "mean(max(1 - t p, 0)^2) over the last axis, t in -1/1.",
                               _HingeTargets)


class CosineSimilarity(_RowLoss):
    """-sum(normalize(t) * normalize(p)) over the last axis (norms floored at 1e-7)."""

    name, kind = "cosine_similarity", "cosine_similarity"

    def __init__(self, axis=-1):
        super().__init__()
        if axis != -1:
            raise ValueError(f"CosineSimilarity: only axis=-1 (the last axis) is supported, got {axis!r}")
        self.axis = -1

    def get_config(self):
        return {"axis": self.axis}
