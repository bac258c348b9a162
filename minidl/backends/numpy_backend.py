"""The numpy reference backend: every op of the contract in plain, vectorized numpy.

It is the oracle every other backend is tested against, so each op favours the
obviously-correct formulation (stable softmax, logsumexp losses, float64 reductions)
over speed. Tensors are ordinary C-contiguous numpy arrays. The backend runs in
float32 by default, or in float64 (`NumpyBackend(dtype="float64")`) for finite-difference
gradient checks: every float tensor it creates then uses float64, int32 stays int32.
"""

import numpy as np

from .. import activations
from .base import Backend
from .host_memory import HostMemory
from . import color_args, image_args
from .numpy_ops import (activations as numpy_activations, color, images, losses,
                        row_losses, upsampling, windows)
from .numpy_ops.attention import NumpyAttentionOps
from .numpy_ops.depthwise import NumpyDepthwiseOps
from .numpy_ops.layer_ops import NumpyLayerOps
from .numpy_ops.normalization import NumpyNormalizationOps
from .numpy_ops.optimizers import NumpyOptimizerOps
from .numpy_ops.recurrent import NumpyRecurrentOps
from .gru_reset_before import GruResetBeforeOps
from .recurrent_host import HostRecurrentOps
from .numpy_ops.quantized import NumpyQuantizedOps
from .numpy_ops.quantizers import NumpyQuantizerOps
from .numpy_ops.regularizers import NumpyRegularizerOps
from .numpy_ops.binary import NumpyBinaryOps
from .numpy_ops.tensor_ops import NumpyTensorOps
from .rounded_operands import RoundedOperands
from .checks import (check_concat, check_dropout_args, check_scalar_out, check_shape,
                     require_input)



