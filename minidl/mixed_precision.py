"""keras.mixed_precision's API: dtype policies, the global policy, LossScaleOptimizer.

    minidl.mixed_precision.set_global_policy("mixed_bfloat16")   # layers made after this
    layers.Dense(10, dtype="mixed_bfloat16")                       # or one layer at a time

A policy names a compute dtype and a variable dtype. minidl's variables are float32 under
every policy (the master weights; optimizer state too), so the policies are "float32",
"mixed_bfloat16" and "mixed_float16". Under a mixed policy Conv2D and Dense compute as a
bf16 (fp16) kernel with float32 accumulation would: both operands (the layer's input and its
kernel) are rounded to bfloat16 (float16), round to nearest even, and the convolution or
matrix product of the rounded values runs in float32 with float32 accumulation; the backward
passes use the same rounded operands, and dL/doutput stays float32. Softmax, the losses,
BatchNormalization's statistics, every other layer and the optimizer updates run in float32.

What this is, honestly: on every backend today the rounding is an emulation (an extra pass
over each operand, then the float32 kernels), so a mixed policy is slower than float32, never
faster; minidl has no native vdpbf16ps (AVX512_BF16) kernel yet, and activations are stored
in float32 between layers. The first layer that computes under a mixed policy warns once;
info() says which path runs. The policy of each layer is saved in the model's config (each
layer's "dtype", in Keras 3's form, float32 included) and restored with the model whatever the
global policy is then; a layer config without it (older files) gets the global policy.
"""

import warnings

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")
_PRECISIONS = {"float32": None, "mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}


class DTypePolicy:
    """A named dtype policy (keras.mixed_precision.DTypePolicy, also exported as Policy)."""

    def __init__(self, name="float32"):
        if isinstance(name, DTypePolicy):
            name = name.name
        elif isinstance(name, dict) and isinstance(name.get("config"), dict):
            name = name["config"].get("name")   # Keras 3's serialized {"class_name": "DTypePolicy", ...}
        if name is None:
            name = "float32"
        if not isinstance(name, str) or name not in POLICIES:
            hint = (" (minidl keeps variables in float32: use 'mixed_" + name + "')"
                    if name in ("bfloat16", "float16") else "")
            raise ValueError(f"DTypePolicy: name must be one of {', '.join(POLICIES)}, got "
                             f"{name!r}{hint}")
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        """The dtype conv and dense layers compute in: "float32", "bfloat16" or "float16"."""
        return _PRECISIONS[self._name] or "float32"

    @property
    def variable_dtype(self):
        return "float32"

    @property
    def precision(self):
        """What the layer's operands are rounded to: "bfloat16", "float16" or None (float32)."""
        return _PRECISIONS[self._name]

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy


def serialize(policy):
    """A layer config's "dtype" entry of `policy`, in Keras 3's form."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": policy.get_config(),
            "registered_name": None}
_global = [DTypePolicy("float32")]


def set_global_policy(policy):
    """The policy of every layer made from now on without its own dtype= (a name or a
    DTypePolicy; None restores "float32")."""
    _global[0] = DTypePolicy(policy)


def global_policy():
    return _global[0]


# Keras 3's newer names for the same two functions
set_dtype_policy, dtype_policy = set_global_policy, global_policy


def layer_policy(dtype):
    """The policy a layer made with dtype= (None: the global one) stores: None for float32 (the
    layer then runs exactly as without a policy), else the DTypePolicy."""
    policy = global_policy() if dtype is None else DTypePolicy(dtype)
    return None if policy.precision is None else policy


def LossScaleOptimizer(inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000,
                       **kwargs):
    """keras.mixed_precision.LossScaleOptimizer, for API compatibility: returns inner_optimizer.

    Loss scaling protects float16 gradients from underflow. In minidl every gradient stays
    float32 (only the forward operands of conv and dense are rounded), under mixed_bfloat16
    and mixed_float16 alike, so there is nothing to scale: the optimizer is used as it is."""
    from .optimizers import Optimizer
    if not isinstance(inner_optimizer, Optimizer):
        raise TypeError(f"LossScaleOptimizer: inner_optimizer must be a minidl Optimizer, got "
                        f"{type(inner_optimizer).__name__}")
    for argument, value in (("initial_scale", initial_scale), ("dynamic_growth_steps", dynamic_growth_steps)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"LossScaleOptimizer: {argument} must be a positive number, got {value!r}")
    return inner_optimizer


_warned = set()


def _cpu_has_avx512_bf16():
    try:
        from ._cpu_kernels import lib
    except ImportError:
        return False
    return bool(lib.minidl_cpu_has_avx512_bf16())


def info(backend=None):
    """Which path a mixed policy runs on `backend` (the active one by default)."""
    from .backends import get_backend
    backend = backend or get_backend()
    return {"global_policy": global_policy().name, "backend": backend.name,
            "compute": "emulated: conv / dense operands rounded to bfloat16 or float16 (round to "
                       "nearest even) in float32 tensors, then float32 kernels with float32 "
                       "accumulation",
            "native_bf16_kernel": False, "cpu_has_avx512_bf16": _cpu_has_avx512_bf16()}


def _warn_once(policy, backend):
    key = (policy.name, backend.name)
    if key in _warned:
        return
    _warned.add(key)
    why = ("this CPU has no AVX512_BF16" if backend.name == "cpu" and not _cpu_has_avx512_bf16()
           else "minidl has no native low-precision kernel for it yet")
    warnings.warn(f"{policy.name} on the {backend.name} backend: {why}, so Conv2D and Dense round "
                  f"their operands to {policy.precision} and compute in float32 (an emulation); "
                  f"expect it to be slower than float32", RuntimeWarning, stacklevel=4)


def compute_operands(layer, x, kernel):
    """(x, kernel) as a Conv2D or Dense computes with them under its policy: themselves under
    float32, else copies rounded to the policy's precision (in the layer's buffers)."""
    policy = layer._dtype_policy
    if policy is None:
        return x, kernel
    b = layer.backend
    _warn_once(policy, b)
    rx = layer.buffer("x_rounded", b.shape(x))
    b.round_to_precision(rx, x, policy.precision)
    rk = layer.buffer("kernel_rounded", b.shape(kernel))
    b.round_to_precision(rk, kernel, policy.precision)
    return rx, rk


__all__ = ["DTypePolicy", "LossScaleOptimizer", "POLICIES", "Policy", "dtype_policy", "global_policy",
           "info", "set_dtype_policy", "set_global_policy"]
