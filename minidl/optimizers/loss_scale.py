"""keras.optimizers.LossScaleOptimizer (also keras.mixed_precision.LossScaleOptimizer): dynamic
loss scaling, as Keras 3 does it.

model.fit multiplies the loss by the current scale before backward (the loss gradient starts
at scale * dL/doutput, regularization penalties included), so every gradient is scaled; then
apply_gradients checks them on the backend (all_finite, one host read per step):
- all finite: they are divided by the scale and the inner optimizer steps; after
  dynamic_growth_steps finite steps in a row the scale doubles (the counter restarts);
- any inf or nan: no step (the inner optimizer's iterations do not move), the scale halves
  and the counter restarts.
The scale and the counter are optimizer state ("loss_scale/dynamic_scale",
"loss_scale/step_counter", Keras's variable names), saved in model files. A train_step of
your own scales its loss with scale_loss(loss) and passes the scaled gradients to apply().

Scaling by a power of two is exact in float32, so with the default scales the unscaled
gradients are those of the unscaled loss, bit for bit, until one overflows. minidl's
backward passes run in float32 (bfloat16 operands under mixed_bfloat16), so here the scale
guards against overflow and non-finite steps rather than float16 underflow.
"""

import numbers

import numpy as np

from .wrapping import OptimizerWrapper
from .registry_hooks import REGISTRY

# the base optimizer arguments Keras accepts (with their defaults only) for old configs
_KERAS_BASE_DEFAULTS = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
                        "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                        "loss_scale_factor": None, "gradient_accumulation_steps": None}


class LossScaleOptimizer(OptimizerWrapper):
    """LossScaleOptimizer(inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000)."""

    state_prefix = "loss_scale"

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None,
                 **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply "
                             "set `loss_scale_factor` directly on the `inner_optimizer`.")
        for argument, default in _KERAS_BASE_DEFAULTS.items():
            if argument in kwargs and kwargs.pop(argument) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{argument}`. Instead, set "
                                 f"`{argument}` on the `inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        super().__init__(inner_optimizer, name)
        if isinstance(initial_scale, bool) or not isinstance(initial_scale, numbers.Real) \
                or not np.isfinite(initial_scale) or not initial_scale > 0:
            raise ValueError(f"LossScaleOptimizer: initial_scale must be a positive number, got "
                             f"{initial_scale!r}")
        if isinstance(dynamic_growth_steps, bool) or not isinstance(dynamic_growth_steps, numbers.Integral) \
                or dynamic_growth_steps < 1:
            raise ValueError(f"LossScaleOptimizer: dynamic_growth_steps must be an integer >= 1, got "
                             f"{dynamic_growth_steps!r}")
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.dynamic_scale = float(np.float32(initial_scale))   # Keras's float32 variable
        self.step_counter = 0

    def _build_own(self, backend, weights):
        self._finite, self._finite_one = backend.zeros((1,)), backend.zeros((1,))

    @property
    def loss_scale(self):
        """What model.fit multiplies the loss by before backward: the current dynamic scale."""
        return self.dynamic_scale

    def scale_loss(self, loss):
        """loss times the current scale (the initial one before build), as Keras."""
        return loss * (self.dynamic_scale if self.built else self.initial_scale)

    def check_finite(self, grads):
        """Whether every element of every gradient is finite (on the backend, one host read)."""
        backend = self._backend = self.inner_optimizer._backend
        if getattr(self, "_finite", None) is None:   # wrapped around an optimizer already built
            self._build_own(backend, ())
        grads = [g for g in grads if g is not None]
        if not grads:
            return True
        backend.all_finite(self._finite, grads[0])
        for g in grads[1:]:
            backend.all_finite(self._finite_one, g)
            backend.multiply(self._finite, self._finite, self._finite_one)
        return bool(backend.to_numpy(self._finite)[0] == 1.0)

    def apply_gradients(self, grads_and_vars):
        if not self.built:
            raise RuntimeError(f"LossScaleOptimizer '{self.name}': call build(backend, weights) "
                               f"before apply_gradients")
        grads_and_vars = list(grads_and_vars)
        if not self.check_finite([g for g, _ in grads_and_vars]):
            self.step_counter = 0
            self.dynamic_scale *= 0.5
            return
        unscale = 1.0 / self.dynamic_scale
        for grad, _ in grads_and_vars:
            self._backend.axpby(grad, unscale, grad, 0.0, grad)
        self.inner_optimizer.apply_gradients(grads_and_vars)
        if self.step_counter == self.dynamic_growth_steps - 1:
            self.step_counter = 0
            self.dynamic_scale *= 2.0
        else:
            self.step_counter += 1

    # ------------------------------------------------------------- state
    def _own_shapes(self):
        return {"dynamic_scale": (), "step_counter": ()}

    def _get_own(self, backend):
        return {"dynamic_scale": np.array(self.dynamic_scale, np.float32),
                "step_counter": np.array(self.step_counter, np.int64)}

    def _set_own(self, backend, arrays):
        scale, counter = np.asarray(arrays["dynamic_scale"]), np.asarray(arrays["step_counter"])
        if scale.size != 1 or not np.isfinite(scale).all() or not float(scale.reshape(())) > 0:
            raise ValueError(f"LossScaleOptimizer '{self.name}'.set_state: dynamic_scale must be one "
                             f"positive number, got {scale!r}")
        if counter.size != 1 or counter.dtype.kind not in "iu" or int(counter.reshape(())) < 0:
            raise ValueError(f"LossScaleOptimizer '{self.name}'.set_state: step_counter must be one "
                             f"non-negative integer, got {counter!r}")
        self.dynamic_scale, self.step_counter = float(scale.reshape(())), int(counter.reshape(()))

    def _check_own(self, owner, own, expected):
        for key in expected:   # scalars: the values are checked by _set_own
            if np.asarray(own[key]).shape not in ((), (1,)):
                raise ValueError(f"{owner}: state loss_scale/{key} must be one number, got shape "
                                 f"{np.asarray(own[key]).shape}")

    # ------------------------------------------------------------ config
    def get_config(self):
        return {"name": self.name, "inner_optimizer": REGISTRY["serialize"](self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["inner_optimizer"] = cls._inner_from_config(config, "inner_optimizer")
        return cls(**config)