class NumpyBackend(NumpyAttentionOps, NumpyTensorOps, NumpyLayerOps, NumpyRecurrentOps, HostRecurrentOps, GruResetBeforeOps, NumpyQuantizerOps,
                   NumpyBinaryOps, NumpyDepthwiseOps, NumpyOptimizerOps, NumpyNormalizationOps, NumpyQuantizedOps,
                   NumpyRegularizerOps,
                   HostMemory, RoundedOperands, Backend):
    """Host-memory backend on numpy; see minidl.backends.base.Backend for each op's contract."""

    name = "numpy"

    def __init__(self, dtype="float32"):
        if dtype not in ("float32", "float64"):
            raise ValueError(f"NumpyBackend: dtype must be 'float32' or 'float64', got {dtype!r}")
        self.dtype = dtype
        self._float = np.dtype(dtype)

    # memory ops: HostMemory

    def info(self):
        return {"name": self.name, "dtype": self.dtype}

    # ------------------------------------------------------ elementwise
    def add(self, out, a, b):
        check_shape("add", "b", b, a.shape)
        check_shape("add", "out", out, a.shape)
        np.add(a, b, out=out)

    def axpby(self, out, alpha, x, beta, y):
        check_shape("axpby", "y", y, x.shape)
        check_shape("axpby", "out", out, x.shape)
        out[...] = alpha * x + beta * y

    def multiply(self, out, a, b):
        check_shape("multiply", "b", b, a.shape)
        check_shape("multiply", "out", out, a.shape)
        np.multiply(a, b, out=out)

    def bias_add(self, out, x, bias):
        check_shape("bias_add", "bias", bias, x.shape[-1:])
        check_shape("bias_add", "out", out, x.shape)
        np.add(x, bias, out=out)

    def bias_grad(self, dbias, dout):
        check_shape("bias_grad", "dbias", dbias, dout.shape[-1:])
        dbias[...] = dout.reshape(-1, dout.shape[-1]).sum(axis=0)

    # ------------------------------------------------------ activations
    def _check_activation(self, op, name):
        activations.code(op, name)

    def activation_forward(self, out, x, name, alpha=0.0):
        op = "activation_forward"
        self._check_activation(op, name)
        check_shape(op, "out", out, x.shape)
        out[...] = numpy_activations.forward(name, x, alpha)

    def activation_backward(self, dx, dout, y, name, alpha=0.0, x=None):
        op = "activation_backward"
        self._check_activation(op, name)
        check_shape(op, "dout", dout, y.shape)
        check_shape(op, "dx", dx, y.shape)
        if name in activations.NEEDS_INPUT:
            require_input(op, name, x, y.shape)
        dx[...] = numpy_activations.backward(name, dout, y, x, alpha)

    # ------------------------------------------------------------- gemm
    def gemm(self, out, a, b, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, precision=None):
        a, b = self._rounded("gemm", "a", a, precision), self._rounded("gemm", "b", b, precision)
        op_a = a.T if trans_a else a
        op_b = b.T if trans_b else b
        if op_a.ndim != 2 or op_b.ndim != 2 or op_a.shape[1] != op_b.shape[0]:
            raise ValueError(f"gemm: op(a) {tuple(op_a.shape)} (trans_a={trans_a}) and op(b) "
                             f"{tuple(op_b.shape)} (trans_b={trans_b}) cannot be multiplied")
        check_shape("gemm", "out", out, (op_a.shape[0], op_b.shape[1]))
        product = op_a @ op_b
        if alpha != 1.0:
            product *= alpha
        if beta == 0.0:
            # BLAS semantics: out is not read when beta is 0 (it may hold garbage or NaN)
            out[...] = product
        else:
            out[...] = product + beta * out

    # ------------------------------------------------------ convolution
    def _conv2d_forward(self, out, x, weight, bias, plan, precision):
        if precision is not None:
            self._rounded_conv2d_forward(out, x, weight, bias, plan, precision)
            return
        windows.conv2d_forward(out, x, weight, bias, plan)

    def _conv2d_backward_data(self, dx, dout, weight, plan, precision):
        if precision is not None:
            self._rounded_conv2d_backward_data(dx, dout, weight, plan, precision)
            return
        windows.conv2d_backward_data(dx, dout, weight, plan)

    def _conv2d_backward_filter(self, dweight, dbias, dout, x, plan, precision):
        if precision is not None:
            self._rounded_conv2d_backward_filter(dweight, dbias, dout, x, plan, precision)
            return
        windows.conv2d_backward_filter(dweight, dbias, dout, x, plan)

    # ---------------------------------------------------------- pooling (checked by contract/pooling.py)
    def _max_pool2d_forward(self, out, argmax, x, plan):
        windows.max_pool2d_forward(out, argmax, x, plan)

    def _max_pool2d_backward(self, dx, dout, argmax, plan):
        windows.max_pool2d_backward(dx, dout, argmax, plan)

    def _avg_pool2d_forward(self, out, x, plan):
        windows.avg_pool2d_forward(out, x, plan)

    def _avg_pool2d_backward(self, dx, dout, plan):
        windows.avg_pool2d_backward(dx, dout, plan)

    def _global_avg_pool_forward(self, out, x):
        out[...] = x.mean(axis=(1, 2))

    def _global_avg_pool_backward(self, dx, dout):
        _, h, w, _ = dx.shape
        dx[...] = (dout / (h * w))[:, None, None, :]

    def _pad2d_forward(self, out, x, pads):
        top, _, left, _ = pads
        _, h, w, _ = x.shape
        out[...] = 0
        out[:, top:top + h, left:left + w, :] = x

    def _pad2d_backward(self, dx, dout, pads):
        top, _, left, _ = pads
        _, h, w, _ = dx.shape
        dx[...] = dout[:, top:top + h, left:left + w, :]

    # ------------------------------------------------------ concatenate
    def concat_forward(self, out, xs):
        check_concat("concat_forward", xs, out, "xs", "out")
        np.concatenate(xs, axis=-1, out=out)

    def concat_backward(self, dxs, dout):
        check_concat("concat_backward", dxs, dout, "dxs", "dout")
        start = 0
        for dx in dxs:
            dx[...] = dout[..., start:start + dx.shape[-1]]
            start += dx.shape[-1]

    # ---------------------------------------------------------- dropout
    def dropout_forward(self, out, mask, x, rate, seed):
        op = "dropout_forward"
        check_dropout_args(op, rate, seed)
        check_shape(op, "mask", mask, x.shape)
        check_shape(op, "out", out, x.shape)
        # Philox is counter-based: the key alone fixes the stream, whatever ran before.
        # Uniforms are drawn in float64 so float32 and float64 backends drop the same units.
        generator = np.random.Generator(np.random.Philox(key=int(seed) % 2 ** 64))
        keep = generator.random(x.shape) < 1 - rate
        mask[...] = keep / (1 - rate)
        np.multiply(x, mask, out=out)

    # ----------------------------------------------------------- images
    def upsample2d_forward(self, out, x, size, interpolation):
        sh, sw, bilinear = image_args.check_upsample("upsample2d_forward", x.shape, out.shape, size,
                                                     interpolation)
        upsampling.forward(out, x, sh, sw, bilinear)

    def upsample2d_backward(self, dx, dout, size, interpolation):
        sh, sw, bilinear = image_args.check_upsample("upsample2d_backward", dx.shape, dout.shape, size,
                                                     interpolation)
        upsampling.backward(dx, dout, sh, sw, bilinear)

    def image_transform_forward(self, out, x, transforms, interpolation, fill_mode, fill_value):
        image_args.check_transform("image_transform_forward", out.shape, x.shape, transforms.shape,
                                   interpolation, fill_mode)
        images.transform_forward(out, x, transforms, interpolation, fill_mode, float(fill_value))

    def image_transform_backward(self, dx, dout, transforms, interpolation, fill_mode):
        image_args.check_transform("image_transform_backward", dout.shape, dx.shape,
                                   transforms.shape, interpolation, fill_mode)
        images.transform_backward(dx, dout, transforms, interpolation, fill_mode)

    def image_random_transforms(self, transforms, kind, ranges, height, width, seed):
        image_args.check_random_transforms("image_random_transforms", transforms, kind, ranges,
                                           height, width)
        images.random_transforms(transforms, kind, ranges, height, width, seed)

    def random_contrast_forward(self, out, x, lower, upper, value_range, seed):
        op = "random_contrast_forward"
        image_args.check_images(op, out, x)
        images.contrast_forward(out, x, lower, upper, image_args.check_value_range(op, value_range), seed)

    def random_brightness_forward(self, out, x, lower, upper, value_range, seed):
        op = "random_brightness_forward"
        image_args.check_images(op, out, x)
        images.brightness_forward(out, x, lower, upper, image_args.check_value_range(op, value_range), seed)

    def random_color_forward(self, out, x, kind, params, value_range, seed):
        op = "random_color_forward"
        _, params = color_args.check_random_color(op, out, x, kind, params)
        color.random_color_forward(out, x, kind, params, color_args.check_value_range(op, value_range),
                                   seed)

    def auto_contrast_forward(self, out, x, value_range):
        op = "auto_contrast_forward"
        image_args.check_images(op, out, x)
        color.auto_contrast_forward(out, x, image_args.check_value_range(op, value_range))

    def channel_scale_shift(self, out, x, scale, shift):
        check_shape("channel_scale_shift", "scale", scale, x.shape[-1:])
        check_shape("channel_scale_shift", "shift", shift, x.shape[-1:])
        check_shape("channel_scale_shift", "out", out, x.shape)
        out[...] = x * scale + shift

    # ----------------------------------------------------------- losses
    def softmax_cross_entropy_forward(self, probs, loss, logits, targets):
        losses.softmax_cross_entropy_forward(probs, loss, logits, targets)

    def softmax_cross_entropy_backward(self, dlogits, probs, targets, scale):
        losses.softmax_cross_entropy_backward(dlogits, probs, targets, scale)

    def sigmoid_cross_entropy_forward(self, probs, loss, logits, targets):
        losses.sigmoid_cross_entropy_forward(probs, loss, logits, targets)

    def sigmoid_cross_entropy_backward(self, dlogits, probs, targets, scale):
        losses.sigmoid_cross_entropy_backward(dlogits, probs, targets, scale)

    def cross_entropy_forward(self, loss, probs, targets, binary):
        losses.cross_entropy_forward(loss, probs, targets, binary)

    def cross_entropy_backward(self, dprobs, probs, targets, binary, scale):
        losses.cross_entropy_backward(dprobs, probs, targets, binary, scale)

    def mean_squared_error_forward(self, loss, pred, targets):
        losses.mean_squared_error_forward(loss, pred, targets)

    def mean_squared_error_backward(self, dpred, pred, targets, scale):
        losses.mean_squared_error_backward(dpred, pred, targets, scale)

    # ------------------------------------------------ reductions/metrics
    @staticmethod
    def _store(op, out, value, accumulate):
        check_scalar_out(op, out)
        out[0] = out[0] + value if accumulate else value

    def sum(self, out, x, accumulate=False):
        self._store("sum", out, x.sum(dtype=np.float64), accumulate)

    def _target_classes(self, op, pred, targets):
        """The target class of each row: sparse indices as given, dense targets by argmax."""
        if losses.check_targets(op, targets, pred):
            return targets
        return targets.argmax(axis=-1)

    def _store_hits(self, op, out, hits, weights, accumulate):
        """out = the number of hits (bool array), or the sum of their weights."""
        if weights is None:
            self._store(op, out, np.count_nonzero(hits), accumulate)
            return
        check_shape(op, "weights", weights, hits.shape)
        self._store(op, out, weights.sum(where=hits, dtype=np.float64), accumulate)

    def categorical_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        op = "categorical_accuracy"
        classes = self._target_classes(op, pred, targets)
        # numpy's argmax returns the first maximum: ties go to the lowest index. A row holding
        # a NaN never counts as correct (argmax would pick the NaN and hide the divergence).
        valid = ~np.isnan(pred).any(axis=-1)
        self._store_hits(op, out, (pred.argmax(axis=-1) == classes) & valid, weights, accumulate)

    def binary_accuracy(self, out, pred, targets, accumulate=False, weights=None):
        op = "binary_accuracy"
        check_shape(op, "targets", targets, pred.shape)
        hits = ((pred > 0.5) == (targets > 0.5)) & ~np.isnan(pred)
        self._store_hits(op, out, hits, weights, accumulate)

    def top_k_accuracy(self, out, pred, targets, k, accumulate=False, weights=None):
        op = "top_k_accuracy"
        classes = self._target_classes(op, pred, targets)
        target_scores = pred[np.arange(pred.shape[0]), classes]
        strictly_larger = (pred > target_scores[:, None]).sum(axis=-1)
        valid = ~np.isnan(pred).any(axis=-1)   # a row holding a NaN never counts as correct
        self._store_hits(op, out, (strictly_larger < k) & valid, weights, accumulate)

    def all_finite(self, out, x):
        check_scalar_out("all_finite", out)
        out[0] = 1.0 if np.isfinite(x).all() else 0.0

    def row_loss_forward(self, loss, pred, targets, kind, delta=1.0):
        row_losses.row_loss_forward(loss, pred, targets, kind, delta)

    def row_loss_backward(self, dpred, pred, targets, kind, delta, scale):
        row_losses.row_loss_backward(dpred, pred, targets, kind, delta, scale)


def create(**options):
    """The registry's entry point: numpy is always available."""
    return NumpyBackend(**options)
