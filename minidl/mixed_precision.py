"""keras.mixed_precision's API: dtype policies, the global policy, LossScaleOptimizer.

    minidl.mixed_precision.set_global_policy("mixed_bfloat16")   # layers made after this
    layers.Dense(10, dtype="mixed_bfloat16")                       # or one layer at a time

A policy names a compute dtype and a variable dtype. minidl's variables are float32 under
every policy (the master weights; optimizer state too), so the policies are "float32",
"mixed_bfloat16" and "mixed_float16". Under a mixed policy Conv2D and Dense pass
precision="bfloat16" ("float16") to their backend's gemm and conv ops, which compute as a bf16
(fp16) kernel with float32 accumulation does: both operands of each product rounded to that
precision, round to nearest even, the sums in float32. Under mixed_bfloat16 that holds for the
forward pass (input and kernel), the input gradient (dL/doutput and kernel) and the kernel
gradient (dL/doutput and input), as Keras computes them in the compute dtype; under
mixed_float16 for the forward pass only (the backward passes stay float32; a
LossScaleOptimizer, optimizers/loss_scale.py, scales the loss dynamically as Keras does and
skips steps whose gradients are not finite). The bias gradient, Softmax, the losses, BatchNormalization's
statistics, every other layer and the optimizer updates stay float32.

What runs where (info() says it for the active backend):
- cpu backend, mixed_bfloat16, a CPU with AMX (Intel Sapphire Rapids and later, Linux granting
  the tile permission, MINIDL_AMX not 0): native kernels, csrc/gemm_bf16*.c and conv_bf16.c.
  The operands are rounded while they are packed into the tiles' layouts and TDPBF16PS
  multiplies them; grouped convolutions excepted (emulated).
- everywhere else (no AMX, mixed_float16, the numpy and opencl backends): an emulation. The
  operands are rounded into float32 buffers, then the float32 kernels run, so it is slower
  than float32, never faster; the first layer that computes under it warns once.
Activations are stored in float32 between layers on every backend. The policy of each layer is
saved in the model's config (each layer's "dtype", in Keras 3's form, float32 included) and
restored with the model whatever the global policy is then; a layer config without it (older
files) gets the global policy.
"""

import warnings

from .optimizers.loss_scale import LossScaleOptimizer  # noqa: F401  (Keras's second path)

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


_warned = set()


def _cpu_has_avx512_bf16():
    try:
        from ._cpu_kernels import lib
    except ImportError:
        return False
    return bool(lib.minidl_cpu_has_avx512_bf16())


def native_kernels(backend, precision):
    """Whether `backend` computes `precision` with native low-precision kernels (not rounding
    float32 operands): the cpu backend's AMX bf16 kernels."""
    return precision == "bfloat16" and str(backend.info().get("bf16", "")).startswith("amx")


def info(backend=None):
    """Which kernels a mixed policy runs on `backend` (the active one by default)."""
    from .backends import get_backend
    backend = backend or get_backend()
    precision = global_policy().precision or "bfloat16"
    native = native_kernels(backend, precision)
    compute = ("amx: conv / dense operands rounded to bfloat16 while packed into AMX tiles, "
               "TDPBF16PS with float32 accumulation" if native else
               "emulated: conv / dense operands rounded to bfloat16 or float16 (round to nearest "
               "even) in float32 tensors, then float32 kernels with float32 accumulation")
    return {"global_policy": global_policy().name, "backend": backend.name, "compute": compute,
            "kernels": "amx" if native else "emulated", "native_bf16_kernel": native,
            "cpu_has_avx512_bf16": _cpu_has_avx512_bf16(),
            "amx": str(backend.info().get("amx", "amx: not used by this backend"))}


def _warn_once(policy, backend):
    key = (policy.name, backend.name)
    if key in _warned:
        return
    _warned.add(key)
    if native_kernels(backend, policy.precision):
        return
    why = ("this CPU has no AMX (or it is switched off)" if backend.name == "cpu"
           and policy.precision == "bfloat16" else "minidl has no native low-precision kernel for it here")
    warnings.warn(f"{policy.name} on the {backend.name} backend: {why}, so Conv2D and Dense round "
                  f"their operands to {policy.precision} and compute in float32 (an emulation); "
                  f"expect it to be slower than float32", RuntimeWarning, stacklevel=4)


def backward_precision(precision):
    """The precision of a layer's backward products: bfloat16's (float32's exponent range, so
    dL/doutput cannot underflow), or None (float32) under mixed_float16: float16 backward
    products are not implemented (LossScaleOptimizer scales the loss, but the products stay
    float32)."""
    return precision if precision == "bfloat16" else None


def compute_precision(layer):
    """What a Conv2D or Dense passes as its gemm / conv ops' precision: None under float32,
    else its policy's "bfloat16" / "float16" (warning once where that is an emulation)."""
    policy = layer._dtype_policy
    if policy is None:
        return None
    _warn_once(policy, layer.backend)
    return policy.precision


__all__ = ["DTypePolicy", "LossScaleOptimizer", "POLICIES", "Policy", "dtype_policy", "global_policy",
           "info", "set_dtype_policy", "set_global_policy"]
