"""Keras's image classification architectures (keras.applications), built layer for layer with
Keras's layer names and weight counts. weights=None builds random initial weights;
weights=path loads a weights file (Keras's published .h5 files or one minidl wrote);
weights="imagenet", the Keras default, reads Keras's published file from Keras's cache folder
($KERAS_HOME/models or ~/.keras/models): minidl downloads nothing, a missing file is an error
naming the file and the folder."""

from . import (convnext, densenet, efficientnet, efficientnet_v2, imagenet_utils,
               inception_resnet_v2, inception_v3, mobilenet, mobilenet_v2, mobilenet_v3, nasnet,
               resnet, resnet50, resnet_v2, vgg16, vgg19, xception)
from .convnext import ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny, ConvNeXtXLarge
from .densenet import DenseNet121, DenseNet169, DenseNet201
from .efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3,
                           EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7)
from .efficientnet_v2 import (EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2,
                              EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M, EfficientNetV2S)
from .inception_resnet_v2 import InceptionResNetV2
from .inception_v3 import InceptionV3
from .mobilenet import MobileNet
from .mobilenet_v2 import MobileNetV2
from .mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from .nasnet import NASNetLarge, NASNetMobile
from .resnet import ResNet50, ResNet101, ResNet152
from .resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2
from .vgg16 import VGG16
from .vgg19 import VGG19
from .xception import Xception

__all__ = ["ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge",
           "DenseNet121", "DenseNet169", "DenseNet201",
           "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3",
           "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7",
           "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
           "EfficientNetV2L", "EfficientNetV2M", "EfficientNetV2S", "InceptionResNetV2",
           "InceptionV3", "MobileNet", "MobileNetV2", "MobileNetV3Large", "MobileNetV3Small",
           "NASNetLarge", "NASNetMobile", "ResNet50", "ResNet101", "ResNet152", "ResNet50V2",
           "ResNet101V2", "ResNet152V2", "VGG16", "VGG19", "Xception",
           "convnext", "densenet", "efficientnet", "efficientnet_v2", "imagenet_utils",
           "inception_resnet_v2", "inception_v3", "mobilenet", "mobilenet_v2", "mobilenet_v3",
           "nasnet", "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19", "xception"]
