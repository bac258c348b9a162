"""row_loss_forward / row_loss_backward on the cpu backend (csrc/row_loss.c): a mixin of
CpuBackend. Predictions and targets are (N, K) float32 rows."""

from ..base import ROW_LOSSES
from ._ffi import checked, output


def _kind_code(op, kind):
    try:
        return ROW_LOSSES.index(kind)
    except ValueError:
        raise ValueError(f"{op}: unknown loss kind {kind!r}; known: {', '.join(ROW_LOSSES)}") from None


def _rows(op, pred):
    if pred.ndim != 2:
        raise ValueError(f"{op}: expects 2-D (N, K) predictions, got shape {tuple(pred.shape)}")
    return pred.shape


class RowLossOps:
    """The row losses of CpuBackend."""

    def row_loss_forward(self, loss, pred, targets, kind, delta=1.0):
        op = "row_loss_forward"
        code = _kind_code(op, kind)
        rows, k = _rows(op, pred)
        self._lib.minidl_row_loss_forward(output(op, "loss", loss, (rows,)), checked(op, "pred", pred),
                                          checked(op, "targets", targets, pred.shape), code, float(delta), rows, k)

    def row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        op = "row_loss_backward"
        code = _kind_code(op, kind)
        rows, k = _rows(op, pred)
        self._lib.minidl_row_loss_backward(output(op, "dpred", dpred, pred.shape), checked(op, "pred", pred),
                                           checked(op, "targets", targets, pred.shape), code, float(delta),
                                           float(scale), rows, k)
