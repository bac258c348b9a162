"""The losses section of the contract: the fused loss kernels (softmax, sigmoid and plain
cross-entropies, mean squared error, the row losses of Keras 3) and their gradients.

Targets are int32 class indices (N,) ("sparse") or float rows shaped like the predictions
("dense"); the dtype tells them apart (checks.is_sparse). The public ops check every shape once
and tell the implementation whether the targets are sparse; a backend implements the underscore
names (numpy_ops/losses.py, cpu/losses.py, opencl/losses.py). Whether sparse class indices lie
in [0, K) is a check of the values: the kernels make it (cpu) or the host reference (numpy),
since reading a device tensor's values would cost a transfer.
"""

from ..checks import is_sparse
from .checks import same_shape

# The kinds of row_loss_forward/backward, in the order of their integer codes in the C and
# OpenCL kernels (csrc/row_loss.c, kernels/row_loss.cl).
ROW_LOSSES = ("mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_logarithmic_error",
              "huber", "log_cosh", "poisson", "kl_divergence", "hinge", "squared_hinge",
              "categorical_hinge", "cosine_similarity")


def scores_2d(op, name, scores):
    """(N, K) of the class scores of a categorical op, which must be 2-D."""
    if len(scores.shape) != 2:
        raise ValueError(f"{op}: {name} must be 2-D (N, K), got shape {tuple(scores.shape)}")
    return scores.shape


def class_targets(op, targets, scores):
    """Check targets against 2-D scores (N, K): sparse (N,) or dense (N, K); True when sparse."""
    if is_sparse(targets):
        same_shape(op, "targets (sparse)", targets, scores.shape[:1])
        return True
    same_shape(op, "targets (dense)", targets, scores.shape)
    return False


def _rows(op, name, t):
    """The shape of per-row results (every axis but the last) of a tensor of rank >= 1."""
    if not t.shape:
        raise ValueError(f"{op}: {name} must have at least 1 axis (..., K), got a scalar")
    return t.shape[:-1]


def _row_loss(op, out_name, out, out_shape, pred, targets, kind):
    if kind not in ROW_LOSSES:
        raise ValueError(f"{op}: unknown loss kind {kind!r}; known: {', '.join(ROW_LOSSES)}")
    scores_2d(op, "pred", pred)
    same_shape(op, "targets", targets, pred.shape)
    same_shape(op, out_name, out, out_shape)


