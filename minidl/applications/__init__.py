"""Keras's image classification architectures (keras.applications), built layer for layer with
Keras's layer names and weight counts. minidl ships no pretrained weights: build with
weights=None and train, or load a weights file written by minidl (weights=path or
model.load_weights(path)). weights="imagenet", the Keras default, raises an error saying so."""

from . import efficientnet, imagenet_utils, mobilenet_v2, resnet, resnet50, vgg16
from .efficientnet import EfficientNetB0
from .mobilenet_v2 import MobileNetV2
from .resnet import ResNet50, ResNet101, ResNet152
from .vgg16 import VGG16

__all__ = ["EfficientNetB0", "MobileNetV2", "ResNet50", "ResNet101", "ResNet152", "VGG16",
           "efficientnet", "imagenet_utils", "mobilenet_v2", "resnet", "resnet50", "vgg16"]
