"""row_loss_forward / row_loss_backward on the opencl backend (kernels/row_loss.cl): a mixin of
OpenCLBackend, one work-item per row; losses and gradients stay on the device."""

from ..base import ROW_LOSSES


def _kind_code(op, kind):
    try:
        return ROW_LOSSES.index(kind)
    except ValueError:
        raise ValueError(f"opencl {op}: unknown loss kind {kind!r}; known: {', '.join(ROW_LOSSES)}") from None


class RowLossOps:
    """The row losses of OpenCLBackend."""

    def _row_loss_args(self, op, out, out_shape, pred, targets, kind):
        code = _kind_code(op, kind)
        if len(pred.shape) != 2:
            raise ValueError(f"opencl {op}: expects 2-D (N, K) predictions, got shape {tuple(pred.shape)}")
        self._check(op, "targets", targets, pred.shape)
        self._check(op, "out", out, out_shape)
        return pred.shape[0], pred.shape[1], code

    def row_loss_forward(self, loss, pred, targets, kind, delta=1.0):
        rows, k, code = self._row_loss_args("row_loss_forward", loss, pred.shape[:1], pred, targets, kind)
        self._run1d("row_loss.cl", "row_loss_forward", rows, loss, pred, targets, rows, k, code, float(delta))

    def row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        rows, k, code = self._row_loss_args("row_loss_backward", dpred, pred.shape, pred, targets, kind)
        self._run1d("row_loss.cl", "row_loss_backward", rows, dpred, pred, targets, rows, k, code,
                    float(delta), float(scale))
