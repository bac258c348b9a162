"""larq.constraints: WeightClip keeps latent weights in [-clip_value, clip_value], so that a
binary quantizer's clipped straight-through gradient never starves them."""

from ..constraints import Constraint
from ..custom_objects import get_custom_objects
import numpy as np


class WeightClip(Constraint):
    """w = clip(w, -clip_value, clip_value) after every optimizer step (the backend's clip_by_value)."""

    def __init__(self, clip_value=1):
        if isinstance(clip_value, bool) or not isinstance(clip_value, (int, float)) or not clip_value > 0:
            raise ValueError(f"WeightClip: clip_value must be a number > 0, got {clip_value!r}")
        self.clip_value = clip_value

    def __call__(self, w):
        return np.clip(np.asarray(w, dtype=np.float32), -self.clip_value, self.clip_value)

    def apply(self, backend, w):
        backend.clip_by_value(w, float(self.clip_value))

    def get_config(self):
        return {"clip_value": self.clip_value}


weight_clip = WeightClip
get_custom_objects()["WeightClip"] = WeightClip


def get(identifier):
    """larq's alias "weight_clip" (WeightClip(1)), else minidl.constraints.get."""
    from .. import constraints
    if identifier == "weight_clip":
        return WeightClip()
    if isinstance(identifier, dict) and identifier.get("class_name") == "WeightClip":
        return WeightClip(**identifier.get("config", {}))
    return constraints.get(identifier)


__all__ = ["WeightClip", "weight_clip"]
