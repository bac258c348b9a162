"""keras.optimizers.schedules: the learning-rate schedules at Keras's path (they live in
minidl.schedules)."""

from ..schedules import (CosineDecay, CosineDecayRestarts, ExponentialDecay, InverseTimeDecay,  # noqa: F401
                         LearningRateSchedule, PiecewiseConstantDecay, PolynomialDecay, deserialize, get,
                         serialize)

__all__ = ["CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay", "LearningRateSchedule",
           "PiecewiseConstantDecay", "PolynomialDecay", "deserialize", "get", "serialize"]
