"""VGG19 (Simonyan and Zisserman 2014), as keras.applications.vgg19 builds it: VGG16's network
with four convolutions in each of the last three blocks."""

from . import imagenet_utils
from .imagenet_utils import decode_predictions
from .vgg16 import VGG

BLOCKS = ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4))   # (filters, convolutions)


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
          classes=1000, classifier_activation="softmax", name="vgg19"):
    """keras.applications.VGG19: 143.7M weights at 224x224 and 1000 classes. weights: None,
    "imagenet" (Keras's published file, from Keras's cache folder) or a weights file."""
    return VGG(BLOCKS, "vgg19", include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation, name)


def preprocess_input(x, data_format=None):
    """Keras's 'caffe' preprocessing: RGB -> BGR, minus ImageNet's mean pixel (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


__all__ = ["VGG19", "preprocess_input", "decode_predictions"]
