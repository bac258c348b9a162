"""Fast binary inference: lq.convert(model) makes every QuantConv2D and QuantDense whose input
and kernel are both larq signs predict with the backend's bit-packed xnor-popcount ops.

The kernel's sign bits are packed once (again after any training step changed the latent
weights), the input's per batch; the convolution gives the exact integer dot products of the
+-1 values, so predictions equal the float path's up to float rounding of the sums. larq's
padding conventions hold: pad_values=1 pads with +1, the default 0 leaves padding out.
Training (fit, train_on_batch) always runs the float path with its straight-through gradients.
"""

from ..models.model import Model

SIGN_QUANTIZERS = ("ste_sign", "approx_sign", "swish_sign")   # forward: larq.math.sign


class BinaryLayerState:
    """What one converted layer keeps for its binary inference: packed kernel, plans."""

    def __init__(self):
        self.kernel_bits = None       # packed on the first inference after a weight change
        self.plans = {}

    def invalidate(self):
        self.kernel_bits = None


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


def convert(model, verbose=False):
    """Switch binary inference on for every eligible layer of `model` (in place); returns the
    model. `verbose` prints which layers run binary and why the others do not."""
    converted = []
    for layer in _layers(model):
        reason = binary_reason(layer)
        if reason is None:
            layer._binary_state = BinaryLayerState()
            converted.append(layer.name)
        elif verbose and hasattr(layer, "input_quantizer"):
            print(f"{layer.name}: float ({reason})")
    if verbose:
        print(f"binary inference: {', '.join(converted) or 'no layer'}")
    model.binary_layers = converted
    return model


def binary_forward(layer, call, x, kernel, plan, pad_value):
    """out = the layer's preactivation on the binary ops: x (N, H, W, C) float, kernel the
    (kh, kw, C, F) latent weight; buffers are those of the layer's call `call`."""
    b = layer.backend
    state = layer._binary_state
    if state.kernel_bits is None or state.kernel_bits[0] is not b:
        words = -(-plan.c // 32)
        bits = b.empty((plan.kh * plan.kw * words, plan.oc), "int32")
        b.binary_pack_kernel(bits, kernel)
        state.kernel_bits = (b, bits)
    bits = call.buffer("binary_input", (plan.n, plan.h, plan.w, -(-plan.c // 32)), "int32")
    b.binary_pack_input(bits, x)
    z = call.buffer("z", plan.out_shape)
    b.binary_conv2d_forward(z, bits, state.kernel_bits[1], layer.bias.value if layer.use_bias else None,
                            plan, pad_value)
    return z


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
