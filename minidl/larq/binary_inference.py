"""Fast binary inference: lq.convert(model) makes every QuantConv2D and QuantDense whose input
is a larq sign and whose kernel is a sign or ternary (ste_tern, as two bit-planes) predict with
the backend's bit-packed xnor-popcount ops.

The kernel's sign bits are packed once (again after any training step changed the latent
weights), the input's per batch; the convolution gives the exact integer dot products of the
+-1 values, so predictions equal the float path's up to float rounding of the sums. larq's
padding conventions hold: pad_values=1 pads with +1, the default 0 leaves padding out.
Training (fit, train_on_batch) always runs the float path with its straight-through gradients.
A BatchNormalization between two binary layers (through max poolings, or a Flatten) is folded
into an integer threshold (threshold_fusion.py) unless convert(fold_batchnorm=False), and a
MaxPooling2D after a binary convolution is computed by it (pool_fusion.py).
"""

from ..models.model import Model
from . import pool_fusion, threshold_fusion

SIGN_QUANTIZERS = ("ste_sign", "approx_sign", "swish_sign")   # forward: larq.math.sign
TERNARY_QUANTIZERS = ("ste_tern",)     # kernels in {-1, 0, +1}: two bit-planes (binary_forward)


class BinaryLayerState:
    """What one converted layer keeps for its binary inference: packed kernel, plans."""

    def __init__(self):
        self.kernel_bits = None       # packed on the first inference after a weight change
        self.plans = {}
        self.pool_layer = None        # the MaxPooling2D fused into this layer (pool_fusion.py)
        self.pooled = None            # the pooled tensor of the last prediction, P hands it on

    def invalidate(self):
        self.kernel_bits = None


def binary_reason(layer):
    """Why `layer` cannot run binary (a string), or None when it can."""
    if not getattr(layer, "supports_binary_inference", False):
        return "not a QuantConv2D or QuantDense"
    quantizer = layer.input_quantizer
    if quantizer is None or quantizer.op not in SIGN_QUANTIZERS:
        return f"its input_quantizer is not a sign quantizer ({SIGN_QUANTIZERS})"
    quantizer = layer.kernel_quantizer
    if quantizer is None or quantizer.op not in SIGN_QUANTIZERS + TERNARY_QUANTIZERS:
        return f"its kernel_quantizer is not a sign or ternary quantizer ({SIGN_QUANTIZERS + TERNARY_QUANTIZERS})"
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
    threshold_fusion.unfold(model)
    pool_fusion.unfuse(_layers(model))
    model.folded_batchnorms = threshold_fusion.fuse(model) if fold_batchnorm else []
    model.fused_poolings = pool_fusion.fuse(model, TERNARY_QUANTIZERS)
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


def binary_forward(layer, call, x, kernel, plan, pad_value, pool=None):
    """z (N, OH, OW, F), the layer's preactivation on the binary ops: x (N, H, W, C) float or
    already packed bits (N, H, W, ceil(C / 32)) from a folded BatchNormalization, kernel the
    (kh, kw, C, F) latent weight; buffers are those of the layer's call `call`. pool: the pool
    plan of a fused MaxPooling2D (pool_fusion.py; sign kernels only), z then its maxima."""
    b = layer.backend
    state = layer._binary_state
    words = -(-plan.c // 32)
    if state.kernel_bits is None or state.kernel_bits[0] is not b:
        state.kernel_bits = (b, _kernel_planes(layer, call, kernel, (plan.kh * plan.kw * words, plan.oc)))
    if threshold_fusion.is_packed(x):
        bits = b.reshape(x, (plan.n, plan.h, plan.w, words))
    else:
        bits = call.buffer("binary_input", (plan.n, plan.h, plan.w, words), "int32")
        b.binary_pack_input(bits, x)
    bias = layer.bias.value if layer.use_bias else None
    planes = state.kernel_bits[1]
    if pool is not None:
        z = call.buffer("z_pooled", pool.out_shape)
        b.binary_conv2d_forward(z, bits, planes[0], bias, plan, pad_value, pool)
        return z
    z = call.buffer("z", plan.out_shape)
    if len(planes) == 1:
        b.binary_conv2d_forward(z, bits, planes[0], bias, plan, pad_value)
    else:   # ternary: x . w = (x . a + x . b) / 2, exact (both sums are integers of one parity)
        half = call.buffer("z_plane", plan.out_shape)
        b.binary_conv2d_forward(z, bits, planes[0], None, plan, pad_value)
        b.binary_conv2d_forward(half, bits, planes[1], None, plan, pad_value)
        b.axpby(z, 0.5, z, 0.5, half)
        if bias is not None:
            b.bias_add(z, z, bias)
    return z


def _kernel_planes(layer, call, kernel, shape):
    """[bits] of a sign kernel, or the two bit-planes [a, b] of a ternary one (w in {-1, 0, +1},
    larq's ste_tern): a = w with 0 as +1, b = w with 0 as -1, so that w = (a + b) / 2 and each
    plane runs on the xnor-popcount kernels. A padding tap (pad_values 1, x = +1) gives
    a + b = 2 w too."""
    b = layer.backend
    quantizer = layer.kernel_quantizer
    if quantizer.op not in TERNARY_QUANTIZERS:
        bits = b.empty(shape, "int32")
        b.binary_pack_kernel(bits, kernel)
        return [bits]
    ternary, _ = quantizer.quantize(call, "kernel_ternary", kernel)    # {-1, 0, +1}
    shifted = call.buffer("kernel_shifted", b.shape(ternary))
    b.fill(shifted, -0.5)
    b.add(shifted, shifted, ternary)                                    # 0 -> -0.5: a -1 bit
    planes = [b.empty(shape, "int32"), b.empty(shape, "int32")]
    b.binary_pack_kernel(planes[0], ternary)                            # sign(0) = +1
    b.binary_pack_kernel(planes[1], shifted)
    return planes


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
