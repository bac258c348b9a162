"""Fast binary inference: lq.convert(model) makes every QuantConv2D and QuantDense whose input
and kernel are both larq signs predict with the backend's bit-packed xnor-popcount ops.

The kernel's sign bits are packed once (again after any training step changed the latent
weights), the input's per batch; the convolution gives the exact integer dot products of the
+-1 values, so predictions equal the float path's up to float rounding of the sums. larq's
padding conventions hold: pad_values=1 pads with +1, the default 0 leaves padding out.
Training (fit, train_on_batch) always runs the float path with its straight-through gradients.
A BatchNormalization between two binary layers is folded into an integer threshold
(threshold_fusion.py) unless convert(fold_batchnorm=False).
"""

from ..models.model import Model
from . import threshold_fusion

SIGN_QUANTIZERS = ("ste_sign", "approx_sign", "swish_sign")   # forward: larq.math.sign


class BinaryLayerState:
    """What one converted layer keeps for its binary inference: packed kernel, plans."""

    def __init__(self):
        self.kernel_bits = None       # packed on the first inference after a weight change
        self.plans = {}
        self.fold = None              # the BatchNormalization folded into this layer's output
        self.bounds = None            # its (2, F) thresholds, made with the kernel bits

    def invalidate(self):
        self.kernel_bits = None
        self.bounds = None


def binary_reason(layer):
    """Why `layer` cannot run binary (a string), or None when it can."""
    if not getattr(layer, "supports_binary_inference", False):
        return "not a QuantConv2D or QuantDense"
    for role in ("input_quantizer", "kernel_quantizer"):
        quantizer = getattr(layer, role)
        if quantizer is None or quantizer.op not in SIGN_QUANTIZERS:
            return f"its {role} is not a sign quantizer ({SIGN_QUANTIZERS})"
    if getattr(layer, "groups", 1) != 1:
        return "grouped convolution"
    if getattr(layer, "pad_values", 0.0) not in (0.0, 1.0):
        return f"pad_values={layer.pad_values} (0 or 1 only)"
    if layer._dtype_policy is not None:
        return "a mixed-precision dtype policy"
    return None


def _layers(model):
    for layer in model.layers:
        if isinstance(layer, Model) or hasattr(layer, "graph") and hasattr(layer, "layers"):
            yield from _layers(layer)
        else:
            yield layer


def convert(model, verbose=False, fold_batchnorm=True):
    """Switch binary inference on for every eligible layer of `model` (in place); returns the
    model. `verbose` prints which layers run binary and why the others do not. fold_batchnorm:
    fold each BatchNormalization between two binary layers into an integer threshold (the
    chains are listed in model.folded_batchnorms). After set_weights / load_weights, convert
    again (the packed kernels and thresholds are made on the first prediction)."""
    converted = []
    for layer in _layers(model):
        reason = binary_reason(layer)
        if reason is None:
            layer._binary_state = BinaryLayerState()
            converted.append(layer.name)
        elif verbose and hasattr(layer, "input_quantizer"):
            print(f"{layer.name}: float ({reason})")
    model.binary_layers = converted
    model.folded_batchnorms = threshold_fusion.fuse(model) if fold_batchnorm else []
    if verbose:
        print(f"binary inference: {', '.join(converted) or 'no layer'}")
        for chain in model.folded_batchnorms:
            print("folded into a threshold: " + " -> ".join(chain))
    return model


def unpacked_shape(layer, x):
    """The (..., C) shape of the activations `x` stands for: x itself, or packed bits
    (..., ceil(C / 32)) from a folded layer before, C being what the kernel reads."""
    shape = tuple(layer.backend.shape(x))
    if threshold_fusion.is_packed(x):
        return shape[:-1] + (layer.kernel.shape[-2],)
    return shape


def binary_forward(layer, call, x, kernel, plan, pad_value):
    """The layer's preactivation on the binary ops: x (N, H, W, C) float or already packed
    bits (N, H, W, ceil(C / 32)), kernel the (kh, kw, C, F) latent weight; buffers are those of
    the layer's call `call`. Returns z (N, OH, OW, F) float, or, where a BatchNormalization is
    folded into this layer, the next layer's packed input bits (N, OH, OW, ceil(F / 32))."""
    b = layer.backend
    state = layer._binary_state
    words = -(-plan.c // 32)
    if state.kernel_bits is None or state.kernel_bits[0] is not b:
        bits = b.empty((plan.kh * plan.kw * words, plan.oc), "int32")
        b.binary_pack_kernel(bits, kernel)
        state.kernel_bits = (b, bits)
        state.bounds = None
        if state.fold is not None:
            state.bounds = threshold_fusion.threshold_bounds(layer, plan.kh * plan.kw * plan.c)
    if threshold_fusion.is_packed(x):
        bits = b.reshape(x, (plan.n, plan.h, plan.w, words))
    else:
        bits = call.buffer("binary_input", (plan.n, plan.h, plan.w, words), "int32")
        b.binary_pack_input(bits, x)
    z = call.buffer("z", plan.out_shape)
    folded = state.bounds is not None
    b.binary_conv2d_forward(z, bits, state.kernel_bits[1],
                            layer.bias.value if layer.use_bias and not folded else None, plan, pad_value)
    if not folded:
        return z
    out = call.buffer("folded_bits", plan.out_shape[:-1] + (-(-plan.oc // 32),), "int32")
    b.binary_pack_thresholds(out, z, state.bounds)
    return out


def binary_plan(layer, in_shape, kernel_shape, strides, padding, dilation):
    state = layer._binary_state
    key = (in_shape, id(layer.backend))
    plan = state.plans.get(key)
    if plan is None:
        if len(state.plans) >= 8:       # batch sizes come and go
            state.plans.clear()
        plan = state.plans[key] = layer.backend.conv2d_plan(in_shape, kernel_shape, strides, padding, dilation, 1)
    return plan


__all__ = ["convert"]
