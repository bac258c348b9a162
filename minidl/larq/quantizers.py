"""larq's quantizers (larq.quantizers) with its names, defaults and string aliases.

A quantizer maps a tensor to a few levels in the forward pass and passes a straight-through
pseudo-gradient back. Each one here is a minidl layer (usable on its own, as larq's are Keras
layers) and is what the Quant* layers call on their input and kernel. The arithmetic is the
backend's quantize_forward / quantize_backward ops (minidl/backends/base.py); TWN's threshold
and DoReFa's weight range are reductions on the backend, so nothing leaves the device.
"""

import math

from ..config_objects import deserialize_object, serialize_object
from ..custom_objects import get_custom_objects
from ..layers.base import Layer
from .metrics import FlipRatio, check_names


class Quantizer(Layer):
    """Base class of larq's quantizers. `precision` (bits) is what lq.models.summary counts."""

    precision = None
    op = None                 # the backend's quantizer name (QUANTIZERS), None for NoOp
    needs_stat = None         # "sum" or "max" of |x| when the op reads one

    def __init__(self, metrics=None, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._custom_metrics = None
        self.set_metrics(metrics)

    def set_metrics(self, metrics):
        """larq's metrics=: ["flip_ratio"] makes self.flip_ratio, a FlipRatio named
        "flip_ratio/<name>" that the larq layers update with this quantizer's kernel in
        training (a Metric attribute: one of the model's metrics, in fit's logs)."""
        names = check_names(metrics, self.describe())
        self._custom_metrics = names or None
        if "flip_ratio" in names and getattr(self, "flip_ratio", None) is None:
            self.flip_ratio = FlipRatio(name=f"flip_ratio/{self.name}")

    def compute_output_shape(self, input_shape):
        return input_shape

    def forward_param(self):
        return 0.0

    def backward_param(self):
        return 0.0

    # ---------------------------------------------------- used by the Quant* layers
    def quantize(self, call, role, x):
        """(q, state): x quantized into the buffer `role` of the layer call `call` (x itself
        for NoOp); state is what quantize_gradient needs (x and the statistic)."""
        if self.op is None:
            return x, (x, None)
        b = call.backend
        shape = b.shape(x)
        stat = None
        if self.needs_stat is not None:
            flat = b.reshape(x, (math.prod(shape),))
            magnitude = call.buffer(role + "_abs", b.shape(flat))
            b.unary(magnitude, flat, "abs")
            stat = call.buffer(role + "_stat", (1,))
            b.reduce(stat, magnitude, self.needs_stat)
        q = call.buffer(role, shape)
        b.quantize_forward(q, x, self.op, self.forward_param(), stat)
        return q, (x, stat)

    def quantize_gradient(self, call, dq, state):
        """dL/dx from dL/dq, in place in dq (the straight-through estimator)."""
        if self.op is None:
            return dq
        x, stat = state
        call.backend.quantize_backward(dq, dq, x, self.op, self.backward_param(), stat)
        return dq

    # ---------------------------------------------------- as a layer of its own
    def forward(self, call, x, training):
        q, call.state = self.quantize(call, "q", x)
        return q

    def backward(self, call, dout):
        if self.op is None:
            return dout
        dx = call.buffer("dx", self.backend.shape(dout))
        self.backend.copy(dx, dout)
        return self.quantize_gradient(call, dx, call.state)

    def get_config(self):
        return dict(super().get_config(), metrics=None)


def _clip(value, owner):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{owner}: clip_value must be a number >= 0 or None, got {value!r}")
    return float(value)


class _ClippedQuantizer(Quantizer):
    """SteSign, SteHeaviside: the gradient passes where |x| <= clip_value (None: everywhere)."""

    def __init__(self, clip_value=1.0, **kwargs):
        super().__init__(**kwargs)
        self.clip_value = _clip(clip_value, self.describe())

    def backward_param(self):
        return math.inf if self.clip_value is None else self.clip_value

    def get_config(self):
        return dict(super().get_config(), clip_value=self.clip_value)


class NoOp(Quantizer):
    """q(x) = x: only marks a variable's precision (for Bop and lq.models.summary)."""

    def __init__(self, precision, **kwargs):
        super().__init__(**kwargs)
        if isinstance(precision, bool) or not isinstance(precision, int) or precision < 1:
            raise ValueError(f"{self.describe()}: precision must be a positive int, got {precision!r}")
        self.precision = precision

    def get_config(self):
        return dict(super().get_config(), precision=self.precision)


class SteSign(_ClippedQuantizer):
    """q(x) = -1 for x < 0, +1 for x >= 0; gradient 1 where |x| <= clip_value."""
    precision = 1
    op = "ste_sign"


class ApproxSign(Quantizer):
    """Sign forward; gradient 2 - 2|x| where |x| <= 1 (Bi-Real Net)."""
    precision = 1
    op = "approx_sign"


class SwishSign(Quantizer):
    """Sign forward; gradient beta (2 - beta x tanh(beta x / 2)) / (1 + cosh(beta x)) (BNN+)."""
    precision = 1
    op = "swish_sign"

    def __init__(self, beta=5.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta):
            raise ValueError(f"{self.describe()}: beta must be a finite number, got {beta!r}")
        self.beta = float(beta)

    def backward_param(self):
        return self.beta

    def get_config(self):
        return dict(super().get_config(), beta=self.beta)


class SteHeaviside(_ClippedQuantizer):
    """q(x) = 1 for x > 0, else 0; gradient 1 where |x| <= clip_value."""
    precision = 1
    op = "ste_heaviside"


class SteTern(_ClippedQuantizer):
    """q(x) = +1 above the threshold, 0 within it, -1 below; the threshold is threshold_value,
    or 0.7 * mean |x| (Ternary Weight Networks) with ternary_weight_networks=True."""
    precision = 2
    op = "ste_tern"

    def __init__(self, threshold_value=0.05, ternary_weight_networks=False, clip_value=1.0, **kwargs):
        super().__init__(clip_value=clip_value, **kwargs)
        if isinstance(threshold_value, bool) or not isinstance(threshold_value, (int, float)) \
                or not threshold_value >= 0:
            raise ValueError(f"{self.describe()}: threshold_value must be a number >= 0, "
                             f"got {threshold_value!r}")
        self.threshold_value = float(threshold_value)
        self.ternary_weight_networks = bool(ternary_weight_networks)
        self.needs_stat = "sum" if self.ternary_weight_networks else None

    def forward_param(self):
        return self.threshold_value

    def get_config(self):
        return dict(super().get_config(), threshold_value=self.threshold_value,
                    ternary_weight_networks=self.ternary_weight_networks)


class DoReFa(Quantizer):
    """k_bit uniform quantization of DoReFa-Net: activations clipped to [0, 1] then rounded to
    2^k_bit - 1 steps; weights squashed by tanh and scaled by max |tanh| onto [-1, 1]. The
    gradient is the identity through the rounding (and the clip's or tanh's own)."""

    def __init__(self, k_bit=2, mode="activations", **kwargs):
        super().__init__(**kwargs)
        if isinstance(k_bit, bool) or not isinstance(k_bit, int) or not 1 <= k_bit <= 24:
            raise ValueError(f"{self.describe()}: k_bit must be an int in [1, 24], got {k_bit!r}")
        if mode not in ("activations", "weights"):
            raise ValueError(f"Invalid DoReFa quantizer mode {mode}. Valid values are 'activations' "
                             f"and 'weights'.")
        self.precision = k_bit
        self.mode = mode
        self.op = "dorefa_" + mode
        self.needs_stat = "max" if mode == "weights" else None

    def forward_param(self):
        return float(2 ** self.precision - 1)

    def get_config(self):
        return dict(super().get_config(), k_bit=self.precision, mode=self.mode)


NoOpQuantizer = NoOp
DoReFaQuantizer = DoReFa

# larq's string aliases (utils.register_alias)
ALIASES = {"ste_sign": SteSign, "approx_sign": ApproxSign, "swish_sign": SwishSign,
           "ste_heaviside": SteHeaviside, "ste_tern": SteTern, "dorefa_quantizer": DoReFa}
CLASSES = {cls.__name__: cls for cls in (NoOp, SteSign, ApproxSign, SwishSign, SteHeaviside, SteTern,
                                          DoReFa)}
# larq registers its classes as Keras custom objects under their plain names
get_custom_objects().update(CLASSES)


def serialize(quantizer):
    """{"class_name", "config"} of a quantizer (None stays None)."""
    return serialize_object(quantizer, Quantizer, "quantizers")


def deserialize(config, custom_objects=None):
    return deserialize_object(config, CLASSES, Quantizer, "quantizers", custom_objects)


def get(identifier):
    """A quantizer from None, an instance, a larq name ("ste_sign", ...) or a serialize() dict."""
    if identifier is None or isinstance(identifier, Quantizer):
        return identifier
    if isinstance(identifier, str):
        cls = ALIASES.get(identifier) or CLASSES.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown quantizer {identifier!r}; known: {sorted(ALIASES)}")
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise TypeError(f"Could not interpret quantization function identifier: {identifier!r} (minidl "
                    f"needs a Quantizer: a plain callable has no backend ops or gradient)")


def get_kernel_quantizer(identifier):
    """As get, and a quantizer without metrics of its own takes those of the enclosing
    context.metrics_scope (larq's)."""
    quantizer = get(identifier)
    if isinstance(quantizer, Quantizer) and not quantizer._custom_metrics:
        from .context import get_training_metrics
        scoped = sorted(get_training_metrics())
        if scoped:
            quantizer.set_metrics(scoped)
    return quantizer


__all__ = ["ApproxSign", "DoReFa", "DoReFaQuantizer", "NoOp", "NoOpQuantizer", "Quantizer", "SteHeaviside",
           "SteSign", "SteTern", "SwishSign", "deserialize", "get", "get_kernel_quantizer", "serialize"]
