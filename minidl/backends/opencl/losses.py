"""The losses section on the opencl backend (kernels/loss.cl, kernels/row_loss.cl): a mixin of
OpenCLBackend (its _run1d, axpby and kernel profile). The contract
(minidl/backends/contract/losses.py) checked every shape and says whether the targets are
sparse. Losses and gradients stay on the device; one work-item per row for the forward
kernels, per element for the backward ones."""

import math

from ..contract.losses import ROW_LOSSES


class LossOps:
    """The fused loss kernels of OpenCLBackend."""

    def _softmax_cross_entropy_forward(self, probs, loss, logits, targets, sparse):
        rows, k = logits.shape
        name = "softmax_cross_entropy_forward_sparse" if sparse else "softmax_cross_entropy_forward_dense"
        self.profile.softmax_cross_entropy_forward(name, rows, k, probs, loss, logits, targets)

    def _softmax_cross_entropy_backward(self, dlogits, probs, targets, scale, sparse):
        if sparse:
            self._run1d("loss.cl", "softmax_cross_entropy_backward_sparse", probs.size, dlogits,
                        probs, targets, scale, probs.shape[-1], probs.size)
        else:
            self.axpby(dlogits, scale, probs, -scale, targets)

    def _sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        k = logits.shape[-1]
        rows = math.prod(logits.shape[:-1])
        self._run1d("loss.cl", "sigmoid_cross_entropy_forward", rows, probs, loss, logits, targets, rows, k)

    def _sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        k = probs.shape[-1]
        self.axpby(dlogits, scale / k, probs, -scale / k, targets)

    def _cross_entropy_forward(self, loss, probs, targets, binary, sparse):
        k = probs.shape[-1]
        rows = math.prod(probs.shape[:-1])
        if binary:
            name = "cross_entropy_forward_binary"
        elif sparse:
            name = "cross_entropy_forward_sparse"
        else:
            name = "cross_entropy_forward_dense"
        self._run1d("loss.cl", name, rows, loss, probs, targets, rows, k)

    def _cross_entropy_backward(self, dprobs, probs, targets, binary, scale, sparse):
        k = probs.shape[-1]
        n = probs.size
        if binary:
            self._run1d("loss.cl", "cross_entropy_backward_binary", n, dprobs, probs, targets, scale / k, n)
        elif sparse:
            self._run1d("loss.cl", "cross_entropy_backward_sparse", n, dprobs, probs, targets, scale, k, n)
        else:
            self._run1d("loss.cl", "cross_entropy_backward_dense", n, dprobs, probs, targets, scale, n)

    def _mean_squared_error_forward(self, loss, pred, targets):
        k = pred.shape[-1]
        rows = math.prod(pred.shape[:-1])
        self._run1d("loss.cl", "mean_squared_error_forward", rows, loss, pred, targets, rows, k)

    def _mean_squared_error_backward(self, dpred, pred, targets, scale):
        k = pred.shape[-1]
        self.axpby(dpred, 2.0 * scale / k, pred, -2.0 * scale / k, targets)

    def _row_loss_forward(self, loss, pred, targets, kind, delta):
        rows, k = pred.shape
        self._run1d("row_loss.cl", "row_loss_forward", rows, loss, pred, targets, rows, k,
                    ROW_LOSSES.index(kind), delta)

    def _row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        rows, k = pred.shape
        self._run1d("row_loss.cl", "row_loss_backward", rows, dpred, pred, targets, rows, k,
                    ROW_LOSSES.index(kind), delta, scale)