class LossesSection:
    """The contract's loss kernels; a backend implements the underscore names."""

    def softmax_cross_entropy_forward(self, probs, loss, logits, targets):
        """probs (N, K) = softmax(logits) along the last axis; loss (N,) = -sum(t * log probs)
        per sample (a logsumexp: never log 0)."""
        op = "softmax_cross_entropy_forward"
        n, _ = scores_2d(op, "logits", logits)
        sparse = class_targets(op, targets, logits)
        same_shape(op, "probs", probs, logits.shape)
        same_shape(op, "loss", loss, (n,))
        self._softmax_cross_entropy_forward(probs, loss, logits, targets, sparse)

    def softmax_cross_entropy_backward(self, dlogits, probs, targets, scale):
        """dlogits (N, K) = (probs - onehot(targets)) * scale."""
        op = "softmax_cross_entropy_backward"
        scores_2d(op, "probs", probs)
        sparse = class_targets(op, targets, probs)
        same_shape(op, "dlogits", dlogits, probs.shape)
        self._softmax_cross_entropy_backward(dlogits, probs, targets, float(scale), sparse)

    def sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        """probs = sigmoid(logits) (..., K); loss (...) = mean over the last axis of the stable
        logistic loss max(x, 0) - x t + log(1 + exp(-|x|))."""
        op = "sigmoid_cross_entropy_forward"
        rows = _rows(op, "logits", logits)
        same_shape(op, "targets", targets, logits.shape)
        same_shape(op, "probs", probs, logits.shape)
        same_shape(op, "loss", loss, rows)
        self._sigmoid_cross_entropy_forward(probs, loss, logits, targets)

    def sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        """dlogits = (probs - targets) * scale / K, K the size of the last axis."""
        op = "sigmoid_cross_entropy_backward"
        _rows(op, "probs", probs)
        same_shape(op, "targets", targets, probs.shape)
        same_shape(op, "dlogits", dlogits, probs.shape)
        self._sigmoid_cross_entropy_backward(dlogits, probs, targets, float(scale))

    def cross_entropy_forward(self, loss, probs, targets, binary):
        """Cross-entropy of probabilities not produced by a fused activation, probs clipped to
        [1e-7, 1 - 1e-7] as Keras does. binary=False: loss (N,) = -sum(t * log p) of probs
        (N, K), targets sparse or dense; binary=True: loss (...) = mean over the last axis of
        -(t log p + (1-t) log(1-p)), targets shaped as probs."""
        op = "cross_entropy_forward"
        if binary:
            rows = _rows(op, "probs", probs)
            same_shape(op, "targets", targets, probs.shape)
            same_shape(op, "loss", loss, rows)
            self._cross_entropy_forward(loss, probs, targets, True, False)
            return
        n, _ = scores_2d(op, "probs", probs)
        sparse = class_targets(op, targets, probs)
        same_shape(op, "loss", loss, (n,))
        self._cross_entropy_forward(loss, probs, targets, False, sparse)

    def cross_entropy_backward(self, dprobs, probs, targets, binary, scale):
        """dprobs = the gradient of cross_entropy_forward (zero where the clip is active), times
        scale."""
        op = "cross_entropy_backward"
        if binary:
            _rows(op, "probs", probs)
            same_shape(op, "targets", targets, probs.shape)
            sparse = False
        else:
            scores_2d(op, "probs", probs)
            sparse = class_targets(op, targets, probs)
        same_shape(op, "dprobs", dprobs, probs.shape)
        self._cross_entropy_backward(dprobs, probs, targets, bool(binary), float(scale), sparse)

    def mean_squared_error_forward(self, loss, pred, targets):
        """loss (...) = mean over the last axis of (pred - targets) ** 2, per sample."""
        op = "mean_squared_error_forward"
        rows = _rows(op, "pred", pred)
        same_shape(op, "targets", targets, pred.shape)
        same_shape(op, "loss", loss, rows)
        self._mean_squared_error_forward(loss, pred, targets)

    def mean_squared_error_backward(self, dpred, pred, targets, scale):
        """dpred = 2 * (pred - targets) / K * scale."""
        op = "mean_squared_error_backward"
        _rows(op, "pred", pred)
        same_shape(op, "targets", targets, pred.shape)
        same_shape(op, "dpred", dpred, pred.shape)
        self._mean_squared_error_backward(dpred, pred, targets, float(scale))

    def row_loss_forward(self, loss, pred, targets, kind, delta=1.0):
        """loss (N,) = Keras's loss `kind` (one of ROW_LOSSES) of each row of pred (N, K) against
        dense targets (N, K): the mean over the last axis of mean_absolute_error,
        mean_absolute_percentage_error, mean_squared_logarithmic_error, huber (with `delta`),
        log_cosh, poisson, hinge, squared_hinge (targets already -1/1); the sum for
        kl_divergence; the whole row for categorical_hinge and cosine_similarity."""
        _row_loss("row_loss_forward", "loss", loss, pred.shape[:1], pred, targets, kind)
        self._row_loss_forward(loss, pred, targets, kind, float(delta))

    def row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        """dpred (N, K) = the gradient of row_loss_forward's loss with respect to pred, times scale
        (subgradients as TensorFlow's at the kinks; zero where a clip is active)."""
        _row_loss("row_loss_backward", "dpred", dpred, pred.shape, pred, targets, kind)
        self._row_loss_backward(dpred, pred, targets, kind, float(delta), float(scale))
