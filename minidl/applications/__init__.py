"""Keras's image classification architectures (keras.applications), built layer for layer with
Keras's layer names and weight counts. weights=None builds random initial weights;
weights=path loads a weights file (Keras's published .h5 files or one minidl wrote);
weights="imagenet", the Keras default, reads Keras's published file from Keras's cache folder
($KERAS_HOME/models or ~/.keras/models): minidl downloads nothing, a missing file is an error
naming the file and the folder."""

from . import efficientnet, imagenet_utils, mobilenet_v2, resnet, resnet50, vgg16
from .efficientnet import EfficientNetB0
from .mobilenet_v2 import MobileNetV2
from .resnet import ResNet50, ResNet101, ResNet152
from .vgg16 import VGG16

__all__ = ["EfficientNetB0", "MobileNetV2", "ResNet50", "ResNet101", "ResNet152", "VGG16",
           "efficientnet", "imagenet_utils", "mobilenet_v2", "resnet", "resnet50", "vgg16"]
