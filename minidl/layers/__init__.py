"""Keras-style layers (channels_last)."""

from .base import Input, InputLayer, KerasTensor, Layer
from .conv import Conv2D, ZeroPadding2D
from .core import Activation, Dense, Dropout, Flatten, LeakyReLU, ReLU, Reshape
from .merge import Add, Concatenate
from .normalization import BatchNormalization
from .pooling import AveragePooling2D, GlobalAveragePooling2D, MaxPooling2D

# Keras aliases
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
GlobalAvgPool2D = GlobalAveragePooling2D

LAYER_CLASSES = {cls.__name__: cls for cls in (
    InputLayer, Dense, Conv2D, ZeroPadding2D, Activation, Dropout, Flatten, LeakyReLU, ReLU,
    Reshape, Add, Concatenate, BatchNormalization, AveragePooling2D, GlobalAveragePooling2D,
    MaxPooling2D)}


def deserialize(class_name, config):
    """A layer from its class name and get_config() dict."""
    if class_name not in LAYER_CLASSES:
        raise ValueError(f"unknown layer class {class_name!r}; known: {sorted(LAYER_CLASSES)}")
    return LAYER_CLASSES[class_name].from_config(config)


__all__ = sorted(LAYER_CLASSES) + ["Input", "KerasTensor", "Layer", "MaxPool2D", "AvgPool2D",
                                   "GlobalAvgPool2D", "deserialize"]
